package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.vended.storage.testkit.IssuingProvider;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
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

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c18");
        prefix = "c18-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            root.put("seed.bin", SEED);
            root.put("doomed.bin", SEED);
        }
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void c18_headAndDeleteRecoverFromARevokedKeyWithOneRefetch() throws Exception {
        VendedCredentials gen1 = server.issueCredentials(60_000, null);
        IssuingProvider provider = new IssuingProvider(server, 60_000, null);
        try (ObjectStore store =
                ObjectStore.open(server.uri(prefix), server.options(gen1), provider)) {
            server.revoke(gen1.accessKeyId());
            assertEquals(SEED.length, store.head("seed.bin").size());
            assertEquals(1, provider.calls(), "head: one refetch");
            assertEquals(1, store.refreshStats().authRefetches());
            assertEquals(1, store.refreshStats().endpointRejections());

            server.revoke(provider.vendedKeyIds().get(0));
            store.delete("doomed.bin");
            assertEquals(2, provider.calls(), "delete: one more refetch");
            assertEquals(2, store.refreshStats().authRefetches());
            assertThrows(ObjectNotFoundException.class, () -> store.head("doomed.bin"));
        }
    }

    @Test
    void c18_expiredAtEndpointWithoutExpiryGivesTheSameTypeOnHeadAndGet() throws Exception {
        VendedCredentials shortLived = server.issueCredentials(1_000, null);
        Map<String, String> options = new HashMap<>(server.options(shortLived));
        options.remove("expires_at_millis"); // the client believes it never expires
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), options)) {
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
