package dev.vended.storage;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The sequential prefetch of one {@link SeekableObjectInputStream} (see its class Javadoc): at most
 * one background ranged GET of the next block in flight, into a second buffer ({@code spare}) that
 * the stream takes as its current block when its position reaches it. Prefetches run on one
 * process-wide pool of {@link SeekableObjectInputStream#READ_AHEAD_THREADS} daemon threads.
 *
 * <p>Not thread-safe, like the stream: only the stream's thread calls it (the pool thread only
 * runs a {@link Prefetch}).
 */
final class ReadAhead {

    private final RangeReads reads;
    private final String path;
    private final int blockSize;
    /** The second buffer: the target of the prefetch (or of a discarded one still running). */
    private byte[] spare;
    /** The prefetch of the next block, or {@code null}. */
    private Prefetch prefetch;
    /** A discarded prefetch whose GET may still be writing {@code spare}, or {@code null}. */
    private Prefetch discarded;
    private long used;
    private long takenBack;

    ReadAhead(RangeReads reads, String path, int blockSize) {
        this.reads = reads;
        this.path = path;
        this.blockSize = blockSize;
    }

    /**
     * Sends the GET of {@code [start, start + n)} on the pool, unless that prefetch is already
     * pending or a discarded one still writes the spare buffer (at most two blocks per stream).
     */
    void start(long start, int n) {
        if (prefetch != null) {
            if (prefetch.start == start && prefetch.n == n) {
                return;
            }
            discard();
        }
        if (discarded != null) {
            if (discarded.finished.getCount() > 0) {
                return; // its GET still writes the spare buffer: at most two blocks per stream
            }
            discarded = null;
        }
        if (spare == null) {
            spare = new byte[blockSize];
        }
        Prefetch f = new Prefetch(start, n, spare);
        try {
            Pool.EXECUTOR.execute(f);
        } catch (RejectedExecutionException e) {
            return; // the pool is gone (JVM shutdown): read synchronously
        }
        prefetch = f;
    }

    /**
     * If the prefetch covers {@code p}, returns it (waiting for its GET if that is running) and
     * keeps {@code current} as the next spare buffer: the caller makes {@link Prefetch#buf} its
     * block. A prefetch still queued while every pool thread is busy is taken back instead (the
     * caller then reads synchronously) and {@code null} is returned, as when none covers {@code
     * p}.
     *
     * @throws IOException the prefetch's failure (same type as a direct read), or {@link
     *     InterruptedIOException} if interrupted while waiting (the prefetch stays pending)
     */
    Prefetch take(long p, byte[] current) throws IOException {
        Prefetch f = prefetch;
        if (f == null || !f.covers(p)) {
            return null;
        }
        if (Pool.EXECUTOR.getActiveCount() >= SeekableObjectInputStream.READ_AHEAD_THREADS
                && Pool.EXECUTOR.remove(f)) {
            // Queued behind other streams' prefetches on a busy pool: read it on this thread
            // instead of waiting (it never ran, so the spare buffer is free again).
            prefetch = null;
            takenBack++;
            return null;
        }
        try {
            f.finished.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException ie =
                    new InterruptedIOException("interrupted waiting for the read-ahead of " + path);
            ie.initCause(e);
            throw ie; // the prefetch stays pending: the stream is still consistent
        }
        prefetch = null;
        if (f.failure != null) {
            throw surface(f.failure);
        }
        spare = current;
        used++;
        return f;
    }

    /** Discards the prefetch unless it covers {@code p}. */
    void discardUnlessCovers(long p) {
        Prefetch f = prefetch;
        if (f != null && !f.covers(p)) {
            discard();
        }
    }

    /** Discards any prefetch without waiting and drops the spare buffer. */
    void close() {
        if (prefetch != null) {
            discard();
        }
        prefetch = null;
        discarded = null;
        spare = null;
    }

    /** Blocks served by a prefetch so far (tests). */
    long used() {
        return used;
    }

    /** Prefetches taken back from a busy pool's queue (tests). */
    long takenBack() {
        return takenBack;
    }

    /** Whether a prefetch is pending (tests). */
    boolean pending() {
        return prefetch != null;
    }

    /** Waits until the pending prefetch's GET has finished (tests). */
    boolean await(long timeoutMillis) throws InterruptedException {
        Prefetch f = prefetch;
        return f == null || f.finished.await(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** Rethrows a prefetch's failure as itself (same type), noting where it surfaced. */
    private IOException surface(Throwable t) {
        t.addSuppressed(
                new IOException(
                        "read-ahead of "
                                + path
                                + " failed on a "
                                + Pool.THREAD_PREFIX
                                + " thread; surfaced at this read"));
        if (t instanceof IOException) {
            return (IOException) t;
        }
        if (t instanceof RuntimeException) {
            throw (RuntimeException) t;
        }
        if (t instanceof Error) {
            throw (Error) t;
        }
        return new IOException(t);
    }

    private void discard() {
        Prefetch f = prefetch;
        prefetch = null;
        f.discarded = true;
        if (!Pool.EXECUTOR.remove(f) && f.finished.getCount() > 0) {
            discarded = f; // running: its buffer is not free until it finishes
        }
    }

    /** One background GET of {@code [start, start + n)} into {@code buf}. */
    final class Prefetch implements Runnable {
        final long start;
        final int n;
        final byte[] buf;
        final CountDownLatch finished = new CountDownLatch(1);
        volatile boolean discarded;
        /** Written before {@code finished} counts down; read after awaiting it. */
        Throwable failure;

        Prefetch(long start, int n, byte[] buf) {
            this.start = start;
            this.n = n;
            this.buf = buf;
        }

        boolean covers(long p) {
            return p >= start && p < start + n;
        }

        @Override
        public void run() {
            try {
                if (!discarded) {
                    reads.read(start, buf, 0, n);
                }
            } catch (Throwable t) {
                failure = t;
            } finally {
                finished.countDown();
            }
        }
    }

    /** The process-wide read-ahead pool (created on first use). */
    private static final class Pool {
        static final String THREAD_PREFIX = "vended-storage-readahead-";
        static final ThreadPoolExecutor EXECUTOR = create();

        private static ThreadPoolExecutor create() {
            AtomicInteger ids = new AtomicInteger();
            ThreadPoolExecutor pool =
                    new ThreadPoolExecutor(
                            SeekableObjectInputStream.READ_AHEAD_THREADS,
                            SeekableObjectInputStream.READ_AHEAD_THREADS,
                            30,
                            TimeUnit.SECONDS,
                            new LinkedBlockingQueue<>(),
                            r -> {
                                Thread t = new Thread(r, THREAD_PREFIX + ids.incrementAndGet());
                                t.setDaemon(true);
                                return t;
                            });
            pool.allowCoreThreadTimeOut(true);
            return pool;
        }
    }
}
