package dev.vended.storage;

import static dev.vended.storage.testkit.ScriptedProvider.throwing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.IncompleteUpload;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.ScriptedProvider;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;

/**
 * C24: a multipart upload is in progress when its credential expires and the provider now throws.
 * {@code close()} (or {@code abort()}) throws the credential error with the provider's exception as
 * cause, nothing becomes visible, the message names the upload (location and upload id, which the
 * endpoint's list of incomplete uploads confirms), and once the provider works again the abort,
 * retried in the background with a refetched credential, removes the upload.
 */
@Timeout(90)
class C24AbandonedUploadTest {

    private static final int MIB = 1 << 20;
    private static final long TTL_MILLIS = 3_000;

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c24");
        prefix = "c24-" + UUID.randomUUID() + "/";
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** The upload ids the endpoint still holds for {@code key}. */
    private static List<String> incomplete(String key) throws Exception {
        return server.incompleteUploads("c24").stream()
                .filter(u -> u.key().equals(key))
                .map(IncompleteUpload::uploadId)
                .toList();
    }

    /** Polls every 100 ms, at most 30 s, until the endpoint holds no upload for {@code key}. */
    private static List<String> awaitAborted(String key) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<String> left = incomplete(key);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            left = incomplete(key);
        }
        return left;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private interface Outcome {
        void run(MultipartOutputStream out) throws Exception;
    }

    /**
     * Writes 12 MiB (two 5 MiB parts uploaded), lets the credential expire while the provider
     * throws, runs {@code ending} (which must throw the provider's failure), then heals the
     * provider and checks that the upload is aborted.
     */
    private static void failThenHeal(String name, Outcome ending) throws Exception {
        VendedCredentials gen1 = server.issueCredentials(TTL_MILLIS, null);
        RuntimeException down = new RuntimeException("catalog down");
        ScriptedProvider provider = new ScriptedProvider(throwing(down));
        String key = prefix + name;
        try (ObjectStore store =
                        ObjectStore.builder(server.uri(prefix))
                                .options(server.options(gen1))
                                .provider(provider)
                                .initialBackoff(Duration.ofMillis(100))
                                .maxBackoff(Duration.ofMillis(400))
                                .open();
                ObjectStore root = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            MultipartOutputStream out = store.openOutput(name, WriteOptions.defaults());
            out.write(random(12 * MIB, 24));
            List<String> ids = incomplete(key);
            assertEquals(1, ids.size(), () -> "one upload started: " + ids);
            String id = ids.get(0);

            Waits.sleepUntil(gen1.expiresAtMillis() + 300);
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> ending.run(out));
            assertSame(down, e.getCause(), () -> "cause of " + e);
            String m = e.getMessage();
            assertTrue(m.contains("catalog down"), m);
            assertTrue(m.contains("s3://c24/" + key), m);
            assertTrue(m.contains(id), () -> "the message names upload " + id + ": " + m);
            assertTrue(m.contains("AbortIncompleteMultipartUpload"), m);
            assertFalse(m.contains(gen1.secretAccessKey()), "no secret in the message");
            assertFalse(m.contains(gen1.sessionToken()), "no token in the message");

            // Nothing visible; the parts stay while the provider is down.
            assertThrows(ObjectNotFoundException.class, () -> root.head(name));
            assertEquals(List.of(id), incomplete(key));

            provider.otherwise(() -> server.options(server.issueCredentials(60_000, null)));
            List<String> left = awaitAborted(key);
            assertTrue(left.isEmpty(), () -> "upload not aborted after the provider healed: " + left);
            assertThrows(ObjectNotFoundException.class, () -> root.head(name));
        }
    }

    @Test
    void c24_closeAfterExpiryNamesTheUploadAndItIsAbortedOnceTheProviderHeals() throws Exception {
        failThenHeal("closed.bin", MultipartOutputStream::close);
    }

    @Test
    void c24_abortAfterExpiryNamesTheUploadAndItIsAbortedOnceTheProviderHeals() throws Exception {
        failThenHeal("aborted.bin", MultipartOutputStream::abort);
    }

    @Test
    void writeOptionsReportTheEffectiveDefaults() {
        assertEquals(5L << 20, WriteOptions.defaults().partSize());
        assertEquals(8, WriteOptions.defaults().maxConcurrency());
        assertEquals(5L << 20, WriteOptions.defaults().withPartSize(0).partSize());
        assertEquals(8, WriteOptions.defaults().withMaxConcurrency(0).maxConcurrency());
        assertEquals(16L << 20, WriteOptions.defaults().withPartSize(16L << 20).partSize());
    }
}
