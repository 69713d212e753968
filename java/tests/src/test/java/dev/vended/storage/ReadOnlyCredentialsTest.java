package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Issue 24 through the testkit: a store opened with a read-only key reads and lists; a write is a
 * {@link CredentialsException} (kind {@code CREDENTIALS}, not retryable) whose message says the
 * credential does not allow writes, with no refetch and no secret in the message. A key without
 * LIST reads but cannot list, and says so.
 */
@Timeout(60)
class ReadOnlyCredentialsTest {

    private static final byte[] SEED = "seed".getBytes(StandardCharsets.UTF_8);
    private static final String NO_WRITES =
            "the credential does not allow writes here (read-only, or scoped to other paths?)";
    private static final String NO_LISTING =
            "the credential does not allow listing here (no LIST permission, or scoped to other"
                    + " paths?)";

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("readonly");

    private static String prefix;

    @BeforeAll
    static void seed() throws Exception {
        prefix = "ro-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(S3.uri(prefix), S3.storageOptions())) {
            root.put("t/obj", SEED);
        }
    }

    /** The call fails with a CredentialsException whose message is {@code expected}. */
    private static void assertRefused(Executable call, String expected, VendedCredentials key) {
        CredentialsException e = assertThrows(CredentialsException.class, call);
        assertEquals(StorageException.Kind.CREDENTIALS, e.kind());
        assertFalse(e.isRetryable(), e::toString);
        assertEquals(expected, e.getMessage());
        assertFalse(e.getMessage().contains(key.secretAccessKey()), "a secret in the message");
        assertFalse(e.getMessage().contains(key.sessionToken()), "a token in the message");
    }

    private static String readOnly(String op) {
        return NO_WRITES + ": the credential is read-only: " + op + " is a write, which it does"
                + " not allow";
    }

    @Test
    void writesThroughAReadOnlyKeyFailClearlyWithoutARefetch() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMinutes(10), null, KeyAccess.READ_ONLY);
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(10), null, KeyAccess.READ_ONLY);
        String at = "s3://readonly/" + prefix + "t/";
        try (ObjectStore store =
                ObjectStore.open(S3.uri(prefix), S3.storageOptions(key), provider)) {
            assertArrayEquals(SEED, store.get("t/obj"));
            assertEquals(SEED.length, store.head("t/obj").size());
            assertEquals(List.of("t/obj"), store.list("t").stream().map(ObjectMeta::path).toList());

            assertRefused(
                    () -> store.put("t/new", SEED),
                    "PUT " + at + "new: 403 AccessDenied: " + readOnly("PutObject"),
                    key);
            assertRefused(
                    () -> store.delete("t/obj"),
                    "DELETE " + at + "obj: 403 AccessDenied: " + readOnly("DeleteObject"),
                    key);
            assertRefused(
                    () -> store.copy("t/obj", "t/copy"),
                    "COPY " + at + "obj -> " + at + "copy: 403 AccessDenied: "
                            + readOnly("CopyObject"),
                    key);
            assertArrayEquals(SEED, store.get("t/obj"));
        }
        assertEquals(0, provider.calls(), "no refetch for a refused permission");
        KeyStats stats = S3.stats(key.accessKeyId());
        assertEquals(4, stats.accepted(), stats::toString);
        assertEquals(3, stats.denied(), "one request per refused write: " + stats);
        assertEquals(3, stats.rejected(), stats::toString);
    }

    @Test
    void aKeyWithoutListReadsButCannotList() throws Exception {
        VendedCredentials key =
                S3.mintCredentials(Duration.ofMinutes(10), prefix, KeyAccess.READ_ONLY.withoutList());
        try (ObjectStore store = ObjectStore.open(S3.uri(prefix), S3.storageOptions(key))) {
            assertArrayEquals(SEED, store.get("t/obj"));
            assertRefused(
                    () -> store.list("t"),
                    "LIST s3://readonly/" + prefix + "t/: 403 AccessDenied: " + NO_LISTING
                            + ": the credential does not allow listing: ListObjectsV2 is refused",
                    key);
        }
        assertEquals(1, S3.stats(key.accessKeyId()).denied());
    }

    @Test
    void stsAssumeRoleMintsReadOnlyKeysToo() throws Exception {
        VendedCredentials key =
                S3.server().assumeRole(600, "readonly/" + prefix, KeyAccess.READ_ONLY);
        try (ObjectStore store = ObjectStore.open(S3.uri(prefix), S3.storageOptions(key))) {
            assertArrayEquals(SEED, store.get("t/obj"));
            assertRefused(
                    () -> store.put("t/sts", SEED),
                    "PUT s3://readonly/" + prefix + "t/sts: 403 AccessDenied: "
                            + readOnly("PutObject"),
                    key);
        }
    }
}
