package dev.vended.storage;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A block of a {@link SeekableObjectInputStream} lent by the native side: the bytes of one read
 * kept in the network buffers they arrived in, seen through read-only direct {@link ByteBuffer}s
 * over that memory. A small read served from the block copies each byte once, from there into
 * the caller's array or buffer.
 *
 * <p>The memory is freed by {@link #release()} (or, for a block never released, by {@link
 * ObjectStore#CLEANER} once the block is unreachable). Copies may run on several threads at once
 * and may race with {@code release()} (a stream closed by another thread): each copy is counted
 * while it runs, a copy that starts after the release fails with {@link IOException}, and the
 * memory is freed when the last copy in progress ends, never under one.
 */
final class NativeBlock {

    /** A block of no bytes, owning nothing; released from the start (no copy may use it). */
    static final NativeBlock EMPTY = new NativeBlock();

    /** Set in {@link #users} once released: no new copy may start. */
    private static final int RELEASED = 1 << 30;

    /** The chunks, in order; {@code ends[i]} is the block offset right after chunk {@code i}. */
    private final ByteBuffer[] chunks;

    private final int[] ends;
    private final int length;
    private final Cleaner.Cleanable cleanable;
    /** Copies in progress, plus {@link #RELEASED} once released. */
    private final AtomicInteger users = new AtomicInteger();
    /** The chunk the last single-byte read used (a hint: any value is safe). */
    private int hint;

    private NativeBlock() {
        this.chunks = new ByteBuffer[0];
        this.ends = new int[0];
        this.length = 0;
        this.cleanable = () -> {};
        users.set(RELEASED);
    }

    private NativeBlock(long handle, ByteBuffer[] buffers) {
        this.chunks = new ByteBuffer[buffers.length];
        this.ends = new int[buffers.length];
        long total = 0;
        for (int i = 0; i < buffers.length; i++) {
            chunks[i] = buffers[i].asReadOnlyBuffer();
            total += buffers[i].capacity();
            ends[i] = (int) Math.min(total, Integer.MAX_VALUE);
        }
        this.length = (int) Math.min(total, Integer.MAX_VALUE);
        this.cleanable = ObjectStore.CLEANER.register(this, new Free(handle));
    }

    /**
     * Takes ownership of the native block {@code handle}: the returned block releases it (also
     * when this method fails).
     *
     * @throws StorageException if the native side cannot lend its buffers
     */
    static NativeBlock adopt(long handle) throws StorageException {
        ByteBuffer[] buffers;
        try {
            buffers = NativeBridge.blockBuffers(handle);
        } catch (StorageException | RuntimeException | Error e) {
            new Free(handle).run();
            throw e;
        }
        return new NativeBlock(handle, buffers);
    }

    /**
     * The block's size.
     *
     * @return bytes
     */
    int length() {
        return length;
    }

    /**
     * The byte at {@code at}, from 0 to {@link #length()} exclusive.
     *
     * @throws IOException if the block was released (its stream closed)
     */
    byte get(int at) throws IOException {
        enter();
        try {
            int i = hint;
            if (i >= chunks.length || at >= ends[i] || at < start(i)) {
                i = chunkOf(at);
                hint = i;
            }
            return chunks[i].get(at - start(i));
        } finally {
            exit();
        }
    }

    /**
     * Copies {@code [at, at + n)} of the block into {@code b[off, off + n)}.
     *
     * @throws IOException if the block was released (its stream closed)
     */
    void copyTo(int at, byte[] b, int off, int n) throws IOException {
        enter();
        try {
            for (int i = chunkOf(at); n > 0; i++) {
                int from = at - start(i);
                int k = Math.min(n, ends[i] - at);
                chunks[i].get(from, b, off, k);
                at += k;
                off += k;
                n -= k;
            }
        } finally {
            exit();
        }
    }

    /**
     * Copies {@code [at, at + n)} of the block into {@code dst} at its absolute index {@code
     * dstAt} (its position and limit unchanged).
     *
     * @throws IOException if the block was released (its stream closed)
     */
    void copyTo(int at, ByteBuffer dst, int dstAt, int n) throws IOException {
        enter();
        try {
            for (int i = chunkOf(at); n > 0; i++) {
                int from = at - start(i);
                int k = Math.min(n, ends[i] - at);
                dst.put(dstAt, chunks[i], from, k);
                at += k;
                dstAt += k;
                n -= k;
            }
        } finally {
            exit();
        }
    }

    /**
     * Frees the block now, or when the copies in progress end. Idempotent; copies that start
     * afterwards throw {@link IOException}.
     */
    void release() {
        int u;
        do {
            u = users.get();
            if ((u & RELEASED) != 0) {
                return;
            }
        } while (!users.compareAndSet(u, u | RELEASED));
        if (u == 0) {
            cleanable.clean();
        }
    }

    @Override
    public String toString() {
        return "NativeBlock{length=" + length + ", chunks=" + chunks.length + "}";
    }

    private void enter() throws IOException {
        int u;
        do {
            u = users.get();
            if ((u & RELEASED) != 0) {
                throw new IOException("the stream's block was released: the stream is closed");
            }
        } while (!users.compareAndSet(u, u + 1));
    }

    private void exit() {
        if (users.decrementAndGet() == RELEASED) {
            cleanable.clean(); // the last copy of a released block frees it
        }
        Reference.reachabilityFence(this);
    }

    private int start(int i) {
        return i == 0 ? 0 : ends[i - 1];
    }

    /** The chunk holding offset {@code at} ({@code 0 <= at < length}). */
    private int chunkOf(int at) {
        int lo = 0;
        int hi = chunks.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (ends[mid] <= at) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Frees the native block once; also the Cleaner action, so it must not refer to a block. */
    private static final class Free implements Runnable {
        private final AtomicLong handle;

        Free(long handle) {
            this.handle = new AtomicLong(handle);
        }

        @Override
        public void run() {
            long h = handle.getAndSet(0L);
            if (h != 0L) {
                try {
                    NativeBridge.blockRelease(h);
                } catch (StorageException | RuntimeException e) {
                    // A Cleaner must not throw; the native side drops the block in any case.
                }
            }
        }
    }
}
