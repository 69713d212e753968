package dev.vended.storage;

import static dev.vended.storage.testkit.ScriptedProvider.throwing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.ScriptedProvider;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.function.UnaryOperator;

/** Refresh and client settings from Java: validation naming the setting, and their effect. */
@Timeout(90)
class RefreshSettingsTest {

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("settings");
        prefix = "settings-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            root.put("seed.bin", "seed".getBytes(StandardCharsets.UTF_8));
        }
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertInvalid(
            UnaryOperator<ObjectStore.Builder> settings, String setting) {
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class,
                        () -> settings.apply(ObjectStore.builder("memory:///settings/")).open());
        assertTrue(e.getMessage().contains(setting), () -> setting + " not named: " + e);
        assertEquals(StorageException.Kind.INVALID_OPTIONS, e.kind());
    }

    @Test
    void negativeValuesAreRefusedByName() {
        ObjectStore.Builder b = ObjectStore.builder("memory:///settings/");
        String[][] cases = {{"leadTime"}, {"staleWindow"}, {"providerTimeout"}, {"initialBackoff"},
            {"maxBackoff"}, {"requestTimeout"}, {"connectTimeout"}, {"retryTimeout"}};
        Duration minus = Duration.ofMillis(-5);
        for (String[] c : cases) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> {
                                switch (c[0]) {
                                    case "leadTime" -> b.leadTime(minus);
                                    case "staleWindow" -> b.staleWindow(minus);
                                    case "providerTimeout" -> b.providerTimeout(minus);
                                    case "initialBackoff" -> b.initialBackoff(minus);
                                    case "maxBackoff" -> b.maxBackoff(minus);
                                    case "requestTimeout" -> b.requestTimeout(minus);
                                    case "connectTimeout" -> b.connectTimeout(minus);
                                    default -> b.retryTimeout(minus);
                                }
                            });
            assertTrue(e.getMessage().contains(c[0]), () -> c[0] + " not named: " + e);
        }
        assertThrows(IllegalArgumentException.class, () -> b.maxRetries(-1));
    }

    @Test
    void zeroTooLargeAndInconsistentValuesAreRefusedNatively() {
        assertInvalid(b -> b.staleWindow(Duration.ZERO), "refresh_stale_window_millis");
        assertInvalid(b -> b.providerTimeout(Duration.ZERO), "refresh_provider_timeout_millis");
        assertInvalid(b -> b.leadTime(Duration.ofDays(2)), "refresh_lead_time_millis");
        assertInvalid(b -> b.maxBackoff(Duration.ofDays(400)), "refresh_max_backoff_millis");
        // 60 s initial backoff against the default 30 s maximum.
        assertInvalid(
                b -> b.initialBackoff(Duration.ofSeconds(60)), "refresh_initial_backoff_millis");
        assertInvalid(
                b -> b.initialBackoff(Duration.ofSeconds(2)).maxBackoff(Duration.ofSeconds(1)),
                "refresh_initial_backoff_millis");
        // The legacy path (open with a lead time) goes through the same conversion.
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class,
                        () -> ObjectStore.open("memory:///settings/", null, null, Duration.ZERO));
        assertTrue(e.getMessage().contains("refresh_lead_time_millis"), e.getMessage());
    }

    @Test
    void validSettingsOpenAndShowInToString() throws Exception {
        ObjectStore.Builder b =
                ObjectStore.builder("memory:///settings/")
                        .staleWindow(Duration.ofSeconds(5))
                        .providerTimeout(Duration.ofSeconds(3))
                        .initialBackoff(Duration.ofMillis(200))
                        .maxBackoff(Duration.ofSeconds(2));
        try (ObjectStore store = b.open()) {
            store.put("x", new byte[] {1});
            assertEquals(1, store.get("x").length);
        }
        String s = b.toString();
        assertTrue(s.contains("initialBackoff=PT0.2S"), s);
    }

    @Test
    void clientSettingsBecomeOptions() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        ObjectStore.Builder b =
                ObjectStore.builder(server.uri(prefix))
                        .options(server.options(creds))
                        .requestTimeout(Duration.ofMillis(1500))
                        .connectTimeout(Duration.ofSeconds(1))
                        .maxRetries(2)
                        .retryTimeout(Duration.ofSeconds(3));
        String s = b.toString();
        assertTrue(s.contains("timeout=1500ms"), s);
        assertTrue(s.contains("connect_timeout=1000ms"), s);
        assertTrue(s.contains("max_retries=2"), s);
        assertTrue(s.contains("retry_timeout=3000ms"), s);
        assertFalse(s.contains(creds.secretAccessKey()), s);
        try (ObjectStore store = b.open()) {
            assertEquals(4, store.get("seed.bin").length);
        }
    }

    /**
     * Provider calls made by gets every 20 ms for {@code windowMillis} after the credentials
     * expired, while the provider always fails.
     */
    private static int failingProviderCalls(Duration initial, Duration max, long windowMillis)
            throws Exception {
        VendedCredentials gen1 = server.issueCredentials(1_500, null);
        ScriptedProvider provider =
                new ScriptedProvider().otherwise(throwing(new RuntimeException("catalog down")));
        ObjectStore.Builder b =
                ObjectStore.builder(server.uri(prefix))
                        .options(server.options(gen1))
                        .provider(provider);
        if (initial != null) {
            b.initialBackoff(initial).maxBackoff(max);
        }
        try (ObjectStore store = b.open()) {
            Waits.sleepUntil(gen1.expiresAtMillis() + 100);
            int before = provider.calls();
            long end = System.currentTimeMillis() + windowMillis;
            for (int i = 0; i < 10_000 && System.currentTimeMillis() < end; i++) {
                assertThrows(CredentialsException.class, () -> store.get("seed.bin"));
                Thread.sleep(20);
            }
            return provider.calls() - before;
        }
    }

    @Test
    void shortInitialBackoffCallsTheFailingProviderMoreOften() throws Exception {
        int fast = failingProviderCalls(Duration.ofMillis(50), Duration.ofMillis(100), 2_000);
        int slow = failingProviderCalls(null, null, 2_000); // 1 s, 2 s, ...
        // Fast: a call every 50-100 ms plus request time (~15-30 in 2 s); slow: 1-3.
        assertTrue(fast >= 8, () -> "fast backoff made only " + fast + " calls");
        assertTrue(slow <= 4, () -> "default backoff made " + slow + " calls");
        assertTrue(fast > 2 * slow, () -> "fast " + fast + " vs slow " + slow);
    }
}
