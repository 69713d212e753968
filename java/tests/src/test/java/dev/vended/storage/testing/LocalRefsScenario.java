package dev.vended.storage.testing;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.LocalS3Server;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Local references on the JNI bridge: a provider answering a 10,000-entry map, and 200 provider
 * calls in a row on the native runtime's long-lived threads. Run in-process by {@code
 * LocalReferencesTest} and, always under {@code -Xcheck:jni} (which warns when a frame holds more
 * local references than its capacity), in a child JVM by {@link LocalRefsMain}.
 */
public final class LocalRefsScenario {
    private LocalRefsScenario() {}

    /** Root credentials valid for a minute, plus {@code extra} non-credential entries. */
    public static Map<String, String> rootOptions(String endpoint, int extra) {
        return AdminClient.rootOptions(endpoint, extra);
    }

    /** Vends root credentials; records the calling threads. */
    static final class RootProvider implements StorageOptionsProvider {
        private final String endpoint;
        private final int extra;
        private final List<String> threads;

        RootProvider(String endpoint, int extra, List<String> threads) {
            this.endpoint = endpoint;
            this.extra = extra;
            this.threads = threads;
        }

        @Override
        public Map<String, String> fetchStorageOptions() {
            Thread t = Thread.currentThread();
            threads.add(t.getName() + (t.isDaemon() ? "" : " (NOT daemon)"));
            return rootOptions(endpoint, extra);
        }
    }

    /**
     * A provider answering 10,000 extra entries plus valid credentials, called on a native thread
     * (the initial options have none): the store works.
     *
     * @return the calling threads
     */
    public static List<String> bigMap(String endpoint, String bucket, int entries)
            throws Exception {
        List<String> threads = new CopyOnWriteArrayList<>();
        RootProvider provider = new RootProvider(endpoint, entries, threads);
        byte[] data = "big map".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (ObjectStore store =
                ObjectStore.open(
                        "s3://" + bucket + "/bigmap-" + UUID.randomUUID() + "/",
                        AdminClient.endpointOptions(endpoint),
                        provider)) {
            store.put("x", data);
            check(Arrays.equals(data, store.get("x")), "read back other bytes");
            check(store.refreshStats().fetches() == 1, "stats: " + store.refreshStats());
        }
        check(threads.size() == 1, "provider calls: " + threads);
        return threads;
    }

    /**
     * {@code n} provider calls in a row, each for a new store (so each is a real fetch through the
     * bridge) on the runtime's reused blocking threads.
     *
     * @return the calling threads, one per call
     */
    public static List<String> consecutiveRefreshes(String endpoint, String bucket, int n)
            throws Exception {
        List<String> threads = new CopyOnWriteArrayList<>();
        String uri = "s3://" + bucket + "/refreshes-" + UUID.randomUUID() + "/";
        try (ObjectStore seed = ObjectStore.open(uri, rootOptions(endpoint, 0))) {
            seed.put("seed", new byte[] {1});
        }
        for (int i = 0; i < n; i++) {
            RootProvider provider = new RootProvider(endpoint, 20, threads);
            try (ObjectStore store =
                    ObjectStore.open(uri, AdminClient.endpointOptions(endpoint), provider)) {
                check(Arrays.equals(new byte[] {1}, store.get("seed")), "read " + i);
            }
        }
        check(threads.size() == n, "expected " + n + " provider calls, got " + threads.size());
        for (String t : threads) {
            check(t.startsWith("vended-storage-") && !t.contains("NOT daemon"), "thread " + t);
        }
        long distinct = threads.stream().distinct().count();
        check(
                distinct <= n / 4,
                "the runtime's threads were not reused ("
                        + distinct
                        + " threads for "
                        + n
                        + " calls)");
        return threads;
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message);
        }
    }
}
