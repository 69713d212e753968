package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.IssuingProvider;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Native errors reach Java as the documented types: a missing object is {@link
 * ObjectNotFoundException}, a request outside a key's scope (AccessDenied) is {@link
 * CredentialsException}, unusable options are {@link InvalidOptionsException}.
 */
@Timeout(60)
class ErrorMappingTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("errors");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertNotFound(ObjectStore store) {
        List<Executable> calls =
                List.of(
                        () -> store.get("no/such/object"),
                        () -> store.getRange("no/such/object", 0, 4),
                        () -> store.head("no/such/object"));
        for (Executable call : calls) {
            ObjectNotFoundException e = assertThrows(ObjectNotFoundException.class, call);
            assertTrue(e.getMessage().contains("no/such/object"), e.getMessage());
        }
    }

    @Test
    void missingObjectIsObjectNotFoundOnS3() throws Exception {
        try (ObjectStore store =
                ObjectStore.open(
                        server.uri("nf-" + UUID.randomUUID() + "/"), server.rootOptions())) {
            assertNotFound(store);
            store.delete("no/such/object"); // not an error on S3
        }
    }

    @Test
    void missingObjectIsObjectNotFoundOnMemoryAndFileStores(@TempDir Path dir) throws Exception {
        try (ObjectStore store =
                ObjectStore.open("memory:///nf-" + UUID.randomUUID() + "/", null)) {
            assertNotFound(store);
        }
        try (ObjectStore store = ObjectStore.open(dir.toUri().toString(), null)) {
            assertNotFound(store);
        }
    }

    @Test
    void scopedKeyOutsideItsPrefixIsCredentialsException() throws Exception {
        String base = "scoped-" + UUID.randomUUID();
        VendedCredentials scoped =
                server.issueCredentials(60_000, server.bucket() + "/" + base + "/allowed");
        try (ObjectStore root = ObjectStore.open(server.uri(base + "/"), server.rootOptions());
                ObjectStore store =
                        ObjectStore.open(server.uri(base + "/"), server.options(scoped))) {
            root.put("other/secret.bin", new byte[] {1});
            store.put("allowed/x.bin", new byte[] {2});
            assertArrayEquals(new byte[] {2}, store.get("allowed/x.bin"));

            List<Executable> outside =
                    List.of(
                            () -> store.get("other/secret.bin"),
                            () -> store.getRange("other/secret.bin", 0, 1),
                            () -> store.put("other/new.bin", new byte[] {3}),
                            () -> store.list("other"),
                            () -> store.head("other/secret.bin"));
            for (Executable call : outside) {
                CredentialsException e = assertThrows(CredentialsException.class, call);
                assertFalse(e.getMessage().contains(scoped.secretAccessKey()), e.getMessage());
            }
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> store.get("other/secret.bin"));
            assertTrue(e.getMessage().contains("AccessDenied"), e.getMessage());
        }
        KeyStats k = server.stats(scoped.accessKeyId());
        assertTrue(k.denied() >= 5, k::toString);
    }

    @Test
    void scopedProviderOutsideItsPrefixIsCredentialsExceptionWithoutARefetchLoop()
            throws Exception {
        String base = "scoped-p-" + UUID.randomUUID();
        IssuingProvider provider =
                new IssuingProvider(server, 60_000, server.bucket() + "/" + base + "/allowed");
        try (ObjectStore root = ObjectStore.open(server.uri(base + "/"), server.rootOptions());
                ObjectStore store =
                        ObjectStore.open(
                                server.uri(base + "/"), server.endpointOptions(), provider)) {
            root.put("other/x.bin", new byte[] {1});
            store.put("allowed/x.bin", new byte[] {2});
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> store.get("other/x.bin"));
            assertTrue(e.getMessage().contains("AccessDenied"), e.getMessage());
            assertArrayEquals(new byte[] {2}, store.get("allowed/x.bin"));
        }
        assertTrue(provider.calls() <= 2, "provider calls: " + provider.calls());
    }

    @Test
    void unusableOptionsAreInvalidOptionsException() {
        Map<String, String> unknownKey = server.rootOptions();
        unknownKey.put("aws_no_such_option", "1");
        Map<String, String> badExpiry = server.rootOptions();
        badExpiry.put("expires_at_millis", "soon");
        Map<String, String> halfCredential = server.endpointOptions();
        halfCredential.put("aws_access_key_id", "AKID");
        List<Executable> opens =
                List.of(
                        () -> ObjectStore.open(server.uri("x/"), unknownKey).close(),
                        () -> ObjectStore.open(server.uri("x/"), badExpiry).close(),
                        () -> ObjectStore.open(server.uri("x/"), halfCredential).close(),
                        () -> ObjectStore.open(server.uri("x/"), server.endpointOptions()).close(),
                        () -> ObjectStore.open("nosuchscheme://bucket/x/", null).close());
        for (Executable open : opens) {
            InvalidOptionsException e = assertThrows(InvalidOptionsException.class, open);
            assertFalse(
                    e.getMessage().contains(LocalS3Server.ROOT_SECRET_ACCESS_KEY),
                    e.getMessage());
        }
    }

    @Test
    void closedStoreIsIllegalStateException() throws Exception {
        ObjectStore store = ObjectStore.open(server.uri("closed/"), server.rootOptions());
        store.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.get("x"));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertEquals(true, store.isClosed());
    }
}
