package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A provider that vends endpoint options plus fresh credentials from the local endpoint, and
 * records every call: how many, which credentials, when, and on which thread.
 */
public abstract class RecordingProvider implements StorageOptionsProvider {

    /**
     * One call of the provider.
     *
     * @param credentials what it vended
     * @param fetchedAtMillis when, epoch milliseconds
     * @param thread the calling thread's name
     * @param daemon whether the calling thread is a daemon
     */
    public record Vend(
            VendedCredentials credentials, long fetchedAtMillis, String thread, boolean daemon) {
        /**
         * Lifetime of the credentials at the moment they were vended.
         *
         * @return {@code expiresAtMillis - fetchedAtMillis}, in milliseconds (negative if they were
         *     already expired)
         */
        public long lifetimeMillis() {
            return credentials.expiresAtMillis() - fetchedAtMillis;
        }
    }

    /** The endpoint, or {@code null} for a provider made with {@link #RecordingProvider(Map)}. */
    protected final LocalS3Server server;

    /** Options without credentials that every vend carries, when {@link #server} is null. */
    private final Map<String, String> endpointOptions;

    private final List<Vend> vends = new CopyOnWriteArrayList<>();
    private int calls;

    /**
     * A provider for the local endpoint: each vend is {@code server.options(credentials)} for the
     * credentials of {@link #next()}.
     *
     * @param server the running endpoint, available to subclasses as {@link #server}
     */
    protected RecordingProvider(LocalS3Server server) {
        this.server = server;
        this.endpointOptions = null;
    }

    /**
     * A provider for any endpoint: each vend is {@code endpointOptions} plus the credentials of
     * {@link #next()}.
     *
     * @param endpointOptions options without credentials ({@code aws_endpoint}, {@code
     *     aws_region}, ...), copied
     */
    protected RecordingProvider(Map<String, String> endpointOptions) {
        this.server = null;
        this.endpointOptions = Map.copyOf(endpointOptions);
    }

    /**
     * Produces the next credential set; called once per {@link #fetchStorageOptions()}.
     *
     * @return the credentials to vend, not {@code null}
     * @throws IOException if they cannot be obtained (passed on to the caller, nothing recorded)
     */
    protected abstract VendedCredentials next() throws IOException;

    @Override
    public final Map<String, String> fetchStorageOptions() throws Exception {
        synchronized (this) {
            calls++;
            notifyAll();
        }
        VendedCredentials creds = next();
        Thread t = Thread.currentThread();
        vends.add(new Vend(creds, System.currentTimeMillis(), t.getName(), t.isDaemon()));
        if (server != null) {
            return server.options(creds);
        }
        Map<String, String> options = new java.util.LinkedHashMap<>(endpointOptions);
        options.putAll(creds.toOptions());
        return options;
    }

    /**
     * How often {@link #fetchStorageOptions()} was called.
     *
     * @return the number of calls so far, including those where {@link #next()} threw
     */
    public synchronized int calls() {
        return calls;
    }

    /**
     * Waits until the provider has been called at least {@code n} times (woken by each call, no
     * polling).
     *
     * @param n the number of calls to wait for (counted since the provider was made)
     * @param timeout how long to wait at most
     * @return whether it was, within {@code timeout}
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

    /**
     * Every successful vend, oldest first.
     *
     * @return an immutable copy
     */
    public List<Vend> vends() {
        return List.copyOf(vends);
    }

    /**
     * Every credential set vended, oldest first.
     *
     * @return an immutable list
     */
    public List<VendedCredentials> vended() {
        return vends.stream().map(Vend::credentials).toList();
    }

    /**
     * Every access key id vended, oldest first.
     *
     * @return an immutable list, one entry per vend (repeated if a key was vended twice)
     */
    public List<String> vendedKeyIds() {
        return vends.stream().map(v -> v.credentials().accessKeyId()).toList();
    }
}
