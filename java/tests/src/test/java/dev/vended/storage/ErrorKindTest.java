package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Every exception carries the core's kind ({@link StorageException#kind()}) and retryability
 * ({@link StorageException#isRetryable()}), so a program acts on them without parsing messages.
 */
@Timeout(60)
class ErrorKindTest {

    private static final byte[] DATA = "data".getBytes(StandardCharsets.UTF_8);

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("kinds");
        prefix = "kinds-" + UUID.randomUUID() + "/";
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertKind(
            StorageException e, StorageException.Kind kind, boolean retryable) {
        assertEquals(kind, e.kind(), () -> "kind of " + e);
        assertEquals(retryable, e.isRetryable(), () -> "retryable of " + e);
        assertFalse(e.getMessage().contains("\n"), () -> "not one line: " + e.getMessage());
    }

    @Test
    void notFound() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            ObjectNotFoundException e =
                    assertThrows(ObjectNotFoundException.class, () -> store.get("missing.bin"));
            assertKind(e, StorageException.Kind.NOT_FOUND, false);
            e = assertThrows(ObjectNotFoundException.class, () -> store.head("missing.bin"));
            assertKind(e, StorageException.Kind.NOT_FOUND, false);
        }
    }

    @Test
    void alreadyExistsViaPutIfAbsent() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            store.putIfAbsent("once.bin", DATA);
            ObjectAlreadyExistsException e =
                    assertThrows(
                            ObjectAlreadyExistsException.class,
                            () -> store.putIfAbsent("once.bin", DATA));
            assertKind(e, StorageException.Kind.ALREADY_EXISTS, false);
        }
    }

    @Test
    void preconditionViaPutIfMatch() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            store.put("cas.bin", DATA);
            PreconditionFailedException e =
                    assertThrows(
                            PreconditionFailedException.class,
                            () -> store.putIfMatch("cas.bin", DATA, "\"not-the-etag\""));
            assertKind(e, StorageException.Kind.PRECONDITION, false);
        }
    }

    @Test
    void credentialsViaRevokedKeyWithStaticOptions() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), server.options(creds))) {
            store.put("revoked.bin", DATA);
            server.revoke(creds.accessKeyId());
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> store.get("revoked.bin"));
            assertKind(e, StorageException.Kind.CREDENTIALS, false);
            assertFalse(e.getMessage().contains(creds.secretAccessKey()), e.getMessage());
        }
    }

    @Test
    void providerFailureIsRetryableCredentials() {
        RuntimeException boom = new RuntimeException("catalog down");
        CredentialsException e =
                assertThrows(
                        CredentialsException.class,
                        () ->
                                ObjectStore.open(
                                                server.uri(prefix),
                                                server.endpointOptions(),
                                                () -> {
                                                    throw boom;
                                                })
                                        .get("x"));
        assertKind(e, StorageException.Kind.CREDENTIALS, true);
        assertEquals(boom, e.getCause());
    }

    @Test
    void invalidOptions() {
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class,
                        () -> ObjectStore.open("nosuchscheme://b/p/", Map.of()));
        assertKind(e, StorageException.Kind.INVALID_OPTIONS, false);
    }

    @Test
    void transientWhenTheEndpointIsDown() throws Exception {
        Map<String, String> options = new HashMap<>(server.rootOptions());
        // A port nothing listens on: the connection is refused at once.
        options.put("aws_endpoint", "http://127.0.0.1:9");
        try (ObjectStore store =
                ObjectStore.builder(server.uri(prefix))
                        .options(options)
                        .maxRetries(0)
                        .connectTimeout(Duration.ofSeconds(2))
                        .open()) {
            StorageException e = assertThrows(StorageException.class, () -> store.get("x"));
            assertKind(e, StorageException.Kind.TRANSIENT, true);
        }
    }

    @Test
    void everyExceptionHasTheConstructorTheNativeSideUses() throws Exception {
        for (Class<?> c :
                new Class<?>[] {
                    StorageException.class,
                    ObjectNotFoundException.class,
                    ObjectAlreadyExistsException.class,
                    PreconditionFailedException.class,
                    CredentialsException.class,
                    InvalidOptionsException.class,
                    StorageTimeoutException.class
                }) {
            StorageException e =
                    (StorageException)
                            c.getDeclaredConstructor(
                                            String.class, Throwable.class, String.class, boolean.class)
                                    .newInstance("m", null, "TRANSIENT", true);
            assertEquals(StorageException.Kind.TRANSIENT, e.kind(), c.getName());
            assertTrue(e.isRetryable(), c.getName());
        }
    }

    @Test
    void publicConstructorsKeepTheirKinds() {
        assertEquals(StorageException.Kind.IO, new StorageException("m").kind());
        assertEquals(StorageException.Kind.NOT_FOUND, new ObjectNotFoundException("m").kind());
        assertEquals(StorageException.Kind.TIMEOUT, new StorageTimeoutException("m").kind());
        assertTrue(new StorageTimeoutException("m").isRetryable());
        assertFalse(new CredentialsException("m", null).isRetryable());
        assertEquals(
                StorageException.Kind.IO,
                new StorageException("m", null, "NO_SUCH_KIND", false).kind());
    }
}
