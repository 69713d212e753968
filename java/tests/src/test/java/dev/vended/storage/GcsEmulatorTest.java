package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.EmulatorProxy;
import dev.vended.storage.testkit.FakeGcsServer;
import dev.vended.storage.testkit.FakeGcsServer.TokenProvider;

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
 * The same {@link ObjectStore} API on {@code gs://} against fake-gcs-server, behind {@link
 * FakeGcsServer}'s {@link EmulatorProxy} in GCS mode: it accepts only bearer tokens it issued
 * and answers 401 for expired or revoked ones (fake-gcs-server checks no token at all). Stock
 * fake-gcs-server serves no XML-API list, so the rounds are put/get/head/delete.
 */
class GcsEmulatorTest {

    private static final String BUCKET = "vended";
    private static FakeGcsServer gcs;
    private static EmulatorProxy proxy;

    @BeforeAll
    static void start() throws Exception {
        gcs = Emulators.startFakeGcs();
        System.out.println("fake-gcs-server started in " + gcs.startedIn());
        gcs.createBucket(BUCKET);
        proxy = gcs.proxy();
    }

    @AfterAll
    static void stop() {
        if (gcs != null) {
            gcs.close();
        }
    }

    private static Map<String, String> initial(Map<String, String> credentials) {
        return gcs.storeOptions(credentials);
    }

    @Test
    @Timeout(90)
    void gcsTokensRefreshAcrossSeveralWindowsOfPutGetHeadDelete() throws Exception {
        TokenProvider provider = gcs.tokenProvider(Duration.ofSeconds(2));
        int rejectedBefore = proxy.rejections();
        Instant started = Instant.now();
        int rounds = 0;
        Map<String, String> first = initial(provider.vend());
        ObjectStore controlStore = ObjectStore.open("gs://" + BUCKET + "/control", first, null);
        try (ObjectStore store = ObjectStore.open("gs://" + BUCKET + "/java", first, provider)) {
            Instant deadline = started.plusSeconds(8); // four 2 s token lifetimes
            while (Instant.now().isBefore(deadline) && rounds < 10_000) {
                String path = "round-" + rounds + "/obj";
                byte[] data = ("round " + rounds).getBytes(StandardCharsets.UTF_8);
                store.put(path, data);
                assertArrayEquals(data, store.get(path));
                assertEquals(data.length, store.head(path).size());
                store.delete(path);
                assertThrows(ObjectNotFoundException.class, () -> store.head(path));
                rounds++;
            }
            RefreshStats stats = store.refreshStats();
            System.out.printf(
                    "gcs: %d rounds of put/get/head/delete in %s, %d provider calls, %d requests%n",
                    rounds, Duration.between(started, Instant.now()), provider.calls(),
                    proxy.requests.get());
            assertTrue(rounds > 10, "only " + rounds + " rounds");
            assertTrue(
                    provider.calls() >= 4 && provider.calls() <= 40,
                    "provider called " + provider.calls() + " times in 8 s of 2 s tokens");
            assertEquals(0, stats.failures(), stats.toString());
            assertEquals(0, stats.endpointRejections(), stats.toString());
        }
        assertEquals(0, proxy.rejections() - rejectedBefore, "the proxy rejected requests");

        // Control: the first token, now expired, as static options (opened with its real
        // expiry before the run, as static options already expired are refused) is rejected
        // (401).
        try (ObjectStore control = controlStore) {
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> control.put("x", new byte[] {1}));
            for (String token : provider.vended()) {
                assertFalse(e.toString().contains(token), "token in the error");
                assertFalse(control.toString().contains(token), "token in toString");
            }
        }
        assertEquals(1, proxy.rejections() - rejectedBefore);
    }

    @Test
    @Timeout(60)
    void gcsRevokedTokenIsRefetchedOnceAndRetriedForEveryOperation() throws Exception {
        try (ObjectStore writer =
                ObjectStore.open(
                        "gs://" + BUCKET + "/c18",
                        initial(gcs.tokenProvider(Duration.ofSeconds(60)).vend()),
                        null)) {
            for (String name : List.of("get", "head", "delete")) {
                writer.put(name, "0123456789".getBytes(StandardCharsets.UTF_8));
            }
        }
        for (String op : List.of("put", "get", "head", "delete")) {
            TokenProvider provider = gcs.tokenProvider(Duration.ofSeconds(60));
            Map<String, String> first = provider.vend();
            gcs.tokens().revoke(first.get("google_storage_token"));
            try (ObjectStore store =
                    ObjectStore.open("gs://" + BUCKET + "/c18", initial(first), provider)) {
                int before = proxy.rejections();
                switch (op) {
                    case "put" -> store.put("put", new byte[] {1});
                    case "get" -> assertEquals(10, store.get("get").length);
                    case "head" -> assertEquals(10, store.head("head").size());
                    default -> store.delete("delete");
                }
                assertEquals(1, provider.calls(), op + ": exactly one refetch");
                assertEquals(1, proxy.rejections() - before, op + ": one rejected request, then the retry");
            }
        }
    }
}
