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
 * one background ranged GET of the next block in flight, into a {@link NativeBlock} that the
 * stream takes as its current block when its position reaches it. Prefetches run on one
 * process-wide pool of {@link SeekableObjectInputStream#READ_AHEAD_THREADS} daemon threads. A
 * discarded prefetch's block is released when its GET ends (or at once if it has ended).
 *
 * <p>Not thread-safe, like the stream: only the stream's thread calls it (the pool thread only
 * runs a {@link Prefetch}).
 */
final class ReadAhead {

    private final RangeReads reads;
    private final String path;
    /** The prefetch of the next block, or {@code null}. */
    private Prefetch prefetch;
    /** A discarded prefetch whose GET may still be running, or {@code null}. */
    private Prefetch discarded;
    private long used;
    private long takenBack;

    ReadAhead(RangeReads reads, String path) {
        this.reads = reads;
        this.path = path;
    }

    /**
     * Sends the GET of {@code [start, start + n)} on the pool, unless that prefetch is already
     * pending or a discarded one is still running (at most two blocks per stream).
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
                return; // its GET still runs: at most two blocks per stream
            }
            discarded = null;
        }
        Prefetch f = new Prefetch(start, n);
        try {
            Pool.EXECUTOR.execute(f);
        } catch (RejectedExecutionException e) {
            return; // the pool is gone (JVM shutdown): read synchronously
        }
        prefetch = f;
    }

    /**
     * If the prefetch covers {@code p}, returns it (waiting for its GET if that is running): the
     * caller then owns its {@link Prefetch#block} and makes it its current block. A prefetch
     * still queued while every pool thread is busy is taken back instead (the caller then reads
     * synchronously) and {@code null} is returned, as when none covers {@code p}.
     *
     * @throws IOException the prefetch's failure (same type as a direct read), or {@link
     *     InterruptedIOException} if interrupted while waiting (the prefetch stays pending)
     */
    Prefetch take(long p) throws IOException {
        Prefetch f = prefetch;
        if (f == null || !f.covers(p)) {
            return null;
        }
        if (Pool.EXECUTOR.getActiveCount() >= SeekableObjectInputStream.READ_AHEAD_THREADS
                && Pool.EXECUTOR.remove(f)) {
            // Queued behind other streams' prefetches on a busy pool: read it on this thread
            // instead of waiting (it never ran).
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

    /** Discards any prefetch without waiting (its block is released when its GET ends). */
    void close() {
        if (prefetch != null) {
            discard();
        }
        prefetch = null;
        discarded = null;
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
        f.discard();
        if (!Pool.EXECUTOR.remove(f) && f.finished.getCount() > 0) {
            discarded = f; // running: counts as a block until it finishes
        }
    }

    /** One background GET of {@code [start, start + n)} into a block of its own. */
    final class Prefetch implements Runnable {
        final long start;
        final int n;
        final CountDownLatch finished = new CountDownLatch(1);
        /** Guarded by {@code this}: a discarded prefetch's block is released, never handed. */
        private boolean discarded;
        /** The block read; written before {@code finished} counts down, read after. */
        NativeBlock block;
        /** Written before {@code finished} counts down; read after awaiting it. */
        Throwable failure;

        Prefetch(long start, int n) {
            this.start = start;
            this.n = n;
        }

        boolean covers(long p) {
            return p >= start && p < start + n;
        }

        /** Marks it discarded and releases its block if it has one. */
        synchronized void discard() {
            discarded = true;
            if (block != null) {
                block.release();
                block = null;
            }
        }

        private synchronized boolean isDiscarded() {
            return discarded;
        }

        @Override
        public void run() {
            try {
                if (!isDiscarded()) {
                    NativeBlock b = reads.block(start, n);
                    synchronized (this) {
                        if (discarded) {
                            b.release();
                        } else {
                            block = b;
                        }
                    }
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
