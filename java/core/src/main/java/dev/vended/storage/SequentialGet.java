package dev.vended.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One streaming GET per sequential run of a {@link SeekableObjectInputStream} (with {@link
 * ReadPolicy#SEQUENTIAL}, or {@link ReadPolicy#ADAPTIVE} until it switches): a read at the offset
 * where the previous one ended takes the next bytes of the GET already open; a read anywhere else
 * closes it and opens {@code [p, length)} with a new GET, signed with the credential current at
 * that moment and pinned to the stream's ETag. The GET has a connection of its own, read by the
 * calling thread inside each read (no native thread and no Java-side buffer beyond the caller's
 * in between); between reads the kernel's socket buffer holds what the endpoint sent ahead.
 *
 * <p>A GET that fails while its body is read (a dropped connection) is reopened once at the same
 * offset; failures of opening it are those of any ranged read (same exception types). A {@link
 * ChecksumMismatchException} at the end of a GET from offset 0 is thrown, never read again.
 *
 * <p>Thread-safe: the caller's thread and the stream's read-ahead thread share it (one read at a
 * time). {@link #close()} never waits for a read in progress: that read closes the GET when it
 * ends. A GET left open by a stream that was never closed is closed by {@link
 * ObjectStore#CLEANER}.
 */
final class SequentialGet {

    private final ObjectStore store;
    private final String path;
    private final long length;
    private final String ifMatch;
    private final ReentrantLock lock = new ReentrantLock();
    private final Handle handle = new Handle();
    private final java.lang.ref.Cleaner.Cleanable cleanable;
    /** Object offset of the next byte the open GET gives; -1 when none is open. */
    private long next = -1L;
    private volatile boolean closed;
    /** GETs opened so far (tests, benchmarks). */
    private long opens;

    SequentialGet(ObjectStore store, String path, long length, String ifMatch) {
        this.store = store;
        this.path = path;
        this.length = length;
        this.ifMatch = ifMatch;
        this.cleanable = ObjectStore.CLEANER.register(this, handle);
    }

    /**
     * Reads {@code [p, p + n)} into {@code b[off, off + n)}; {@code p + n} must not exceed the
     * length the stream was opened with.
     *
     * @return the bytes read: {@code n}, or fewer only when the object ended early (it shrank)
     */
    int read(long p, byte[] b, int off, int n) throws IOException {
        return read(p, null, b, off, n);
    }

    /** As {@link #read(long, byte[], int, int)} into a direct buffer at absolute indices. */
    int read(long p, ByteBuffer b, int off, int n) throws IOException {
        return read(p, b, null, off, n);
    }

    /**
     * Reads {@code [p, p + n)} ({@code n > 0}) into a block lent by the native side (the bytes
     * stay in the buffers they arrived in); as {@link #read(long, byte[], int, int)}, the block
     * holds fewer than {@code n} bytes only when the object ended early.
     */
    NativeBlock readBlock(long p, int n) throws IOException {
        NativeBlock[] block = {NativeBlock.EMPTY};
        read(
                p,
                n,
                reader -> {
                    block[0] = NativeBlock.adopt(NativeBridge.readerReadBlock(reader, n));
                    return block[0].length();
                });
        return block[0];
    }

    private int read(long p, ByteBuffer direct, byte[] array, int off, int n) throws IOException {
        return read(
                p,
                n,
                reader ->
                        direct != null
                                ? NativeBridge.readerReadDirect(reader, direct, off, n)
                                : NativeBridge.readerRead(reader, array, off, n));
    }

    /** A read of at most {@code n} bytes from the open reader; -1 or fewer at its end. */
    private interface Transfer {
        int from(long reader) throws IOException;
    }

    private int read(long p, int n, Transfer transfer) throws IOException {
        lock.lock();
        try {
            if (closed) {
                throw new IOException("SeekableObjectInputStream of " + path + " is closed");
            }
            int k;
            try {
                k = readOnce(p, transfer);
            } catch (StorageException e) {
                if (next != p || e instanceof ChecksumMismatchException) {
                    // Opening failed: as any ranged read. A mismatch at the end of the body: a
                    // GET reopened here would be ranged, which no stored checksum covers.
                    throw e;
                }
                drop(); // the body broke: one new GET from the same offset
                k = readOnce(p, transfer);
            }
            if (k < n) {
                drop();
            } else {
                next = p + k;
            }
            return Math.max(k, 0);
        } finally {
            if (closed) {
                drop();
            }
            lock.unlock();
        }
    }

    /** Opens a GET at {@code p} unless the open one is there, then reads from it. */
    private int readOnce(long p, Transfer transfer) throws IOException {
        long h = store.acquireHandle(); // also: a closed store fails every read the same way
        try {
            if (next != p) {
                drop();
                handle.id = NativeBridge.readerOpen(h, path, p, length, ifMatch);
                next = p;
                opens++;
            }
        } finally {
            store.releaseHandle();
        }
        return transfer.from(handle.id);
    }

    /** GETs opened so far. */
    long opens() {
        lock.lock();
        try {
            return opens;
        } finally {
            lock.unlock();
        }
    }

    /** Closes the open GET, now if no read is in progress, else when that read ends. */
    void close() {
        closed = true;
        if (lock.tryLock()) {
            try {
                drop();
            } finally {
                lock.unlock();
            }
        }
    }

    private void drop() {
        next = -1L;
        handle.run();
        if (closed) {
            cleanable.clean();
        }
    }

    /** The native reader; also the Cleaner action, so it must not refer to its owner. */
    private static final class Handle implements Runnable {
        volatile long id;

        @Override
        public void run() {
            long h = id;
            id = 0L;
            if (h != 0L) {
                try {
                    NativeBridge.readerClose(h);
                } catch (StorageException | RuntimeException e) {
                    // A Cleaner must not throw; the native side drops the handle in any case.
                }
            }
        }
    }
}
