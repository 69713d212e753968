package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Vends the local endpoint's root credentials with a one-minute {@code expires_at_millis}, without
 * any I/O or thread of its own (so that, loaded by an isolated class loader, it leaves nothing
 * behind that keeps the loader reachable). Records whether each call ran with its own loader as the
 * thread's context class loader.
 */
public final class RootProvider implements StorageOptionsProvider {
    private final String endpoint;
    private final List<String> calls = new ArrayList<>();

    /**
     * @param endpoint {@code http://127.0.0.1:PORT}
     */
    public RootProvider(String endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public Map<String, String> fetchStorageOptions() {
        Thread t = Thread.currentThread();
        synchronized (this) {
            calls.add(
                    t.getName()
                            + " contextLoader="
                            + (t.getContextClassLoader() == getClass().getClassLoader()
                                    ? "own"
                                    : String.valueOf(t.getContextClassLoader())));
        }
        return AdminClient.rootOptions(endpoint, 0);
    }

    /**
     * One line per call, oldest first.
     *
     * @return a copy; each line is {@code THREAD contextLoader=own|OTHER}, where {@code own} means
     *     the thread's context class loader was this class's loader
     */
    public synchronized List<String> callLog() {
        return new ArrayList<>(calls);
    }
}
