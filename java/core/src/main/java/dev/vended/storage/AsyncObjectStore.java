package dev.vended.storage;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Asynchronous operations on an {@link ObjectStore}, returning {@link CompletableFuture}s.
 *
 * <p><b>How it works (honestly).</b> Each call runs the store's blocking method on a dedicated,
 * bounded pool of Java threads owned by this object ({@code vended-storage-async-N}, daemon, at
 * most {@link #maxInFlight()} of them, idle ones exit after 30 s). The native call drives its
 * request on that Java thread and the native runtime's I/O driver, so no native runtime worker is
 * ever blocked and no user code ever runs on a native thread. The returned future is completed by
 * a task submitted to the <em>callback executor</em> (default {@link ForkJoinPool#commonPool()}),
 * so dependent stages attached before completion ({@code thenApply}, {@code whenComplete}, ...) run
 * there, never on the I/O pool or on native threads. (As for any {@code CompletableFuture}, a stage
 * attached after completion runs on the thread attaching it.)
 *
 * <p><b>Bound.</b> At most {@link #maxInFlight()} calls (default {@value #DEFAULT_MAX_IN_FLIGHT})
 * are queued or running at once per {@code AsyncObjectStore}; a call beyond the bound blocks the
 * submitting thread until one finishes (back-pressure, interruptible: an interrupted submitter gets
 * a future failed with {@link InterruptedException}).
 *
 * <p><b>Cancel.</b> {@code cancel} on a returned future completes it with {@link
 * java.util.concurrent.CancellationException} at once. A call that has not started yet is then
 * never sent; a call whose request is already running natively runs to its end and its result is
 * discarded (the native request itself is not interrupted).
 *
 * <p>Errors are those of the corresponding {@link ObjectStore} method, delivered as the future's
 * exceptional completion (a {@link StorageException} subclass or a runtime exception). {@link
 * #close()} stops accepting calls (later calls return failed futures with {@link
 * RejectedExecutionException}) and lets calls already submitted finish; it does not close the
 * underlying store.
 */
public final class AsyncObjectStore implements AutoCloseable {

    /** Calls queued or running at once when none is given. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 64;

    private static final AtomicInteger POOLS = new AtomicInteger();

    private final ObjectStore store;
    private final Executor callbackExecutor;
    private final Executor ioExecutor;
    private final ExecutorService ownedPool;
    private final Semaphore inFlight;
    private final int maxInFlight;
    private volatile boolean closed;

    AsyncObjectStore(
            ObjectStore store, Executor callbackExecutor, int maxInFlight, Executor ioExecutor) {
        this.store = Objects.requireNonNull(store, "store");
        this.callbackExecutor = Objects.requireNonNull(callbackExecutor, "callbackExecutor");
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1: " + maxInFlight);
        }
        this.maxInFlight = maxInFlight;
        this.inFlight = new Semaphore(maxInFlight);
        if (ioExecutor == null) {
            int pool = POOLS.incrementAndGet();
            AtomicInteger threads = new AtomicInteger();
            ThreadFactory factory =
                    r -> {
                        Thread t =
                                new Thread(
                                        r,
                                        "vended-storage-async-"
                                                + pool
                                                + "-"
                                                + threads.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    };
            ThreadPoolExecutor tpe =
                    new ThreadPoolExecutor(
                            maxInFlight,
                            maxInFlight,
                            30,
                            TimeUnit.SECONDS,
                            new LinkedBlockingQueue<>(),
                            factory);
            tpe.allowCoreThreadTimeOut(true);
            this.ownedPool = tpe;
            this.ioExecutor = tpe;
        } else {
            this.ownedPool = null;
            this.ioExecutor = ioExecutor;
        }
    }

    /**
     * An async view of {@code store} with callbacks on {@link ForkJoinPool#commonPool()} and at
     * most {@value #DEFAULT_MAX_IN_FLIGHT} calls in flight.
     *
     * @param store the store (not closed by {@link #close()})
     * @return the async view
     */
    public static AsyncObjectStore of(ObjectStore store) {
        return new AsyncObjectStore(
                store, ForkJoinPool.commonPool(), DEFAULT_MAX_IN_FLIGHT, null);
    }

    /**
     * An async view of {@code store}.
     *
     * @param store the store (not closed by {@link #close()})
     * @param callbackExecutor where returned futures are completed (and so where dependent stages
     *     run)
     * @param maxInFlight calls queued or running at once, at least 1; also the I/O pool's size
     * @return the async view
     * @throws IllegalArgumentException if {@code maxInFlight < 1}
     */
    public static AsyncObjectStore of(
            ObjectStore store, Executor callbackExecutor, int maxInFlight) {
        return new AsyncObjectStore(store, callbackExecutor, maxInFlight, null);
    }

    /**
     * The bound on calls in flight.
     *
     * @return calls
     */
    public int maxInFlight() {
        return maxInFlight;
    }

    /**
     * Calls currently queued or running.
     *
     * @return calls
     */
    public int inFlight() {
        return maxInFlight - inFlight.availablePermits();
    }

    /**
     * The store the calls go to.
     *
     * @return the store
     */
    public ObjectStore store() {
        return store;
    }

    /**
     * {@link ObjectStore#get(String)}.
     *
     * @param path the object path
     * @return the object's bytes
     */
    public CompletableFuture<byte[]> getAsync(String path) {
        return submit(() -> store.get(path));
    }

    /**
     * {@link ObjectStore#getRange(String, long, long)}.
     *
     * @param path the object path
     * @param start the first byte
     * @param endExclusive one past the last byte
     * @return the bytes
     */
    public CompletableFuture<byte[]> getRangeAsync(String path, long start, long endExclusive) {
        return submit(() -> store.getRange(path, start, endExclusive));
    }

    /**
     * {@link ObjectStore#getRanges(String, List)}.
     *
     * @param path the object path
     * @param ranges the ranges
     * @return one array per range, in order
     */
    public CompletableFuture<List<byte[]>> getRangesAsync(String path, List<ByteRange> ranges) {
        return submit(() -> store.getRanges(path, ranges));
    }

    /**
     * {@link ObjectStore#put(String, byte[])}. {@code data} is read when the call runs: do not
     * modify it before the future completes.
     *
     * @param path the object path
     * @param data the bytes
     * @return completes when the object is written
     */
    public CompletableFuture<Void> putAsync(String path, byte[] data) {
        return submit(
                () -> {
                    store.put(path, data);
                    return null;
                });
    }

    /**
     * {@link ObjectStore#putIfAbsent(String, byte[])}.
     *
     * @param path the object path
     * @param data the bytes (read when the call runs)
     * @return the write result; fails with {@link ObjectAlreadyExistsException} if present
     */
    public CompletableFuture<WriteResult> putIfAbsentAsync(String path, byte[] data) {
        return submit(() -> store.putIfAbsent(path, data));
    }

    /**
     * {@link ObjectStore#head(String)}.
     *
     * @param path the object path
     * @return the metadata
     */
    public CompletableFuture<ObjectMeta> headAsync(String path) {
        return submit(() -> store.head(path));
    }

    /**
     * {@link ObjectStore#delete(String)}.
     *
     * @param path the object path
     * @return completes when deleted
     */
    public CompletableFuture<Void> deleteAsync(String path) {
        return submit(
                () -> {
                    store.delete(path);
                    return null;
                });
    }

    /**
     * {@link ObjectStore#list(String)}.
     *
     * @param prefix the prefix, or {@code null} for everything
     * @return every object under the prefix
     */
    public CompletableFuture<List<ObjectMeta>> listAsync(String prefix) {
        return submit(() -> store.list(prefix));
    }

    /**
     * {@link ObjectStore#copy(String, String)}.
     *
     * @param from the source path
     * @param to the destination path
     * @return completes when copied
     */
    public CompletableFuture<Void> copyAsync(String from, String to) {
        return submit(
                () -> {
                    store.copy(from, to);
                    return null;
                });
    }

    /**
     * Stops accepting calls; calls already submitted finish. Idempotent. Does not close the store.
     */
    @Override
    public void close() {
        closed = true;
        if (ownedPool != null) {
            ownedPool.shutdown();
        }
    }

    @Override
    public String toString() {
        return "AsyncObjectStore{store="
                + store
                + ", maxInFlight="
                + maxInFlight
                + ", inFlight="
                + inFlight()
                + ", closed="
                + closed
                + "}";
    }

    // ---------------------------------------------------------------------------------------

    /** A blocking store call. */
    @FunctionalInterface
    interface Call<T> {
        T run() throws Exception;
    }

    <T> CompletableFuture<T> submit(Call<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(
                    new RejectedExecutionException("AsyncObjectStore is closed"));
            return result;
        }
        try {
            inFlight.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result.completeExceptionally(e);
            return result;
        }
        Runnable task =
                () -> {
                    T value = null;
                    Throwable error = null;
                    try {
                        if (result.isDone()) {
                            return; // cancelled before it started: never sent
                        }
                        value = call.run();
                    } catch (Throwable t) {
                        error = t;
                    } finally {
                        inFlight.release();
                    }
                    complete(result, value, error);
                };
        try {
            ioExecutor.execute(task);
        } catch (RuntimeException e) {
            inFlight.release();
            result.completeExceptionally(e);
        }
        return result;
    }

    private <T> void complete(CompletableFuture<T> result, T value, Throwable error) {
        Runnable completion =
                () -> {
                    if (error == null) {
                        result.complete(value);
                    } else {
                        result.completeExceptionally(error);
                    }
                };
        try {
            callbackExecutor.execute(completion);
        } catch (RuntimeException e) {
            // The callback executor refused (shut down): complete here rather than never.
            result.completeExceptionally(
                    new CompletionException(
                            "the callback executor refused the completion of a call", e));
        }
    }
}
