package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.IssuingProvider;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.ref.WeakReference;
import java.util.Map;

/** Closing a store releases the native side's reference to its provider. */
class ProviderReleaseTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("release");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    @Timeout(60)
    void closeReleasesTheProvider() throws Exception {
        WeakReference<IssuingProvider> ref = openUseAndClose();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (ref.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        assertTrue(ref.get() == null, "provider still reachable after close (global ref leak?)");
    }

    private static WeakReference<IssuingProvider> openUseAndClose() throws Exception {
        IssuingProvider provider = new IssuingProvider(server, 60_000, null);
        Map<String, String> initial = provider.fetchStorageOptions();
        try (ObjectStore store = ObjectStore.open(server.uri("release/"), initial, provider)) {
            store.put("x", new byte[] {1});
            assertArrayEquals(new byte[] {1}, store.get("x"));
        }
        return new WeakReference<>(provider);
    }
}
