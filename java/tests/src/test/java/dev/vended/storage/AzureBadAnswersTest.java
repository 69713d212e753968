package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProxy;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cases C06 and C09 through Azure from Java, against Azurite (which enforces the SAS signature
 * and {@code se}): while the first SAS (gen1, about 8 s) is valid, a Java provider answers with
 * already-expired or too-short credentials (C06), or throws, returns an empty map, a map without
 * the SAS, or {@code expires_at_millis=0} (C09). gen1 keeps serving (no request rejected at
 * Azurite, counted by a proxy), the provider is called a handful of times (backoff), and after
 * gen1's expiry the caller gets a {@link CredentialsException} carrying the provider's reason
 * while no request reaches Azurite. The Rust twin is crates/core/tests/it/azure_bad_answers.rs.
 */
class AzureBadAnswersTest {

    private static final String CONTAINER = "vended";
    private static final String PROVIDER_ID = "bad-catalog";
    private static AzuriteServer azurite;

    @BeforeAll
    static void start() throws Exception {
        azurite = Emulators.startAzurite();
        azurite.createContainer(CONTAINER);
    }

    @AfterAll
    static void stop() {
        if (azurite != null) {
            azurite.close();
        }
    }

    /** One provider answer: a function of the time of the call (epoch ms). */
    private interface Answer {
        Map<String, String> at(long now) throws Exception;
    }

    /** A case: what the provider answers, and what the final error must contain. */
    private record Case(Answer answer, String needle) {}

    private static Map<String, String> sas(long sasExpires, long expiresAtMillis) {
        Map<String, String> o = new HashMap<>();
        o.put("azure_storage_sas_token", AzuriteServer.accountSas(sasExpires, false));
        o.put("expires_at_millis", Long.toString(expiresAtMillis));
        return o;
    }

    /** Runs one case on its own proxy and prefix; throws AssertionError when it fails. */
    private static void scenario(String name, Answer answer, String needle) throws Exception {
        try (EmulatorProxy proxy = new EmulatorProxy(azurite.url(), null)) {
            AtomicInteger calls = new AtomicInteger();
            StorageOptionsProvider provider =
                    new StorageOptionsProvider() {
                        @Override
                        public Map<String, String> fetchStorageOptions() throws Exception {
                            calls.incrementAndGet();
                            return answer.at(System.currentTimeMillis());
                        }

                        @Override
                        public String providerId() {
                            return PROVIDER_ID;
                        }
                    };
            long gen1Expires = AzuriteServer.sasExpiry(Duration.ofSeconds(8));
            Map<String, String> gen1 = sas(gen1Expires, gen1Expires);
            String sig = gen1.get("azure_storage_sas_token");
            sig = sig.substring(sig.indexOf("sig=") + 4);
            try (ObjectStore store =
                    ObjectStore.builder("az://" + CONTAINER + "/" + name)
                            .options(AzuriteServer.storeOptions(proxy.url, gen1))
                            .provider(provider)
                            .leadTime(Duration.ofSeconds(6))
                            .initialBackoff(Duration.ofMillis(300))
                            .maxBackoff(Duration.ofSeconds(1))
                            .open()) {
                int rounds = 0;
                while (System.currentTimeMillis() < gen1Expires - 700 && rounds < 10_000) {
                    byte[] body = (name + " " + rounds).getBytes(StandardCharsets.UTF_8);
                    store.put("obj", body);
                    assertArrayEquals(body, store.get("obj"), name);
                    rounds++;
                    Thread.sleep(50); // pacing only
                }
                RefreshStats stats = store.refreshStats();
                int n = calls.get();
                assertTrue(rounds >= 10, name + ": only " + rounds + " rounds on gen1");
                assertEquals(0, proxy.rejections(), name + ": Azurite rejected gen1");
                assertEquals(1, stats.generation(), name + ": a bad answer became current");
                assertTrue(n >= 2 && n <= 12, name + ": " + n + " provider calls");
                assertEquals(n, stats.failures(), name + ": " + stats);

                Waits.sleepUntil(gen1Expires + 300); // the scenario: gen1 expires
                int requests = proxy.requests.get();
                CredentialsException e =
                        assertThrows(CredentialsException.class, () -> store.get("obj"), name);
                String text = e.getMessage() + " " + e.getCause();
                assertTrue(text.contains(needle), name + ": " + needle + " not in " + text);
                assertEquals(requests, proxy.requests.get(), name + ": a request after expiry");
                assertFalse(text.contains(sig), name + ": SAS in " + text);
                System.out.println(name + ": " + rounds + " rounds, " + n + " calls, then " + text);
            }
        }
    }

    /** Runs the cases at once, each on its own thread. */
    private static void runAll(Map<String, Case> cases) {
        ExecutorService pool = Executors.newFixedThreadPool(cases.size());
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (Map.Entry<String, Case> c : cases.entrySet()) {
            runs.add(
                    CompletableFuture.runAsync(
                            () -> {
                                try {
                                    Case k = c.getValue();
                                    scenario(c.getKey(), k.answer(), k.needle());
                                } catch (Exception e) {
                                    throw new AssertionError(c.getKey() + ": " + e, e);
                                }
                            },
                            pool));
        }
        try {
            for (CompletableFuture<Void> r : runs) {
                r.join();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @Timeout(90)
    void c06_expiredOrTooShortSasAnswersKeepGen1UntilItExpires() {
        Map<String, Case> cases = new LinkedHashMap<>();
        cases.put(
                "c06-java-expired",
                new Case(now -> sas(now - 1000, now - 1000), "returned expired credentials"));
        cases.put("c06-java-too-short", new Case(now -> sas(now + 60_000, now + 400), "too soon"));
        runAll(cases);
    }

    @Test
    @Timeout(90)
    void c09_throwingEmptySaslessOrZeroExpiryAnswersKeepGen1UntilItExpires() {
        Map<String, Case> cases = new LinkedHashMap<>();
        cases.put(
                "c09-java-throws",
                new Case(
                        now -> {
                            throw new IllegalStateException("catalog said no");
                        },
                        "catalog said no"));
        cases.put("c09-java-empty", new Case(now -> Map.of(), "no credentials"));
        cases.put(
                "c09-java-no-sas",
                new Case(
                        now ->
                                Map.of(
                                        "azure_storage_account_name",
                                        AzuriteServer.ACCOUNT,
                                        "expires_at_millis",
                                        Long.toString(now + 60_000)),
                        "no credential"));
        cases.put(
                "c09-java-zero-expiry", new Case(now -> sas(now + 60_000, 0), "expires_at_millis"));
        runAll(cases);
    }
}
