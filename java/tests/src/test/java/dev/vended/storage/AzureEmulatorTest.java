package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.AzuriteServer.SasProvider;
import dev.vended.storage.testkit.EmulatorProxy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The same {@link ObjectStore} API on {@code az://} against Azurite, which enforces SAS
 * signatures and the SAS expiry {@code se} (403, no grace). A Java {@link StorageOptionsProvider}
 * mints short account SAS tokens with javax.crypto (Azurite's public development key); a
 * counting proxy in front of Azurite shows that no request was rejected at the endpoint, not
 * only that none failed at the caller.
 */
class AzureEmulatorTest {

    private static final String CONTAINER = "vended";
    private static AzuriteServer azurite;
    private static EmulatorProxy proxy;

    @BeforeAll
    static void start() throws Exception {
        azurite = Emulators.startAzurite();
        System.out.println("azurite started in " + azurite.startedIn());
        azurite.createContainer(CONTAINER);
        proxy = new EmulatorProxy(azurite.url(), null);
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (azurite != null) {
            azurite.close();
        }
    }

    /** Where the store is (kept across refreshes: the provider vends credentials only). */
    private static Map<String, String> initial(Map<String, String> credentials) {
        return AzuriteServer.storeOptions(proxy.url, credentials);
    }

    @Test
    @Timeout(90)
    void azureSasTokensRefreshAcrossSeveralWindowsOfPutGetListDelete() throws Exception {
        SasProvider provider = new SasProvider(Duration.ofSeconds(3));
        int rejectedBefore = proxy.rejections();
        Instant started = Instant.now();
        int rounds = 0;
        try (ObjectStore store =
                ObjectStore.open("az://" + CONTAINER + "/java", initial(provider.vend(false)), provider)) {
            assertEquals(0, provider.calls(), "the initial options seed the cache");
            Instant deadline = started.plusSeconds(9); // three 3 s SAS lifetimes
            while (Instant.now().isBefore(deadline) && rounds < 10_000) {
                String path = "round-" + rounds + "/obj";
                byte[] data = ("round " + rounds).getBytes(StandardCharsets.UTF_8);
                store.put(path, data);
                assertArrayEquals(data, store.get(path));
                List<ObjectMeta> listed = store.list("round-" + rounds);
                assertEquals(1, listed.size(), "list of round " + rounds);
                assertEquals(data.length, listed.get(0).size());
                store.delete(path);
                assertThrows(ObjectNotFoundException.class, () -> store.head(path));
                rounds++;
            }
            RefreshStats stats = store.refreshStats();
            System.out.printf(
                    "azure: %d rounds of put/get/list/delete in %s, %d provider calls, %d requests%n",
                    rounds, Duration.between(started, Instant.now()), provider.calls(),
                    proxy.requests.get());
            assertTrue(rounds > 10, "only " + rounds + " rounds");
            assertTrue(
                    provider.calls() >= 3 && provider.calls() <= 30,
                    "provider called " + provider.calls() + " times in 9 s of 3 s SAS tokens");
            assertEquals(0, stats.failures(), stats.toString());
            assertEquals(provider.calls() + 1, stats.generation(), stats.toString());
            assertEquals(0, stats.endpointRejections(), stats.toString());
            for (String sig : provider.signatures()) {
                assertFalse(store.toString().contains(sig), "SAS signature in toString");
            }
        }
        assertEquals(0, proxy.rejections() - rejectedBefore, "Azurite rejected requests");
    }

    @Test
    @Timeout(60)
    void azureRejectedSasIsRefetchedOnceAndRetriedForEveryOperation() throws Exception {
        try (ObjectStore writer =
                ObjectStore.open(
                        "az://" + CONTAINER + "/c18",
                        initial(new SasProvider(Duration.ofSeconds(60)).vend(false)),
                        null)) {
            for (String name : List.of("get", "list/x", "delete")) {
                writer.put(name, "0123456789".getBytes(StandardCharsets.UTF_8));
            }
        }
        for (String op : List.of("put", "get", "list", "delete")) {
            SasProvider provider = new SasProvider(Duration.ofSeconds(60));
            // A SAS Azurite rejects (wrong signature, se a minute away): the store cannot know
            // before Azurite answers 403.
            try (ObjectStore store =
                    ObjectStore.open("az://" + CONTAINER + "/c18", initial(provider.vend(true)), provider)) {
                int before = proxy.rejections();
                switch (op) {
                    case "put" -> store.put("put", new byte[] {1});
                    case "get" -> assertEquals(10, store.get("get").length);
                    case "list" -> assertEquals(1, store.list("list").size());
                    default -> store.delete("delete");
                }
                assertEquals(1, provider.calls(), op + ": exactly one refetch");
                assertEquals(1, proxy.rejections() - before, op + ": one rejected request, then the retry");
                assertEquals(1, store.refreshStats().endpointRejections(), op);
            }
        }
    }
}
