package dev.vended.storage;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One call of an {@link AsyncObjectStore}: its future, and the sink its native task reports to.
 * The call holds one of the store's permits, which it returns once the task's result is taken.
 */
final class AsyncCall<T> extends AsyncNative.Sink {

    /** Starts a native task on a store handle; returns its id. */
    @FunctionalInterface
    interface Start {
        long start(long storeHandle, AsyncNative.Sink sink) throws StorageException;
    }

    /** Takes an ended task's result ({@link AsyncNative#take} or a variant), freeing the task. */
    @FunctionalInterface
    interface Take {
        Object take(long task) throws StorageException;
    }

    /** Turns what {@link Take} returned into the future's value. */
    @FunctionalInterface
    interface Decode<T> {
        T decode(Object raw);
    }

    private final Executor callbackExecutor;
    private final Semaphore permits;
    private final Take take;
    private final Decode<T> decode;
    /** Set by the one delivery that takes the task (an executor may run it twice). */
    private final AtomicBoolean delivered = new AtomicBoolean();
    private volatile long task;
    private volatile Thread nativeThread;

    final CompletableFuture<T> future =
            new CompletableFuture<>() {
                @Override
                public boolean cancel(boolean mayInterruptIfRunning) {
                    boolean cancelled = super.cancel(mayInterruptIfRunning);
                    long t = task;
                    if (cancelled && t != 0) {
                        AsyncNative.cancel(t);
                    }
                    return cancelled;
                }
            };

    /**
     * @param callbackExecutor where the result is taken and the future completed
     * @param permits released once the result is taken
     * @param take takes the task's result
     * @param decode turns it into the future's value
     */
    AsyncCall(Executor callbackExecutor, Semaphore permits, Take take, Decode<T> decode) {
        this.callbackExecutor = callbackExecutor;
        this.permits = permits;
        this.take = take;
        this.decode = decode;
    }

    /** The native task is running: a cancel that came before now reaches it. */
    void started(long id) {
        task = id;
        if (future.isCancelled()) {
            AsyncNative.cancel(id);
        }
    }

    /** On a native runtime thread: only hands the completion to the callback executor. */
    @Override
    void ready(long id) {
        nativeThread = Thread.currentThread();
        Runnable deliver = () -> deliver(id);
        try {
            callbackExecutor.execute(deliver);
        } catch (Throwable rejected) {
            // Any throwable (an Error too): nothing may escape to the native thread, or the
            // future would never complete and its permit never return.
            ForkJoinPool.commonPool().execute(deliver);
        }
    }

    private void deliver(long id) {
        if (Thread.currentThread() == nativeThread) {
            // The executor ran it inline: never complete (and run user stages) here.
            ForkJoinPool.commonPool().execute(() -> deliver(id));
            return;
        }
        if (!delivered.compareAndSet(false, true)) {
            return; // run again (an executor that ran it and then threw, or ran it twice)
        }
        Object raw = null;
        Throwable error = null;
        try {
            // A cancelled call's result is discarded: taken plainly, so that a variant that
            // hands it to the caller (into buffers of the caller's allocator) does not run.
            raw = future.isCancelled() ? AsyncNative.take(id) : take.take(id);
        } catch (Throwable t) {
            error = t;
        } finally {
            permits.release();
        }
        if (error != null) {
            future.completeExceptionally(error);
            return;
        }
        if (future.isDone()) {
            return; // cancelled: the result (if any) is discarded
        }
        T value;
        try {
            value = decode.decode(raw);
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
            return;
        }
        future.complete(value);
    }
}
