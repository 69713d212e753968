package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * A provider whose answers are scripted: queued steps run once each, in order; when the queue is
 * empty the {@link #otherwise(Step) fallback} step runs. Records calls and what was thrown.
 */
public final class ScriptedProvider implements StorageOptionsProvider {

    /** One answer of the provider. */
    @FunctionalInterface
    public interface Step {
        /**
         * Produces one answer of {@link ScriptedProvider#fetchStorageOptions()}.
         *
         * @return the storage options to vend, or {@code null} (passed on as the provider's answer)
         * @throws Exception whatever the step means to throw; the provider records it in {@link
         *     ScriptedProvider#thrown()} and throws it on
         */
        Map<String, String> fetch() throws Exception;
    }

    private final Deque<Step> queue = new ArrayDeque<>();
    private final List<Throwable> thrown = new ArrayList<>();
    private final List<String> threads = new ArrayList<>();
    private Step otherwise;
    private int calls;

    /**
     * Creates a provider that runs {@code steps} once each, then the last one forever.
     *
     * @param steps the answers, in order; with none, every call returns {@code null}
     */
    public ScriptedProvider(Step... steps) {
        for (Step s : steps) {
            queue.add(s);
        }
        otherwise = steps.length == 0 ? () -> null : steps[steps.length - 1];
    }

    /**
     * Queues one more step, after those already queued.
     *
     * @param step the answer to give once
     * @return this provider, for chaining
     */
    public synchronized ScriptedProvider then(Step step) {
        queue.add(step);
        return this;
    }

    /**
     * Sets what the provider does once the queue is empty (replacing the last constructor step).
     *
     * @param step the answer to give on every call after the queued ones
     * @return this provider, for chaining
     */
    public synchronized ScriptedProvider otherwise(Step step) {
        this.otherwise = step;
        return this;
    }

    /**
     * A step that throws {@code t}.
     *
     * @param t an {@link Exception} or an {@link Error}, thrown as is (the same instance on every
     *     run); any other {@link Throwable} makes the step throw {@link ClassCastException}
     * @return the step
     */
    public static Step throwing(Throwable t) {
        return () -> {
            if (t instanceof Exception e) {
                throw e;
            }
            throw (Error) t;
        };
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        Step step;
        synchronized (this) {
            calls++;
            threads.add(
                    Thread.currentThread().getName()
                            + (Thread.currentThread().isDaemon() ? " (daemon)" : ""));
            step = queue.isEmpty() ? otherwise : queue.poll();
            notifyAll();
        }
        try {
            return step.fetch();
        } catch (Exception | Error e) {
            synchronized (this) {
                thrown.add(e);
            }
            throw e;
        }
    }

    /**
     * How often the provider was called.
     *
     * @return the number of calls of {@link #fetchStorageOptions()} so far, including those that
     *     threw
     */
    public synchronized int calls() {
        return calls;
    }

    /**
     * Names of the threads that called it, in order.
     *
     * @return an immutable copy, one entry per call: the thread's name, followed by {@code
     *     " (daemon)"} for a daemon thread
     */
    public synchronized List<String> threads() {
        return List.copyOf(threads);
    }

    /**
     * Everything it threw, in order.
     *
     * @return an immutable copy of the exceptions and errors the steps threw, oldest first
     */
    public synchronized List<Throwable> thrown() {
        return List.copyOf(thrown);
    }

    /**
     * Waits until called at least {@code n} times (woken by each call, no polling).
     *
     * @param n the number of calls to wait for (counted since the provider was made)
     * @param timeout how long to wait at most
     * @return whether it was called {@code n} times within {@code timeout}
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public synchronized boolean awaitCalls(int n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (calls < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    @Override
    public String toString() {
        return "ScriptedProvider{calls=" + calls() + "}";
    }
}
