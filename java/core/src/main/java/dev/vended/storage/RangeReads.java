package dev.vended.storage;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ranged GETs of one {@link SeekableObjectInputStream}: exact reads of {@code [p, p + n)} of
 * its object through {@code NativeBridge.readRange}/{@code readRangeDirect}, pinned to the
 * stream's ETag (if any), and the count of native reads. Thread-safe: the stream's read-ahead
 * thread reads through it too.
 */
final class RangeReads {

    private final ObjectStore store;
    private final String path;
    private final long length;
    private final String ifMatch;
    private final AtomicLong nativeReads = new AtomicLong();
    private final AtomicLong rangedBytes = new AtomicLong();

    RangeReads(ObjectStore store, String path, long length, String ifMatch) {
        this.store = store;
        this.path = path;
        this.length = length;
        this.ifMatch = ifMatch;
    }

    /** Native reads so far, ranged or streaming (tests). */
    long count() {
        return nativeReads.get();
    }

    /** Bytes asked for by ranged reads so far (tests: what random reads fetch). */
    long rangedBytes() {
        return rangedBytes.get();
    }

    /** Counts one native read made elsewhere (a streaming GET's read). */
    void counted() {
        nativeReads.incrementAndGet();
    }

    /** Reads exactly {@code [p, p + n)} into {@code b[off, off + n)} natively. */
    void read(long p, byte[] b, int off, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int k;
            long h = store.acquireHandle();
            try {
                nativeReads.incrementAndGet();
                rangedBytes.addAndGet(n - done);
                k = NativeBridge.readRange(h, path, p + done, ifMatch, b, off + done, n - done);
            } finally {
                store.releaseHandle();
            }
            if (k <= 0) {
                throw truncated(p + done);
            }
            done += k;
        }
    }

    /** As {@link #read(long, byte[], int, int)} into a direct buffer at absolute indices. */
    void read(long p, ByteBuffer b, int off, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int k;
            long h = store.acquireHandle();
            try {
                nativeReads.incrementAndGet();
                rangedBytes.addAndGet(n - done);
                k =
                        NativeBridge.readRangeDirect(
                                h, path, p + done, ifMatch, b, off + done, n - done);
            } finally {
                store.releaseHandle();
            }
            if (k <= 0) {
                throw truncated(p + done);
            }
            done += k;
        }
    }

    /**
     * Reads exactly {@code [p, p + n)} ({@code n > 0}) into a block lent by the native side (one
     * request; the bytes stay where they arrived).
     *
     * @throws EOFException if the object ended first (the block is released)
     */
    NativeBlock block(long p, int n) throws IOException {
        NativeBlock block;
        long h = store.acquireHandle();
        try {
            nativeReads.incrementAndGet();
            rangedBytes.addAndGet(n);
            block = NativeBlock.adopt(NativeBridge.readRangeBlock(h, path, p, ifMatch, n));
        } finally {
            store.releaseHandle();
        }
        if (block.length() < n) {
            block.release();
            throw truncated(p + block.length());
        }
        return block;
    }

    /** The error of an object that ended at {@code at}, before the length seen at open. */
    EOFException truncated(long at) {
        return new EOFException(
                path
                        + " ended at "
                        + at
                        + " bytes, before the "
                        + length
                        + " bytes it had when the stream was opened (the object changed; pin its"
                        + " ETag to get PreconditionFailedException instead)");
    }
}
