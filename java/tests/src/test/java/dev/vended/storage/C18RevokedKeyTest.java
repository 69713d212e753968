package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * C18: the endpoint rejects a credential the client believes valid (revoked key; expired at the
 * endpoint without an {@code expires_at_millis}). {@code head} (whose error answer has no body)
 * and {@code delete} recover with one refetch like {@code get}; without a provider, {@code head}
 * and {@code get} fail with the same exception type.
 */
@Timeout(60)
class C18RevokedKeyTest {

    private static final byte[] SEED = "seed".getBytes(StandardCharsets.UTF_8);

    /** The enforcing local endpoint, whatever VENDED_STORAGE_TEST_ENDPOINT says. */
    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("c18");

    private static String prefix;

    @BeforeAll
    static void seed() throws Exception {
        prefix = "c18-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(S3.uri(prefix), S3.storageOptions())) {
            root.put("seed.bin", SEED);
            root.put("doomed.bin", SEED);
        }
    }

    @Test
    void c18_headAndDeleteRecoverFromARevokedKeyWithOneRefetch() throws Exception {
        VendedCredentials gen1 = S3.mintCredentials(Duration.ofSeconds(60));
        RecordingProvider provider = S3.provider(Duration.ofSeconds(60));
        try (ObjectStore store =
                ObjectStore.open(S3.uri(prefix), S3.storageOptions(gen1), provider)) {
            S3.revoke(gen1.accessKeyId());
            assertEquals(SEED.length, store.head("seed.bin").size());
            assertEquals(1, provider.calls(), "head: one refetch");
            assertEquals(1, store.refreshStats().authRefetches());
            assertEquals(1, store.refreshStats().endpointRejections());

            S3.revoke(provider.vendedKeyIds().get(0));
            store.delete("doomed.bin");
            assertEquals(2, provider.calls(), "delete: one more refetch");
            assertEquals(2, store.refreshStats().authRefetches());
            assertThrows(ObjectNotFoundException.class, () -> store.head("doomed.bin"));
        }
    }

    @Test
    void c18_expiredAtEndpointWithoutExpiryGivesTheSameTypeOnHeadAndGet() throws Exception {
        VendedCredentials shortLived = S3.mintCredentials(Duration.ofMillis(1_000));
        Map<String, String> options = new HashMap<>(S3.storageOptions(shortLived));
        options.remove("expires_at_millis"); // the client believes it never expires
        try (ObjectStore store = ObjectStore.open(S3.uri(prefix), options)) {
            assertEquals(SEED.length, store.head("seed.bin").size());
            Waits.sleepUntil(shortLived.expiresAtMillis() + 300);
            StorageException onHead = assertThrows(StorageException.class, () -> store.head("seed.bin"));
            StorageException onGet = assertThrows(StorageException.class, () -> store.get("seed.bin"));
            assertEquals(CredentialsException.class, onHead.getClass(), onHead::toString);
            assertEquals(onGet.getClass(), onHead.getClass(), () -> onGet + " vs " + onHead);
            assertEquals(onGet.kind(), onHead.kind());
            assertEquals(StorageException.Kind.CREDENTIALS, onHead.kind());
        }
    }
}
