package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyAccess;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Issue 24, read versus write, through the testkit: a store opened with {@code
 * accessMode(AccessMode.READ)} (here with read-only keys, as a catalog vends them for reading)
 * reads and lists, and refuses every write itself: a {@link CredentialsException} (kind {@code
 * CREDENTIALS}, not retryable) naming the operation, the location and the read open, with no
 * request sent and no provider call. A {@code READ_WRITE} store writes. The two modes of one table
 * are two stores with their own credentials, even with one provider.
 */
@Timeout(60)
class AccessModeTest {

    private static final byte[] SEED = "seed".getBytes(StandardCharsets.UTF_8);

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("access");

    private static String prefix;

    @BeforeAll
    static void seed() throws Exception {
        prefix = "am-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(S3.uri(prefix), S3.storageOptions())) {
            root.put("t/obj", SEED);
        }
    }

    /** The call fails with a CredentialsException saying {@code operation location} was refused. */
    private static void assertRefused(Executable call, String operation, String location) {
        CredentialsException e = assertThrows(CredentialsException.class, call);
        assertEquals(StorageException.Kind.CREDENTIALS, e.kind());
        assertFalse(e.isRetryable(), e::toString);
        String expected =
                operation
                        + " "
                        + location
                        + " refused: the table was opened for reading (access mode READ), so this"
                        + " store sends no writes; open it with access mode READ_WRITE to write";
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void aReadStoreReadsAndRefusesEveryWriteWithoutARequest() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMinutes(10), null, KeyAccess.READ_ONLY);
        VendedCredentials key =
                S3.mintCredentials(Duration.ofMinutes(10), null, KeyAccess.READ_ONLY);
        String at = "s3://access/" + prefix + "t/";
        try (ObjectStore store =
                ObjectStore.builder(S3.uri(prefix))
                        .options(S3.storageOptions(key))
                        .provider(provider)
                        .accessMode(AccessMode.READ)
                        .open()) {
            assertArrayEquals(SEED, store.get("t/obj"));
            assertEquals(SEED.length, store.head("t/obj").size());
            assertEquals(List.of("t/obj"), store.list("t").stream().map(ObjectMeta::path).toList());
            KeyStats reads = S3.stats(key.accessKeyId());

            assertRefused(() -> store.put("t/new", SEED), "PUT", at + "new");
            assertRefused(() -> store.delete("t/obj"), "DELETE", at + "obj");
            assertRefused(() -> store.copy("t/obj", "t/copy"), "COPY", at + "obj -> " + at + "copy");
            assertRefused(
                    () -> store.rename("t/obj", "t/moved"), "RENAME", at + "obj -> " + at + "moved");
            Exception e =
                    assertThrows(
                            Exception.class,
                            () -> {
                                try (OutputStream out = store.openOutput("t/big")) {
                                    out.write(new byte[6 << 20]);
                                }
                            });
            assertTrue(String.valueOf(e.getMessage()).contains("opened for reading"), e::toString);

            assertEquals(reads, S3.stats(key.accessKeyId()), "no request sent for a refused write");
            assertArrayEquals(SEED, store.get("t/obj"));
        }
        assertEquals(0, provider.calls(), "no provider call for a refused write");
        assertTrue(S3.incompleteUploads().isEmpty(), () -> S3.incompleteUploads().toString());
    }

    @Test
    void aReadWriteStoreOfTheSameTableWrites() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMinutes(10));
        try (ObjectStore store =
                ObjectStore.builder(S3.uri(prefix))
                        .options(S3.endpointOptions())
                        .provider(provider)
                        .accessMode(AccessMode.READ_WRITE)
                        .open()) {
            store.put("w/rw", SEED);
            assertArrayEquals(SEED, store.get("w/rw"));
        }
        assertEquals(1, provider.calls());
    }

    @Test
    void theTwoModesOfOneTableHaveTheirOwnCredentials() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMinutes(10));
        try (ObjectStore read =
                        ObjectStore.builder(S3.uri(prefix))
                                .options(S3.endpointOptions())
                                .provider(provider)
                                .accessMode(AccessMode.READ)
                                .open();
                ObjectStore readWrite =
                        ObjectStore.builder(S3.uri(prefix))
                                .options(S3.endpointOptions())
                                .provider(provider)
                                .open();
                ObjectStore readAgain =
                        ObjectStore.builder(S3.uri(prefix))
                                .options(S3.endpointOptions())
                                .option(AccessMode.OPTION, "read")
                                .provider(provider)
                                .open()) {
            assertArrayEquals(SEED, read.get("t/obj"));
            assertArrayEquals(SEED, readAgain.get("t/obj"));
            assertEquals(1, provider.calls(), "the read stores share one credential");
            assertArrayEquals(SEED, readWrite.get("t/obj"));
            assertEquals(2, provider.calls(), "the read-write store has its own");
            List<String> keys = provider.vendedKeyIds();
            assertNotEquals(keys.get(0), keys.get(1));
            readWrite.put("w/two", SEED);
            assertRefused(() -> read.put("w/two", SEED), "PUT", "s3://access/" + prefix + "w/two");
        }
    }

    @Test
    void aBadModeIsNamedAndTheSpecGetsTheStoresMode() throws Exception {
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class,
                        () ->
                                ObjectStore.builder(S3.uri(prefix))
                                        .options(S3.storageOptions())
                                        .option(AccessMode.OPTION, "write")
                                        .open());
        assertTrue(e.getMessage().contains("'access_mode'"), e.getMessage());
        assertEquals(AccessMode.READ, AccessMode.parse(" Read "));
        assertEquals(AccessMode.READ_WRITE, AccessMode.parse("read-write"));
        assertThrows(IllegalArgumentException.class, () -> AccessMode.parse("rw"));

        // A catalog spec is given the store's mode (the core maps it to Unity's READ/READ_WRITE).
        String[][] spec = {new String[] {"uri"}, new String[] {"http://127.0.0.1:1"}};
        String[][] with =
                StoreSettings.withAccessMode(
                        spec, new String[] {"aws_region", "access_mode"}, new String[] {"r", "read"});
        assertArrayEquals(new String[] {"uri", "access_mode"}, with[0]);
        assertArrayEquals(new String[] {"http://127.0.0.1:1", "read"}, with[1]);
        assertEquals(spec, StoreSettings.withAccessMode(spec, new String[0], new String[0]));
        String[][] own = {new String[] {"access_mode"}, new String[] {"read_write"}};
        assertEquals(
                own,
                StoreSettings.withAccessMode(
                        own, new String[] {"access_mode"}, new String[] {"read"}),
                "a spec's own access_mode is kept (the core checks it against operation)");
    }
}
