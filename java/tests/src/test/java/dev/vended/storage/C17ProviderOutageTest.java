package dev.vended.storage;

import static dev.vended.storage.testkit.ScriptedProvider.throwing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
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

/**
 * C17: the provider is down (always throws) after the credentials expired. Callers fail fast with
 * the provider's failure while the refresher backs off, instead of each calling the provider; once
 * the provider heals, the same store works again.
 */
@Timeout(60)
class C17ProviderOutageTest {

    private static final byte[] SEED = "seed".getBytes(StandardCharsets.UTF_8);

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c17");
        prefix = "c17-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            root.put("seed.bin", SEED);
        }
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void c17_providerDownAfterExpiryFailsFastThenHeals() throws Exception {
        VendedCredentials gen1 = server.issueCredentials(1_500, null);
        RuntimeException down = new RuntimeException("catalog down");
        ScriptedProvider provider = new ScriptedProvider(throwing(down));
        try (ObjectStore store =
                ObjectStore.builder(server.uri(prefix))
                        .options(server.options(gen1))
                        .provider(provider)
                        .initialBackoff(Duration.ofMillis(200))
                        .maxBackoff(Duration.ofMillis(400))
                        .open()) {
            assertArrayEquals(SEED, store.get("seed.bin"));
            Waits.sleepUntil(gen1.expiresAtMillis() + 200);
            int before = provider.calls();

            for (int i = 0; i < 200; i++) {
                CredentialsException e =
                        assertThrows(CredentialsException.class, () -> store.get("seed.bin"));
                assertSame(down, e.getCause(), () -> "cause of " + e);
                assertTrue(e.getMessage().contains("catalog down"), e.getMessage());
                assertEquals(StorageException.Kind.CREDENTIALS, e.kind());
                assertTrue(e.isRetryable(), "a provider exception is retryable");
            }
            int calls = provider.calls() - before;
            assertTrue(calls >= 1 && calls <= 10, () -> "200 gets made " + calls + " provider calls");
            RefreshStats failing = store.refreshStats();
            assertTrue(failing.failures() >= calls, failing::toString);
            assertTrue(failing.fetches() >= calls, failing::toString);
            assertTrue(failing.backoffRejections() >= 150, failing::toString);

            provider.otherwise(() -> server.options(server.issueCredentials(60_000, null)));
            byte[] back = null;
            long deadline = System.currentTimeMillis() + 10_000;
            while (back == null && System.currentTimeMillis() < deadline) {
                try {
                    back = store.get("seed.bin");
                } catch (CredentialsException stillBackingOff) {
                    Thread.sleep(50);
                }
            }
            assertArrayEquals(SEED, back, "the store did not recover after the provider healed");
            RefreshStats healed = store.refreshStats();
            assertTrue(healed.generation() > failing.generation(), healed::toString);
        }
    }
}
