package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * C01: the provider vends gen1 expiring in 2 s; the store sits idle 3 s, then reads. The provider
 * is called again, the read is signed with gen2, and no ExpiredToken reaches the caller.
 */
class C01IdleExpiryTest {

    /** The enforcing local endpoint, whatever VENDED_STORAGE_TEST_ENDPOINT says. */
    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("c01");

    @Test
    @Timeout(60)
    void c01_idleStoreReadsWithFreshCredentialsAfterExpiry() throws Exception {
        RecordingProvider provider = S3.provider(Duration.ofMillis(2_000));
        Map<String, String> gen1Options = provider.fetchStorageOptions();
        VendedCredentials gen1 = provider.vended().get(0);
        byte[] data = "idle but not stale".getBytes(StandardCharsets.UTF_8);

        try (ObjectStore store = ObjectStore.open(S3.uri("c01/"), gen1Options, provider)) {
            store.put("idle.txt", data);
            assertEquals(
                    1, provider.calls(), "opening with valid options must not call the provider");
            assertTrue(S3.stats(gen1.accessKeyId()).accepted() >= 1, "put not signed by gen1");

            Thread.sleep(3_000); // the scenario: idle past gen1's expiry

            assertArrayEquals(data, store.get("idle.txt"));
            assertTrue(provider.calls() >= 2, "provider not called again after expiry");
        }

        List<RecordingProvider.Vend> vends = provider.vends();
        VendedCredentials gen2 = vends.get(1).credentials();
        Map<String, KeyStats> stats = S3.stats();
        KeyStats gen1Stats = stats.getOrDefault(gen1.accessKeyId(), KeyStats.NONE);
        KeyStats gen2Stats = stats.getOrDefault(gen2.accessKeyId(), KeyStats.NONE);
        assertEquals(0, gen1Stats.rejected(), "gen1 was used after expiry: " + gen1Stats);
        assertTrue(gen2Stats.accepted() >= 1, "the read was not signed by gen2: " + gen2Stats);
        assertEquals(0, gen2Stats.rejected(), "gen2 rejected: " + gen2Stats);
        for (RecordingProvider.Vend v : vends.subList(1, vends.size())) {
            assertTrue(
                    v.daemon(),
                    "the native side called the provider on non-daemon thread " + v.thread());
        }
    }
}
