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
        /** Returns options, returns null, or throws. */
        Map<String, String> fetch() throws Exception;
    }

    private final Deque<Step> queue = new ArrayDeque<>();
    private final List<Throwable> thrown = new ArrayList<>();
    private final List<String> threads = new ArrayList<>();
    private Step otherwise;
    private int calls;

    /** Creates a provider that runs {@code steps} once each, then the last one forever. */
    public ScriptedProvider(Step... steps) {
        for (Step s : steps) {
            queue.add(s);
        }
        otherwise = steps.length == 0 ? () -> null : steps[steps.length - 1];
    }

    /** Queues one more step. */
    public synchronized ScriptedProvider then(Step step) {
        queue.add(step);
        return this;
    }

    /** Sets what the provider does once the queue is empty. */
    public synchronized ScriptedProvider otherwise(Step step) {
        this.otherwise = step;
        return this;
    }

    /** A step that throws {@code t} (an Exception or an Error). */
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

    /** How often the provider was called. */
    public synchronized int calls() {
        return calls;
    }

    /** Names of the threads that called it, in order. */
    public synchronized List<String> threads() {
        return List.copyOf(threads);
    }

    /** Everything it threw, in order. */
    public synchronized List<Throwable> thrown() {
        return List.copyOf(thrown);
    }

    /** Waits until called at least {@code n} times; returns whether it was within timeout. */
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
