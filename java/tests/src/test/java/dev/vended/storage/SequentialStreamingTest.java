package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ReadPolicy#SEQUENTIAL} ({@link ReadOptions#withReadPolicy}): one streaming GET
 * per sequential run against the signing endpoint; bytes equal, GET counts per run, seeks,
 * positioned reads, direct buffers, close, and a replaced object. {@link ReadPolicy#ADAPTIVE}
 * (the default): a scan is one GET; a footer read then a backward seek, or a positioned read
 * elsewhere, switches to ranged block reads.
 */
@Timeout(120)
class SequentialStreamingTest {

    private static final int BLOCK = 64 << 10;
    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("seq-stream");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static ObjectStore store(String prefix) throws StorageException {
        return ObjectStore.open(server.uri(prefix + "/"), server.rootOptions());
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    private static ReadOptions streaming() {
        return ReadOptions.defaults().withBlockSize(BLOCK).withReadPolicy(ReadPolicy.SEQUENTIAL);
    }

    private static long gets(String key) throws IOException {
        return server.requests().stream()
                .filter(r -> r.method().equals("GET") && key.equals(r.key()))
                .filter(RequestRecord::accepted)
                .count();
    }

    @Test
    void aSequentialRunIsOneGetAndEveryByteIsRight() throws Exception {
        try (ObjectStore store = store("run")) {
            byte[] data = random(40 * BLOCK + 123, 1);
            store.put("o", data);
            long before = gets("run/o");
            for (boolean readAhead : new boolean[] {true, false}) {
                try (SeekableObjectInputStream in =
                        store.openInput("o", streaming().withReadAhead(readAhead))) {
                    MessageDigest md = MessageDigest.getInstance("SHA-256");
                    byte[] buf = new byte[10_000]; // smaller than a block, not aligned
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        md.update(buf, 0, n);
                    }
                    assertArrayEquals(
                            MessageDigest.getInstance("SHA-256").digest(data), md.digest());
                    assertEquals(1, in.counters().streamingGets(), "readAhead " + readAhead);
                }
            }
            // Per stream: one streaming GET from offset 0 to the end.
            assertEquals(before + 2, gets("run/o"));
        }
    }

    @Test
    void largeReadsOneBytesAndDirectBuffersMix() throws Exception {
        try (ObjectStore store = store("mix")) {
            byte[] data = random(10 * BLOCK + 7, 2);
            store.put("o", data);
            try (SeekableObjectInputStream in = store.openInput("o", streaming())) {
                byte[] out = new byte[data.length];
                int at = 0;
                out[at++] = (byte) in.read();
                assertEquals(2 * BLOCK, in.readNBytes(out, at, 2 * BLOCK));
                at += 2 * BLOCK;
                ByteBuffer direct = ByteBuffer.allocateDirect(3 * BLOCK + 5);
                while (direct.hasRemaining()) {
                    assertTrue(in.read(direct) > 0);
                }
                direct.flip().get(out, at, direct.remaining());
                at += 3 * BLOCK + 5;
                for (int i = 0; i < 1000; i++) {
                    out[at++] = (byte) in.read();
                }
                at += in.readNBytes(out, at, data.length - at);
                assertEquals(data.length, at);
                assertEquals(-1, in.read());
                assertArrayEquals(data, out);
                assertEquals(1, in.counters().streamingGets());
            }
        }
    }

    @Test
    void seeksStartNewRunsAndPositionedReadsUseRangedGets() throws Exception {
        try (ObjectStore store = store("seek")) {
            byte[] data = random(20 * BLOCK, 3);
            store.put("o", data);
            try (SeekableObjectInputStream in = store.openInput("o", streaming())) {
                byte[] b = new byte[BLOCK + 17];
                in.readNBytes(b, 0, b.length); // at 0 of a new stream: the run's GET opens
                in.readNBytes(b, 0, b.length); // sequential: the same GET
                assertArrayEquals(Arrays.copyOfRange(data, b.length, 2 * b.length), b);
                assertEquals(1, in.counters().streamingGets());

                byte[] p = new byte[5000];
                in.readFully(15L * BLOCK + 3, p); // positioned: no streaming GET
                assertArrayEquals(Arrays.copyOfRange(data, 15 * BLOCK + 3, 15 * BLOCK + 5003), p);
                assertEquals(1, in.counters().streamingGets());
                assertEquals(2L * b.length, in.getPos());

                in.seek(7L * BLOCK + 1); // a new run: first read ranged, then a new GET
                byte[] rest = in.readAllBytes();
                assertArrayEquals(Arrays.copyOfRange(data, 7 * BLOCK + 1, data.length), rest);
                assertEquals(2, in.counters().streamingGets());

                in.seek(3);
                assertEquals(data[3] & 0xff, in.read());
            }
        }
    }

    @Test
    void closingMidRunReleasesTheGetAndLaterReadsFail() throws Exception {
        try (ObjectStore store = store("close")) {
            byte[] data = random(30 * BLOCK, 4);
            store.put("o", data);
            SeekableObjectInputStream in = store.openInput("o", streaming());
            byte[] b = new byte[3 * BLOCK];
            in.readNBytes(b, 0, b.length);
            in.readNBytes(b, 0, b.length);
            assertEquals(1, in.counters().streamingGets());
            in.close();
            in.close();
            assertThrows(IOException.class, in::read);
            // The store still works: the GET left unfinished did not hold anything.
            assertArrayEquals(data, store.get("o"));
        }
    }

    @Test
    void aReplacedObjectFailsAtTheNextRunWithPinnedETag() throws Exception {
        try (ObjectStore store = store("pin")) {
            byte[] data = random(8 * BLOCK, 5);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", streaming().withReadAhead(false))) {
                byte[] b = new byte[BLOCK];
                in.readNBytes(b, 0, b.length);
                in.readNBytes(b, 0, b.length); // the run's GET is open on the first version
                store.put("o", random(8 * BLOCK, 6));
                in.seek(5L * BLOCK); // a new run needs new requests: If-Match fails
                assertThrows(PreconditionFailedException.class, () -> in.readNBytes(b, 0, 10));
            }
        }
    }

    @Test
    void adaptiveIsTheDefaultAndAScanIsOneGet() throws Exception {
        assertEquals(ReadPolicy.ADAPTIVE, ReadOptions.defaults().readPolicy());
        assertEquals(
                ReadPolicy.RANDOM,
                ReadOptions.defaults().withReadPolicy(ReadPolicy.RANDOM).readPolicy());
        assertEquals(ReadPolicy.SEQUENTIAL, streaming().readPolicy());
        assertThrows(NullPointerException.class, () -> ReadOptions.defaults().withReadPolicy(null));
        try (ObjectStore store = store("adaptive-scan")) {
            byte[] data = random(40 * BLOCK + 123, 7);
            store.put("o", data);
            long before = gets("adaptive-scan/o");
            try (SeekableObjectInputStream in =
                    store.openInput("o", ReadOptions.defaults().withBlockSize(BLOCK))) {
                byte[] buf = new byte[10_000]; // smaller than a block, not aligned
                byte[] out = new byte[data.length];
                int at = 0;
                int n;
                while ((n = in.read(buf)) > 0) {
                    System.arraycopy(buf, 0, out, at, n);
                    at += n;
                }
                assertEquals(data.length, at);
                assertArrayEquals(data, out);
                assertEquals(1, in.counters().streamingGets());
                assertEquals(0, in.counters().prefetchesUsed());
            }
            assertEquals(before + 1, gets("adaptive-scan/o"), "one GET for the whole scan");
        }
    }

    @Test
    void adaptiveFooterThenBackwardSeekSwitchesToRangedReads() throws Exception {
        try (ObjectStore store = store("adaptive-footer")) {
            byte[] data = random(20 * BLOCK + 5, 8);
            int len = data.length;
            store.put("o", data);
            long before = gets("adaptive-footer/o");
            ReadOptions options =
                    ReadOptions.defaults().withBlockSize(BLOCK).withReadAhead(false);
            try (SeekableObjectInputStream in = store.openInput("o", options)) {
                byte[] tail = new byte[8];
                in.seek(len - 8); // forward: no switch; a new run's first read is one ranged GET
                in.readNBytes(tail, 0, 8);
                assertArrayEquals(Arrays.copyOfRange(data, len - 8, len), tail);
                assertEquals(before + 1, gets("adaptive-footer/o"));
                byte[] footer = new byte[5000];
                in.seek(len - 8 - footer.length); // backward: ranged reads from now on
                in.readNBytes(footer, 0, footer.length); // from the last block: no GET
                assertArrayEquals(Arrays.copyOfRange(data, len - 5008, len - 8), footer);
                assertEquals(before + 1, gets("adaptive-footer/o"));

                in.seek(2L * BLOCK + 7); // a column chunk larger than a block: one ranged GET
                byte[] chunk = new byte[3 * BLOCK + 11];
                in.readNBytes(chunk, 0, chunk.length);
                assertArrayEquals(Arrays.copyOfRange(data, 2 * BLOCK + 7, 5 * BLOCK + 18), chunk);
                assertEquals(before + 2, gets("adaptive-footer/o"));
                // Sequential small reads go on block by block (one ranged GET per block).
                byte[] small = new byte[2 * BLOCK];
                for (int at = 0; at < small.length; ) {
                    at += in.read(small, at, Math.min(10_000, small.length - at));
                }
                assertArrayEquals(Arrays.copyOfRange(data, 5 * BLOCK + 18, 7 * BLOCK + 18), small);
                assertEquals(before + 4, gets("adaptive-footer/o"));
                assertEquals(0, in.counters().streamingGets(), "no streaming GET after the switch");
            }
        }
    }

    @Test
    void adaptivePositionedReadElsewhereEndsStreamingAndReadAheadTakesOver() throws Exception {
        try (ObjectStore store = store("adaptive-pread")) {
            byte[] data = random(24 * BLOCK, 9);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ReadOptions.defaults().withBlockSize(BLOCK))) {
                byte[] b = new byte[2 * BLOCK + 3];
                in.readNBytes(b, 0, b.length);
                in.readNBytes(b, 0, b.length);
                assertArrayEquals(Arrays.copyOfRange(data, b.length, 2 * b.length), b);
                assertEquals(1, in.counters().streamingGets());
                byte[] p = new byte[100];
                in.readFully(20L * BLOCK, p); // elsewhere: ranged reads from now on
                assertArrayEquals(Arrays.copyOfRange(data, 20 * BLOCK, 20 * BLOCK + 100), p);
                byte[] rest = new byte[10 * BLOCK];
                for (int at = 0; at < rest.length; ) {
                    at += in.read(rest, at, Math.min(10_000, rest.length - at));
                }
                int from = 2 * b.length;
                assertArrayEquals(Arrays.copyOfRange(data, from, from + rest.length), rest);
                assertEquals(
                        1, in.counters().streamingGets(), "the switch opened no new streaming GET");
                assertTrue(
                        in.counters().prefetchesUsed() + in.counters().prefetchesTakenBack() > 0,
                        "the read-ahead serves the ranged blocks");
            }
        }
    }
}
