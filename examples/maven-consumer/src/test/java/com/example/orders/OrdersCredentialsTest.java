package com.example.orders;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

class OrdersCredentialsTest {
    // The enforcing local S3 endpoint (127.0.0.1, a free port) with bucket "tables", per class.
    @RegisterExtension
    static LocalS3Extension s3 = LocalS3Extension.create().bucket("tables");

    // region:testkit
    @Test
    @Timeout(60)
    void myProviderIsCalledAgainOnlyWhenItsCredentialsRunOut() throws Exception {
        // A fake of your catalog: each call vends STS credentials from the endpoint, 3 s long.
        List<VendedCredentials> vended = new CopyOnWriteArrayList<>();
        CatalogClient catalog = table -> {
            VendedCredentials c = s3.server().assumeRole(3); // seconds; an unsigned STS call
            vended.add(c);
            return c.toOptions(); // aws_access_key_id, ..., expires_at_millis
        };
        OrdersCredentials provider = new OrdersCredentials(catalog, "db.orders");
        Map<String, String> options = new HashMap<>(s3.endpointOptions()); // URL, region, http
        // Seeds the store: call 1 (null, "nothing new", is allowed by the contract).
        options.putAll(Objects.requireNonNullElse(provider.fetchStorageOptions(), Map.of()));
        byte[] data = {1, 2, 3};
        try (ObjectStore store = ObjectStore.open(s3.uri("orders/"), options, provider)) {
            store.put("part-0", data);
            // Idle past expiry: no refresh happens without requests.
            Waits.sleepUntil(vended.get(0).expiresAtMillis() + 200);
            assertEquals(1, vended.size());
            assertArrayEquals(data, store.get("part-0")); // refetches first: call 2
            assertEquals(2, vended.size());
        }
        assertEndpointSawOnlyValidKeys(vended);
    }
    // endregion

    /** Per access key id, what the endpoint accepted and refused (and why). */
    private static void assertEndpointSawOnlyValidKeys(List<VendedCredentials> vended) {
        Map<String, KeyStats> stats = s3.stats();
        KeyStats first = stats.get(vended.get(0).accessKeyId());
        KeyStats second = stats.get(vended.get(1).accessKeyId());
        assertEquals(0, first.rejected() + second.rejected()); // never signed with an old key
        assertTrue(second.accepted() >= 1, "the read was signed with the second key");
        // Unsigned requests count under the empty key "": here the two AssumeRole calls.
        assertEquals(2, stats.get("").accepted());
    }

    @BeforeAll
    static void loadTheNativeLibrary() throws Exception {
        // The first open in a JVM loads the library (seconds on a busy machine): do it before
        // vending 3 s credentials whose provider calls the tests count exactly.
        ObjectStore.open("memory://warm-up", Map.of()).close();
    }

    @Test
    @Timeout(60)
    void anExpiredStaticKeyIsRefused() throws Exception {
        VendedCredentials key = s3.mintCredentials(Duration.ofSeconds(1)); // no STS call
        Map<String, String> options = s3.storageOptions(key);
        options.remove("expires_at_millis"); // static, and no provider to refresh from
        Waits.sleepUntil(key.expiresAtMillis() + 200);
        try (ObjectStore stale = ObjectStore.open(s3.uri("orders/"), options)) {
            assertThrows(CredentialsException.class, () -> stale.get("part-0"));
        }
        assertEquals(1, s3.stats(key.accessKeyId()).expired()); // KeyStats.NONE if never seen
    }
}
