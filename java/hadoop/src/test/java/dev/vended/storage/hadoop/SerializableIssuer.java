package dev.vended.storage.hadoop;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.AdminClient;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A serializable provider (as a catalog client shipped to executors would be) that issues
 * credentials at the local endpoint by URL: the first call of a name gets {@code firstTtlMillis},
 * later calls {@code laterTtlMillis}. Counts calls per name JVM-wide. Identity-based {@code
 * providerId} (the default): deserialized copies are distinct providers unless the caller shares
 * one.
 */
final class SerializableIssuer implements StorageOptionsProvider, Serializable {
    private static final long serialVersionUID = 1L;
    private static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    private final String name;
    private final String endpoint;
    private final long firstTtlMillis;
    private final long laterTtlMillis;

    SerializableIssuer(String name, String endpoint, long firstTtlMillis, long laterTtlMillis) {
        this.name = name;
        this.endpoint = endpoint;
        this.firstTtlMillis = firstTtlMillis;
        this.laterTtlMillis = laterTtlMillis;
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        int n = CALLS.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        return AdminClient.issue(endpoint, n == 1 ? firstTtlMillis : laterTtlMillis, null);
    }

    static int calls(String name) {
        AtomicInteger n = CALLS.get(name);
        return n == null ? 0 : n.get();
    }
}
