package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Vends credentials issued by the local endpoint's admin API, knowing the endpoint by URL only (JDK
 * classes only, see {@link AdminClient}), so it can be loaded by an isolated class loader or used
 * in a child JVM. Records, for every call, the calling thread and whether the thread's context
 * class loader was this class's own loader. Can be told to fail with a checked exception.
 *
 * <p>Its public methods use JDK types only, so tests can drive it through reflection.
 */
public final class EndpointProvider implements StorageOptionsProvider {

    /**
     * What the provider throws when told to fail (a checked exception of the provider's loader).
     */
    public static final class CatalogDownException extends Exception {
        private static final long serialVersionUID = 1L;

        /**
         * @param message the message
         */
        public CatalogDownException(String message) {
            super(message);
        }
    }

    private final String endpoint;
    private final long ttlMillis;
    private final List<String> calls = new ArrayList<>();
    private String failure;
    private Exception lastThrown;
    private long delayMillis;

    /**
     * @param endpoint {@code http://127.0.0.1:PORT}
     * @param ttlMillis lifetime of each credential set
     */
    public EndpointProvider(String endpoint, long ttlMillis) {
        this.endpoint = endpoint;
        this.ttlMillis = ttlMillis;
    }

    /**
     * From now on every call throws {@link CatalogDownException} with {@code message}, until
     * {@link #succeed()}.
     *
     * @param message the exception's message
     */
    public synchronized void failWith(String message) {
        this.failure = message;
    }

    /**
     * From now on every call first sleeps {@code millis} (to keep a refresh in flight).
     *
     * @param millis how long each call sleeps, in milliseconds; {@code 0} for no delay
     */
    public synchronized void delay(long millis) {
        this.delayMillis = millis;
    }

    /** From now on calls vend credentials again. */
    public synchronized void succeed() {
        this.failure = null;
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        String fail;
        long delay;
        synchronized (this) {
            Thread t = Thread.currentThread();
            calls.add(
                    t.getName()
                            + " daemon="
                            + t.isDaemon()
                            + " contextLoader="
                            + (t.getContextClassLoader() == getClass().getClassLoader()
                                    ? "own"
                                    : String.valueOf(t.getContextClassLoader())));
            fail = failure;
            delay = delayMillis;
            notifyAll();
        }
        if (delay > 0) {
            Thread.sleep(delay);
        }
        if (fail != null) {
            CatalogDownException e = new CatalogDownException(fail);
            synchronized (this) {
                lastThrown = e;
            }
            throw e;
        }
        return AdminClient.issue(endpoint, ttlMillis, null);
    }

    /**
     * Waits until called at least {@code n} times (woken by each call, no polling).
     *
     * @param n the number of calls to wait for (counted since the provider was made)
     * @param timeoutMillis how long to wait at most, in milliseconds
     * @return whether it was, within {@code timeoutMillis}
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public synchronized boolean awaitCalls(int n, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (calls.size() < n) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    /**
     * How often it was called.
     *
     * @return the number of calls so far, including those that failed
     */
    public synchronized int calls() {
        return calls.size();
    }

    /**
     * One line per call: {@code THREAD daemon=BOOL contextLoader=own|OTHER}.
     *
     * @return a copy, oldest first
     */
    public synchronized List<String> callLog() {
        return new ArrayList<>(calls);
    }

    /**
     * The last exception it threw.
     *
     * @return the last {@link CatalogDownException} thrown because of {@link #failWith(String)}, or
     *     {@code null} if none was (failures of the endpoint itself are not recorded)
     */
    public synchronized Exception lastThrown() {
        return lastThrown;
    }

    @Override
    public String toString() {
        return "EndpointProvider{calls=" + calls() + ", ttlMillis=" + ttlMillis + "}";
    }
}
