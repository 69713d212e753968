package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.StsProvider;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A large object written through {@link MultipartOutputStream} and read back through {@link
 * SeekableObjectInputStream} (sequentially, with random seeks, positioned reads and direct buffers)
 * while the vended credentials expire every 2 s: the SHA-256 matches, and the endpoint rejected no
 * request signed with any vended key (an expired key would be rejected as ExpiredToken).
 *
 * <p>Size: {@code -Dvended.storage.test.bigObjectMiB=1024} for 1 GiB; the default (96 MiB) keeps
 * CI fast while still spanning ~20 parts and several credential generations.
 */
class StreamsRotationTest {

    private static final int TTL_SECONDS = 2;
    private static final int CHUNK = 1 << 20;
    private static final long SIZE =
            Long.getLong("vended.storage.test.bigObjectMiB", 96L) * CHUNK + 12345;

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("streams");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** The deterministic content: chunk k is SplittableRandom(k)'s bytes. */
    private static byte[] chunk(long k) {
        byte[] b = new byte[CHUNK];
        new SplittableRandom(k).nextBytes(b);
        return b;
    }

    private static byte[] expected(long position, int len) {
        byte[] out = new byte[len];
        int done = 0;
        while (done < len) {
            long p = position + done;
            byte[] c = chunk(p / CHUNK);
            int at = (int) (p % CHUNK);
            int n = Math.min(len - done, CHUNK - at);
            System.arraycopy(c, at, out, done, n);
            done += n;
        }
        return out;
    }

    @Test
    @Timeout(600)
    void largeObjectAcrossCredentialRotationsRoundTrips() throws Exception {
        StsProvider provider = new StsProvider(server, TTL_SECONDS);
        Map<String, String> initial = provider.fetchStorageOptions();
        long firstExpiry = provider.vended().get(0).expiresAtMillis();
        MessageDigest written = MessageDigest.getInstance("SHA-256");
        try (ObjectStore store =
                ObjectStore.open(
                        server.uri("big/"), initial, provider, Duration.ofMillis(500))) {
            // Write: the first half, then wait until the credential the upload began with has
            // expired, then the rest (mixing write(int), small and large writes).
            try (MultipartOutputStream out =
                    store.openOutput(
                            "big.bin",
                            WriteOptions.defaults().withPartSize(5 << 20).withMaxConcurrency(4))) {
                long pos = 0;
                boolean waited = false;
                SplittableRandom sizes = new SplittableRandom(7);
                while (pos < SIZE) {
                    if (!waited && pos >= SIZE / 2) {
                        Waits.sleepUntil(firstExpiry + 200);
                        waited = true;
                    }
                    int kind = sizes.nextInt(3);
                    int len =
                            (int) Math.min(
                                    SIZE - pos,
                                    kind == 0 ? 1 : kind == 1 ? 1 + sizes.nextInt(4096) : 3 * CHUNK);
                    byte[] data = expected(pos, len);
                    if (len == 1) {
                        out.write(data[0] & 0xff);
                    } else {
                        out.write(data);
                    }
                    written.update(data);
                    pos += len;
                }
                assertEquals(SIZE, out.bytesWritten());
            }
            assertEquals(SIZE, store.head("big.bin").size());

            // Read: sequentially (SHA-256), then random seeks, positioned and direct reads.
            try (SeekableObjectInputStream in = store.openInput("big.bin")) {
                assertEquals(SIZE, in.length());
                MessageDigest read = MessageDigest.getInstance("SHA-256");
                byte[] buf = new byte[256 * 1024 + 17];
                long total = 0;
                for (int n; (n = in.read(buf)) > 0; ) {
                    read.update(buf, 0, n);
                    total += n;
                }
                assertEquals(SIZE, total);
                assertArrayEquals(written.digest(), read.digest(), "SHA-256 of the object");

                SplittableRandom r = new SplittableRandom(42);
                ByteBuffer direct = ByteBuffer.allocateDirect(3 * CHUNK);
                for (int i = 0; i < 200; i++) {
                    long p = r.nextLong(SIZE);
                    int len = (int) Math.min(SIZE - p, r.nextInt(4) == 0 ? 2 * CHUNK : 1 + r.nextInt(9000));
                    byte[] want = expected(p, len);
                    switch (i % 3) {
                        case 0 -> {
                            in.seek(p);
                            byte[] got = in.readNBytes(len);
                            assertArrayEquals(want, got, "seek+read at " + p);
                            assertEquals(p + len, in.getPos());
                        }
                        case 1 -> {
                            long before = in.getPos();
                            byte[] got = new byte[len];
                            in.readFully(p, got, 0, len);
                            assertArrayEquals(want, got, "readFully at " + p);
                            assertEquals(before, in.getPos(), "positioned read moved the stream");
                        }
                        default -> {
                            in.seek(p);
                            direct.clear().limit(len);
                            int got = 0;
                            while (direct.hasRemaining()) {
                                int n = in.read(direct);
                                assertTrue(n > 0, "direct read ended early at " + (p + got));
                                got += n;
                            }
                            byte[] back = new byte[len];
                            direct.flip().get(back);
                            assertArrayEquals(want, back, "direct read at " + p);
                        }
                    }
                }
                // The Parquet footer pattern: the last 8 bytes, then the 64 KiB before them. A small
                // read fetches max(read, 64 KiB), not a whole block, so the tail's GET covers the
                // last 64 KiB and the footer, 8 bytes further back, needs one more: 2 requests.
                long calls = in.counters().nativeReads();
                byte[] tail = new byte[8];
                in.readFully(SIZE - 8, tail);
                byte[] footer = new byte[64 * 1024];
                in.readFully(SIZE - 8 - footer.length, footer);
                assertArrayEquals(expected(SIZE - 8, 8), tail);
                assertArrayEquals(expected(SIZE - 8 - footer.length, footer.length), footer);
                assertTrue(
                        in.counters().nativeReads() - calls <= 2,
                        "footer reads took " + (in.counters().nativeReads() - calls) + " requests");
            }
            RefreshStats stats = store.refreshStats();
            assertTrue(stats.generation() >= 2, "no rotation during the test: " + stats);
        }

        assertTrue(provider.calls() >= 2, "provider called " + provider.calls() + " times");
        Map<String, KeyStats> endpoint = server.stats();
        long accepted = 0;
        for (String key : provider.vendedKeyIds()) {
            KeyStats k = endpoint.getOrDefault(key, KeyStats.NONE);
            assertEquals(0, k.rejected(), () -> "rejected requests for vended key " + key + ": " + k);
            assertEquals(0, k.expired(), () -> "requests signed with an expired key " + key + ": " + k);
            accepted += k.accepted();
        }
        assertTrue(accepted > SIZE / (5 << 20), "endpoint accepted only " + accepted + " requests");
    }
}
