package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.StsProvider;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Credentials that live 2 s rotate under ~10 s of concurrent load without a single request being
 * rejected by the endpoint; static credentials of the same kind do get rejected once expired.
 */
class EndToEndRefreshTest {

    private static final int TTL_SECONDS = 2;
    private static final Duration RUN = Duration.ofSeconds(10);
    private static final int THREADS = 4;

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("e2e");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    @Timeout(120)
    void credentialsRotateUnderLoadWithoutRejections() throws Exception {
        // Control: the same kind of credentials, used as static options. expires_at_millis is
        // left out on purpose so that the endpoint, not the library, decides they expired.
        VendedCredentials control = server.assumeRole(TTL_SECONDS);
        Map<String, String> controlOptions = server.endpointOptions();
        controlOptions.put("aws_access_key_id", control.accessKeyId());
        controlOptions.put("aws_secret_access_key", control.secretAccessKey());
        controlOptions.put("aws_session_token", control.sessionToken());

        StsProvider provider = new StsProvider(server, TTL_SECONDS);
        AtomicLong written = new AtomicLong();
        AtomicLong verified = new AtomicLong();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long elapsedMillis;
        RefreshStats stats;

        try (ObjectStore controlStore =
                ObjectStore.open(server.uri("e2e-control/"), controlOptions)) {
            controlStore.put("probe", new byte[] {1});

            Map<String, String> initial = provider.fetchStorageOptions();
            try (ObjectStore store =
                    ObjectStore.open(
                            server.uri("e2e/"), initial, provider, Duration.ofMillis(500))) {
                long start = System.nanoTime();
                long deadline = start + RUN.toNanos();
                List<Thread> workers = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int id = t;
                    Thread w =
                            new Thread(
                                    () -> work(store, id, deadline, written, verified, failures),
                                    "e2e-worker-" + t);
                    workers.add(w);
                    w.start();
                }
                for (Thread w : workers) {
                    w.join();
                }
                elapsedMillis = (System.nanoTime() - start) / 1_000_000;
                stats = store.refreshStats();
                assertEquals(written.get(), store.list(null).size(), "objects listed");
            }

            Waits.sleepUntil(control.expiresAtMillis() + 500);
            CredentialsException expired =
                    assertThrows(CredentialsException.class, () -> controlStore.get("probe"));
            assertTrue(
                    expired.getMessage().contains("ExpiredToken"),
                    "control store error should mention ExpiredToken: " + expired.getMessage());
            assertFalse(expired.getMessage().contains(control.secretAccessKey()));
            assertFalse(expired.getMessage().contains(control.sessionToken()));
        }

        assertTrue(
                failures.isEmpty(), () -> failures.size() + " failures, e.g. " + first(failures));
        assertTrue(written.get() > 0, "nothing written");
        assertEquals(written.get(), verified.get(), "every object written is verified");

        Map<String, KeyStats> endpointStats = server.stats();
        long accepted = 0;
        for (String key : provider.vendedKeyIds()) {
            KeyStats k = endpointStats.getOrDefault(key, KeyStats.NONE);
            assertEquals(
                    0, k.rejected(), () -> "requests rejected for vended key " + key + ": " + k);
            accepted += k.accepted();
        }
        assertTrue(
                accepted >= 2 * written.get(),
                "endpoint accepted " + accepted + " requests for " + written.get() + " objects");
        KeyStats controlStats = endpointStats.getOrDefault(control.accessKeyId(), KeyStats.NONE);
        assertTrue(
                controlStats.expired() >= 1,
                "control key never rejected as expired: " + controlStats);

        // Provider calls must follow the credential lifetime: neither "never refreshed" nor "a
        // refresh per request". Lifetimes come from the vended Expiration (may be truncated to
        // whole seconds), so derive the bounds from what was actually vended.
        double lifetime =
                provider.vends().stream()
                        .mapToLong(RecordingProvider.Vend::lifetimeMillis)
                        .average()
                        .orElse(TTL_SECONDS * 1000.0);
        lifetime = Math.max(lifetime, 500);
        double windows = elapsedMillis / lifetime;
        int calls = provider.calls();
        long min = Math.max(2, (long) Math.floor(windows / 2));
        long max = (long) Math.ceil(windows * 3) + 2;
        assertTrue(
                calls >= min && calls <= max,
                "provider called "
                        + calls
                        + " times in "
                        + elapsedMillis
                        + " ms with ~"
                        + (long) lifetime
                        + " ms credentials; expected "
                        + min
                        + ".."
                        + max
                        + "; stats "
                        + stats);
        assertTrue(stats.generation() >= 2, "no rotation recorded: " + stats);
        assertEquals(0, stats.failures(), "refresh failures: " + stats);
    }

    private static void work(
            ObjectStore store,
            int id,
            long deadline,
            AtomicLong written,
            AtomicLong verified,
            ConcurrentLinkedQueue<String> failures) {
        SplittableRandom random = new SplittableRandom(id);
        for (long n = 0; System.nanoTime() < deadline; n++) {
            String path = "t" + id + "/obj-" + n;
            byte[] data = new byte[64 + random.nextInt(4096)];
            random.nextBytes(data);
            try {
                store.put(path, data);
                written.incrementAndGet();
                byte[] back = store.get(path);
                if (Arrays.equals(data, back)) {
                    verified.incrementAndGet();
                } else {
                    failures.add(path + ": content mismatch");
                }
            } catch (StorageException | RuntimeException e) {
                failures.add(path + ": " + e);
            }
        }
    }

    private static String first(ConcurrentLinkedQueue<String> q) {
        String s = q.peek();
        return s == null ? "none" : s;
    }
}
