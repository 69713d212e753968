package dev.vended.storage.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A user's own JUnit 5 test with the testkit's extension: by default against the enforcing local
 * endpoint; with {@code VENDED_STORAGE_TEST_ENDPOINT} (and its keys) set, against that endpoint,
 * where {@link #expiredKeysAreRefusedByTheEndpoint()} is skipped.
 */
// region:junit-testkit
class UserJUnitExampleTest {

    // Starts the local S3 endpoint (127.0.0.1, free port) with bucket "tables" for this class.
    @RegisterExtension
    static LocalS3Extension s3 = LocalS3Extension.create().bucket("tables");

    @Test
    @Timeout(60)
    void readsKeepWorkingWhileCredentialsRotate() throws Exception {
        // Each call vends credentials that live 2 s (on the local endpoint: a new key each time).
        RecordingProvider catalog = s3.provider(Duration.ofSeconds(2));
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
        try (ObjectStore store =
                ObjectStore.open(s3.uri("orders/"), catalog.fetchStorageOptions(), catalog)) {
            store.put("part-0", data);
            Waits.sleepUntil(catalog.vended().get(0).expiresAtMillis() + 200);
            assertArrayEquals(data, store.get("part-0"));
        }
        assertTrue(catalog.calls() >= 2, "the store refreshed its credentials");
    }

    @Test
    @Timeout(60)
    void expiredKeysAreRefusedByTheEndpoint() throws Exception {
        // Minting, revoking and counters need the local endpoint (skipped elsewhere).
        VendedCredentials key = s3.mintCredentials(Duration.ofSeconds(1));
        try (ObjectStore store = ObjectStore.open(s3.uri("orders/"), s3.storageOptions())) {
            store.put("part-1", new byte[] {1});
        }
        Waits.sleepUntil(key.expiresAtMillis() + 200);
        var options = s3.storageOptions(key);
        options.remove("expires_at_millis"); // static: no provider to refresh from
        try (ObjectStore stale = ObjectStore.open(s3.uri("orders/"), options)) {
            assertThrows(CredentialsException.class, () -> stale.get("part-1"));
        }
        KeyStats stats = s3.stats(key.accessKeyId());
        assertEquals(1, stats.expired());
    }
}
// endregion
