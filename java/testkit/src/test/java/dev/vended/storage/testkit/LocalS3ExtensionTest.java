package dev.vended.storage.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The extension against the enforcing local endpoint (bundled binary, as in a user's project). */
class LocalS3ExtensionTest {

    @RegisterExtension
    static final LocalS3Extension S3 =
            LocalS3Extension.create().localOnly().bucket("ext-main").bucket("ext-other");

    private static final byte[] DATA = "testkit extension".getBytes(StandardCharsets.UTF_8);

    @Test
    void startsTheLocalEndpointWithEveryBucket() throws Exception {
        assertTrue(S3.isLocal());
        assertTrue(S3.endpoint().startsWith("http://127.0.0.1:"), S3.endpoint());
        assertEquals(List.of("ext-main", "ext-other"), S3.buckets());
        assertEquals("ext-main", S3.bucket());
        assertEquals("s3://ext-main/t/", S3.uri("t/"));
        assertTrue(S3.server().isAlive());
        for (String bucket : S3.buckets()) {
            try (ObjectStore store =
                    ObjectStore.open("s3://" + bucket + "/root/", S3.storageOptions())) {
                store.put("a.txt", DATA);
                assertArrayEquals(DATA, store.get("a.txt"));
            }
        }
        assertTrue(S3.stats(LocalS3Server.ROOT_ACCESS_KEY_ID).accepted() >= 4);
    }

    @Test
    void injectsItselfAsAParameter(LocalS3Extension injected) {
        assertSame(S3, injected);
    }

    @Test
    @Timeout(60)
    void mintedCredentialsExpireAtTheEndpoint() throws Exception {
        VendedCredentials creds = S3.mintCredentials(Duration.ofMillis(1_500));
        long lifetime = creds.expiresAtMillis() - System.currentTimeMillis();
        assertTrue(lifetime > 0 && lifetime <= 1_500, "lifetime " + lifetime);
        Map<String, String> options = S3.storageOptions(creds);
        options.remove("expires_at_millis"); // static: the store must not refresh by itself
        try (ObjectStore store = ObjectStore.open(S3.uri("minted/"), options)) {
            store.put("x", DATA);
            Waits.sleepUntil(creds.expiresAtMillis() + 200); // the scenario: past expiry
            assertThrows(CredentialsException.class, () -> store.get("x"));
        }
        KeyStats stats = S3.stats(creds.accessKeyId());
        assertEquals(1, stats.accepted(), stats.toString());
        assertTrue(stats.expired() >= 1, stats.toString());
        assertTrue(
                S3.requests().stream()
                        .anyMatch(
                                r ->
                                        r.accessKeyId().equals(creds.accessKeyId())
                                                && !r.accepted()
                                                && "ExpiredToken".equals(r.reason())
                                                && r.status() == 400
                                                && "minted/x".equals(r.key())),
                "no ExpiredToken record in the request log");
    }

    @Test
    @Timeout(60)
    void providerRotatesKeysAcrossExpiry() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofSeconds(2));
        try (ObjectStore store =
                ObjectStore.open(S3.uri("rotating/"), provider.fetchStorageOptions(), provider)) {
            store.put("x", DATA);
            long firstExpiry = provider.vended().get(0).expiresAtMillis();
            Waits.sleepUntil(firstExpiry + 200); // the scenario: past the first key's expiry
            assertArrayEquals(DATA, store.get("x"));
        }
        List<String> keys = provider.vendedKeyIds();
        assertTrue(keys.size() >= 2, "provider called " + keys.size() + " times");
        assertNotEquals(keys.get(0), keys.get(1));
        for (String key : keys) {
            assertEquals(0, S3.stats(key).rejected(), key + ": " + S3.stats(key));
        }
    }

    @Test
    void scopedProviderIsConfinedToItsPrefix() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "allowed/");
        Map<String, String> options = provider.fetchStorageOptions();
        try (ObjectStore inside = ObjectStore.open(S3.uri("allowed/"), options, provider)) {
            inside.put("x", DATA);
        }
        try (ObjectStore outside = ObjectStore.open(S3.uri("forbidden/"), options, provider)) {
            assertThrows(CredentialsException.class, () -> outside.put("x", DATA));
        }
        KeyStats stats = S3.stats(provider.vendedKeyIds().get(0));
        assertTrue(stats.accepted() >= 1, stats.toString());
        assertTrue(stats.denied() >= 1, stats.toString());
    }

    @Test
    void revokedKeysAreRefused() throws Exception {
        VendedCredentials creds = S3.mintCredentials(Duration.ofMinutes(5));
        Map<String, String> options = S3.storageOptions(creds);
        try (ObjectStore store = ObjectStore.open(S3.uri("revoked/"), options)) {
            store.put("x", DATA);
            S3.revoke(creds.accessKeyId());
            assertThrows(CredentialsException.class, () -> store.get("x"));
        }
        assertTrue(S3.stats(creds.accessKeyId()).invalidKey() >= 1);
    }

    @Test
    void createsBucketsOnDemand() throws Exception {
        S3.createBucket("ext-late");
        try (ObjectStore store = ObjectStore.open("s3://ext-late/", S3.storageOptions())) {
            store.put("x", DATA);
            assertEquals(1, store.list(null).size());
        }
    }

    @Test
    void rejectsBadArguments() {
        assertThrows(IllegalArgumentException.class, () -> S3.provider(Duration.ofMillis(-1)));
        assertThrows(
                IllegalArgumentException.class, () -> S3.mintCredentials(Duration.ofDays(4000)));
        assertThrows(IllegalStateException.class, () -> S3.bucket("too-late"));
        assertThrows(IllegalStateException.class, () -> S3.target(() -> null));
        assertFalse(S3.toString().contains(LocalS3Server.ROOT_SECRET_ACCESS_KEY));
    }
}
