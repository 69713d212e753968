package dev.vended.storage.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.opentest4j.TestAbortedException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The same kind of user test against LocalStack, which the test starts from {@code .tools/}
 * ({@link LocalStackServer}) and hands to the extension with {@code target(...)}. Without
 * LocalStack installed it fails with "run bin/install-s3-servers.sh" unless {@code
 * VENDED_STORAGE_SKIP_S3_SERVERS=1}.
 */
class UserJUnitLocalStackExampleTest {

    @RegisterExtension
    @Order(1)
    static LocalStackServer localstack = new LocalStackServer("tables");

    // region:junit-testkit-external
    // Any endpoint you already run: here LocalStack; or set VENDED_STORAGE_TEST_ENDPOINT,
    // VENDED_STORAGE_TEST_ACCESS_KEY_ID, VENDED_STORAGE_TEST_SECRET_ACCESS_KEY instead.
    @RegisterExtension
    @Order(2)
    static LocalS3Extension s3 =
            LocalS3Extension.create().bucket("tables").target(() -> localstack.target());
    // endregion

    @Test
    @Timeout(90)
    void readsKeepWorkingWhileCredentialsRotate() throws Exception {
        assertFalse(s3.isLocal());
        RecordingProvider catalog = s3.provider(Duration.ofSeconds(2));
        byte[] data = "hello localstack".getBytes(StandardCharsets.UTF_8);
        try (ObjectStore store =
                ObjectStore.open(s3.uri("orders/"), catalog.fetchStorageOptions(), catalog)) {
            store.put("part-0", data);
            store.put("part-1", data);
            Waits.sleepUntil(catalog.vended().get(0).expiresAtMillis() + 200);
            assertArrayEquals(data, store.get("part-0"));
            List<ObjectMeta> listed = store.list(null);
            assertEquals(2, listed.size(), listed.toString());
            store.delete("part-0");
            store.delete("part-1");
            assertEquals(0, store.list(null).size());
        }
        assertTrue(catalog.calls() >= 2, "the store refreshed its credentials");
    }

    @Test
    void enforcementNeedsTheLocalEndpoint() {
        TestAbortedException skipped =
                org.junit.jupiter.api.Assertions.assertThrows(
                        TestAbortedException.class,
                        () -> s3.mintCredentials(Duration.ofSeconds(1)));
        assertTrue(skipped.getMessage().contains(s3.endpoint()), skipped.getMessage());
    }
}
