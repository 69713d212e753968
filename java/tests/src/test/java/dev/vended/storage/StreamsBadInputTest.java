package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

/**
 * Streams, presized gets and vectored reads: behaviour on good input (one-byte reads cross JNI once
 * per block, direct buffers, ranges) and a named exception for every kind of bad input.
 */
@Timeout(120)
class StreamsBadInputTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("streams-bad");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static ObjectStore memory() throws StorageException {
        return ObjectStore.open("memory:///streams-" + UUID.randomUUID() + "/", null);
    }

    /** The block path ({@link ReadPolicy#RANDOM}): what the read-ahead assertions test. */
    private static ReadOptions ranged() {
        return ReadOptions.defaults().withReadPolicy(ReadPolicy.RANDOM);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    void oneByteReadsCrossJniOncePerBlock() throws Exception {
        try (ObjectStore store = memory()) {
            byte[] data = random(100_000, 1);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(4096))) {
                for (int i = 0; i < data.length; i++) {
                    assertEquals(data[i] & 0xff, in.read(), "byte " + i);
                }
                assertEquals(-1, in.read());
                // 100,000 bytes in 4 KiB blocks: 25 native reads, not 100,000. With read-ahead
                // (default) the count is the same: blocks 0 and 1 are read on the caller's thread
                // (the second block reached sequentially starts the read-ahead), blocks 2..24 are
                // prefetched, and no prefetch goes past the end.
                assertEquals((data.length + 4095) / 4096, in.counters().nativeReads());
                // (A prefetch still queued on a saturated pool is read on this thread instead:
                // the same request, so the count stays exact.)
                assertEquals(
                        (data.length + 4095) / 4096 - 2,
                        in.counters().prefetchesUsed() + in.counters().prefetchesTakenBack());
                assertTrue(in.counters().prefetchesUsed() > 0, "no block came from the read-ahead");
                assertFalse(in.counters().prefetchPending());
                // Seeking back inside the current block costs nothing.
                long before = in.counters().nativeReads();
                in.seek(data.length - 10);
                assertEquals(data[data.length - 10] & 0xff, in.read());
                assertEquals(before, in.counters().nativeReads());
                assertEquals(0, in.skip(-5));
                assertEquals(9, in.skip(100));
                assertEquals(data.length, in.getPos());
            }
        }
    }

    @Test
    void largeReadsBypassTheBlock() throws Exception {
        try (ObjectStore store = memory()) {
            byte[] data = random(3 << 20, 2);
            store.put("o", data);
            try (SeekableObjectInputStream in = store.openInput("o")) {
                byte[] back = new byte[data.length];
                assertEquals(data.length, in.readNBytes(back, 0, back.length));
                assertArrayEquals(data, back);
                assertEquals(1, in.counters().nativeReads(), "one request for one large read");
            }
        }
    }

    @Test
    void presizedGetsDirectBuffersAndRanges() throws Exception {
        try (ObjectStore store =
                ObjectStore.open(server.uri("g/"), server.rootOptions())) {
            byte[] data = random(1_000_003, 3);
            store.put("o", data);
            assertArrayEquals(data, store.get("o"));

            ByteBuffer direct = ByteBuffer.allocateDirect(data.length + 10);
            direct.position(5);
            assertEquals(data.length, store.get("o", direct));
            assertEquals(5 + data.length, direct.position());
            byte[] back = new byte[data.length];
            direct.position(5);
            direct.get(back);
            assertArrayEquals(data, back);

            ByteBuffer heap = ByteBuffer.allocate(data.length);
            assertEquals(data.length, store.get("o", heap));
            assertArrayEquals(data, heap.array());

            InvalidOptionsException small =
                    assertThrows(
                            InvalidOptionsException.class,
                            () -> store.get("o", ByteBuffer.allocateDirect(10)));
            assertTrue(small.getMessage().contains("does not fit"), small.getMessage());

            List<byte[]> parts =
                    store.getRanges(
                            "o",
                            List.of(
                                    new ByteRange(0, 10),
                                    new ByteRange(500_000, 500_100),
                                    new ByteRange(999_000, 1_000_003)));
            assertEquals(3, parts.size());
            assertArrayEquals(java.util.Arrays.copyOfRange(data, 0, 10), parts.get(0));
            assertArrayEquals(
                    java.util.Arrays.copyOfRange(data, 500_000, 500_100), parts.get(1));
            assertArrayEquals(
                    java.util.Arrays.copyOfRange(data, 999_000, 1_000_003), parts.get(2));
            assertEquals(0, store.getRanges("o", new long[0][]).length);
            assertThrows(
                    IllegalArgumentException.class,
                    () -> store.getRanges("o", new long[][] {{5, 5}}));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> store.getRanges("o", new long[][] {{-1, 5}}));
            assertThrows(IllegalArgumentException.class, () -> new ByteRange(10, 3));
            assertThrows(ObjectNotFoundException.class, () -> store.openInput("missing"));
            assertThrows(ObjectNotFoundException.class, () -> store.get("missing", direct));
        }
    }

    @Test
    void byteBuffersGoThroughTheOutputStream() throws Exception {
        try (ObjectStore store = memory()) {
            byte[] data = random((2 << 20) + 3, 6);
            ByteBuffer direct = ByteBuffer.allocateDirect(data.length);
            direct.put(data).flip();
            try (MultipartOutputStream out =
                    store.openOutput("bb", WriteOptions.defaults().withPartSize(1 << 20))) {
                out.write(ByteBuffer.wrap(data, 0, 10)); // heap
                out.write(direct.position(10)); // direct, past the Java buffer: no array copy
                assertEquals(0, direct.remaining());
                assertEquals(data.length, out.bytesWritten());
            }
            assertArrayEquals(data, store.get("bb"));
        }
    }

    @Test
    void badPositionsAndClosedStreamsAreNamed() throws Exception {
        try (ObjectStore store = memory()) {
            store.put("o", random(1000, 4));
            SeekableObjectInputStream in = store.openInput("o");
            EOFException negative = assertThrows(EOFException.class, () -> in.seek(-1));
            assertTrue(negative.getMessage().contains("negative position -1"), negative.getMessage());
            EOFException past = assertThrows(EOFException.class, () -> in.seek(1001));
            assertTrue(past.getMessage().contains("past the end"), past.getMessage());
            in.seek(1000);
            assertEquals(-1, in.read());
            assertEquals(-1, in.read(new byte[4], 0, 4));
            assertEquals(-1, in.read(ByteBuffer.allocateDirect(4)));
            assertThrows(EOFException.class, () -> in.readFully(-1, new byte[1]));
            EOFException tooFar =
                    assertThrows(EOFException.class, () -> in.readFully(990, new byte[11]));
            assertTrue(tooFar.getMessage().contains("1000 bytes"), tooFar.getMessage());
            assertThrows(
                    IndexOutOfBoundsException.class, () -> in.read(new byte[4], 3, 2));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> in.read(ByteBuffer.allocate(4).asReadOnlyBuffer()));
            in.close();
            in.close(); // idempotent
            IOException closed = assertThrows(IOException.class, in::read);
            assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
            assertThrows(IOException.class, () -> in.seek(0));
            assertThrows(IllegalArgumentException.class, () -> ReadOptions.defaults().withBlockSize(0));
        }
    }

    @Test
    void writerMisuseIsNamed() throws Exception {
        try (ObjectStore store =
                ObjectStore.open(server.uri("w/"), server.rootOptions())) {
            InvalidOptionsException tooSmall =
                    assertThrows(
                            InvalidOptionsException.class,
                            () ->
                                    store.openOutput(
                                            "p", WriteOptions.defaults().withPartSize(1 << 20)));
            assertTrue(tooSmall.getMessage().contains("part_size"), tooSmall.getMessage());
            assertThrows(
                    IllegalArgumentException.class, () -> WriteOptions.defaults().withPartSize(-1));

            MultipartOutputStream out = store.openOutput("small");
            out.write(new byte[] {1, 2, 3});
            out.write(4);
            assertThrows(ObjectNotFoundException.class, () -> store.head("small"), "visible early");
            out.close();
            out.close(); // idempotent
            assertArrayEquals(new byte[] {1, 2, 3, 4}, store.get("small"));
            assertTrue(out.result().eTag() != null, "no ETag reported");
            IOException afterClose = assertThrows(IOException.class, () -> out.write(5));
            assertTrue(afterClose.getMessage().contains("completed"), afterClose.getMessage());
            assertThrows(IOException.class, () -> out.write(new byte[10]));
            assertThrows(IllegalStateException.class, out::abort);

            MultipartOutputStream aborted = store.openOutput("aborted");
            aborted.write(random(6 << 20, 5)); // past one part: a multipart upload is running
            aborted.abort();
            aborted.abort(); // no-op
            aborted.close(); // no-op after abort
            assertNull(aborted.result());
            IOException afterAbort = assertThrows(IOException.class, () -> aborted.write(1));
            assertTrue(afterAbort.getMessage().contains("aborted"), afterAbort.getMessage());
            assertThrows(ObjectNotFoundException.class, () -> store.head("aborted"));
            // The multipart upload was started and then aborted (DELETE ?uploadId on the key).
            String log = server.send("GET", "/_admin/requests", null, null);
            long posts = 0;
            long deletes = 0;
            for (String entry : log.split("\\},\\{")) {
                if (entry.contains("\"key\":\"w/aborted\"")) {
                    posts += entry.contains("\"method\":\"POST\"") ? 1 : 0;
                    deletes += entry.contains("\"method\":\"DELETE\"") ? 1 : 0;
                }
            }
            assertTrue(posts >= 1, "no multipart upload was started: " + log);
            assertEquals(1, deletes, "the multipart upload was not aborted once: " + log);
        }
    }
    // ---------------------------------------------------------------------------------------
    // Sequential read-ahead (ReadOptions.withReadAhead, default on)

    private static byte[] sha256(byte[] b, int off, int len) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(b, off, len);
        return md.digest();
    }

    @Test
    void readAheadIsOnByDefaultAndCanBeTurnedOff() throws Exception {
        assertTrue(ReadOptions.defaults().readAhead());
        assertFalse(ReadOptions.defaults().withReadAhead(false).readAhead());
        assertTrue(ReadOptions.defaults().withReadAhead(false).withBlockSize(7).withReadAhead(true)
                .readAhead());
        try (ObjectStore store = memory()) {
            byte[] data = random(100_000, 11);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(4096).withReadAhead(false))) {
                byte[] back = new byte[data.length];
                for (int i = 0; i < data.length; i++) {
                    back[i] = (byte) in.read();
                }
                assertArrayEquals(data, back);
                assertEquals(25, in.counters().nativeReads());
                assertEquals(0, in.counters().prefetchesUsed());
                assertFalse(in.counters().prefetchPending());
            }
        }
    }

    @Test
    void sequentialReadAheadMatchesTheSourceSha256() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("ra/"), server.rootOptions())) {
            int blockSize = 256 << 10;
            byte[] data = random(5 * blockSize + 12_345, 12);
            store.put("o", data);
            byte[] expected = sha256(data, 0, data.length);
            int blocks = (data.length + blockSize - 1) / blockSize;

            // Mixed small reads (one byte, 100 KiB, odd sizes) through the block.
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(blockSize))) {
                byte[] back = new byte[data.length];
                int at = 0;
                int[] sizes = {1, 100 << 10, 7, 65_537, 1};
                for (int i = 0; at < back.length; i++) {
                    int want = Math.min(sizes[i % sizes.length], back.length - at);
                    if (want == 1) {
                        back[at++] = (byte) in.read();
                    } else {
                        int n = in.read(back, at, want);
                        assertTrue(n > 0, "read returned " + n + " at " + at);
                        at += n;
                    }
                }
                assertEquals(-1, in.read());
                assertArrayEquals(expected, sha256(back, 0, back.length));
                assertTrue(
                        in.counters().nativeReads() <= blocks + 1,
                        in.counters().nativeReads() + " requests");
                assertTrue(
                        in.counters().prefetchesUsed() >= blocks - 2,
                        in.counters().prefetchesUsed() + " prefetched");
            }

            // The benchmark's shape: reads of exactly one block (they bypass the block, but a
            // sequential run of them is served by the prefetch).
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(blockSize))) {
                byte[] back = new byte[data.length];
                int at = 0;
                while (at < back.length) {
                    int n = in.read(back, at, Math.min(blockSize, back.length - at));
                    assertTrue(n > 0);
                    at += n;
                }
                assertArrayEquals(expected, sha256(back, 0, back.length));
                assertTrue(
                        in.counters().nativeReads() <= blocks + 1,
                        in.counters().nativeReads() + " requests");
                assertTrue(
                        in.counters().prefetchesUsed() >= blocks - 2,
                        in.counters().prefetchesUsed() + " prefetched");
            }

            // Direct ByteBuffers, 64 KiB at a time.
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(blockSize))) {
                ByteBuffer direct = ByteBuffer.allocateDirect(data.length);
                while (direct.hasRemaining()) {
                    ByteBuffer slice = direct.slice();
                    slice.limit(Math.min(64 << 10, slice.remaining()));
                    int n = in.read(slice);
                    assertTrue(n > 0);
                    direct.position(direct.position() + n);
                }
                byte[] back = new byte[data.length];
                direct.flip().get(back);
                assertArrayEquals(expected, sha256(back, 0, back.length));
                assertTrue(
                        in.counters().prefetchesUsed() >= blocks - 2,
                        in.counters().prefetchesUsed() + " prefetched");
            }
        }
    }

    @Test
    void seekOutsideThePrefetchDiscardsIt() throws Exception {
        try (ObjectStore store = memory()) {
            byte[] data = random(100_000, 13);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(4096))) {
                byte[] b = new byte[5000];
                assertEquals(100, in.read(b, 0, 100)); // block 0
                assertFalse(in.counters().prefetchPending(), "the first read is not sequential");
                assertEquals(4900, in.read(b, 100, 4900)); // block 1: sequential, prefetch block 2
                assertArrayEquals(Arrays.copyOfRange(data, 0, 5000), b);
                assertTrue(
                        in.counters().prefetchPending(),
                        "a sequential read reached block 1: no prefetch");
                assertTrue(in.awaitPrefetch(30_000));
                long before = in.counters().nativeReads();
                assertEquals(3, before);

                // Seeking within the current block or into the prefetched one keeps it.
                in.seek(4200);
                assertTrue(in.counters().prefetchPending());
                in.seek(9000);
                assertTrue(in.counters().prefetchPending());
                assertEquals(data[9000] & 0xff, in.read());
                assertEquals(1, in.counters().prefetchesUsed());
                assertTrue(
                        in.counters().prefetchPending(),
                        "taking the prefetch did not start the next one");
                assertTrue(in.awaitPrefetch(30_000));
                assertEquals(before + 1, in.counters().nativeReads(), "block 2 was read again");

                // Seeking elsewhere discards it: the bytes there are the object's, not the
                // prefetch's.
                in.seek(50_001);
                assertFalse(in.counters().prefetchPending());
                byte[] after = new byte[3000];
                assertEquals(3000, in.read(after, 0, 3000));
                assertArrayEquals(Arrays.copyOfRange(data, 50_001, 53_001), after);
                assertEquals(1, in.counters().prefetchesUsed());
                assertFalse(
                        in.counters().prefetchPending(), "a read after a seek is not sequential");
                assertEquals(2000, in.read(after, 0, 2000)); // sequential, past the block
                assertArrayEquals(
                        Arrays.copyOfRange(data, 53_001, 55_001), Arrays.copyOf(after, 2000));
                assertTrue(in.counters().prefetchPending());

                // skip() past the prefetch discards it too; reading on is correct.
                assertEquals(30_000, in.skip(30_000));
                assertFalse(in.counters().prefetchPending());
                assertEquals(data[85_001] & 0xff, in.read());

                // Backwards, then read to the end: every byte is right.
                in.seek(10);
                byte[] rest = in.readAllBytes();
                assertArrayEquals(Arrays.copyOfRange(data, 10, data.length), rest);
            }
        }
    }

    @Test
    void positionedReadsDoNotStartReadAhead() throws Exception {
        try (ObjectStore store = memory()) {
            byte[] data = random(100_000, 14);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(4096))) {
                byte[] b = new byte[1000];
                for (int p = 0; p + b.length <= 40_000; p += b.length) {
                    in.readFully(p, b);
                    assertArrayEquals(Arrays.copyOfRange(data, p, p + b.length), b);
                    assertFalse(in.counters().prefetchPending(), "positioned read at " + p);
                }
                assertEquals(0, in.counters().prefetchesUsed());
                assertEquals(0, in.getPos());
                assertEquals((40_000 + 4095) / 4096, in.counters().nativeReads());
            }
        }
    }

    @Test
    void prefetchFailureSurfacesAtTheReadThatNeedsIt() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("rafail/"), server.rootOptions())) {
            int bs = 64 << 10;
            byte[] data = random(6 * bs, 15);
            store.put("o", data);
            try (SeekableObjectInputStream in =
                    store.openInput("o", ranged().withBlockSize(bs))) {
                assertEquals(data[0] & 0xff, in.read()); // block 0
                byte[] b = new byte[bs];
                assertEquals(bs, in.readNBytes(b, 0, bs)); // block 1, sequential: prefetch 2
                assertTrue(in.counters().prefetchPending());
                assertTrue(in.awaitPrefetch(30_000), "the prefetch of block 2 did not finish");
                assertEquals(
                        3, in.counters().nativeReads()); // blocks 0 and 1, and the prefetch of 2

                // The object is deleted and replaced: its ETag changes.
                store.delete("o");
                store.put("o", random(6 * bs, 16));

                // Block 2 was fetched before the replacement: served, and it starts the
                // prefetch of block 3, which fails (If-Match) on the pool thread.
                in.seek(2L * bs);
                byte[] block2 = new byte[bs];
                assertEquals(bs, in.readNBytes(block2, 0, bs));
                assertArrayEquals(Arrays.copyOfRange(data, 2 * bs, 3 * bs), block2);
                assertTrue(in.counters().prefetchPending());
                assertTrue(in.awaitPrefetch(30_000));
                assertEquals(3 * bs, in.getPos(), "the failure surfaced before its bytes");

                // The read that reaches block 3 gets the same exception as a direct read.
                PreconditionFailedException e =
                        assertThrows(PreconditionFailedException.class, in::read);
                assertEquals(3 * bs, in.getPos());
                assertTrue(
                        Arrays.stream(e.getSuppressed())
                                .anyMatch(s -> s.getMessage().contains("read-ahead")),
                        "no note of the read-ahead");
                // And a direct (synchronous) read fails the same way.
                assertThrows(PreconditionFailedException.class, in::read);
            }
        }
    }

    @Test
    void closeDuringAnInFlightPrefetchReturnsPromptly() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("raclose/"), server.rootOptions())) {
            int bs = 8 << 20;
            byte[] data = random(3 * bs, 17);
            store.put("o", data);
            for (int round = 0; round < 3; round++) {
                SeekableObjectInputStream in =
                        store.openInput("o", ranged().withBlockSize(bs));
                assertEquals(data[0] & 0xff, in.read()); // block 0
                byte[] b = new byte[bs];
                assertEquals(bs, in.readNBytes(b, 0, bs)); // block 1, sequential: prefetch 2
                assertTrue(in.counters().prefetchPending());
                boolean named =
                        Thread.getAllStackTraces().keySet().stream()
                                .anyMatch(
                                        t ->
                                                t.getName().startsWith("vended-storage-readahead-")
                                                        && t.isDaemon());
                assertTrue(named, "no daemon vended-storage-readahead-N thread");
                long t0 = System.nanoTime();
                in.close();
                long closeMillis = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(closeMillis < 1000, "close took " + closeMillis + " ms");
                assertFalse(in.counters().prefetchPending());
                IOException closed = assertThrows(IOException.class, in::read);
                assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
                in.close(); // idempotent
            }
            // The store is still usable, and closes with the discarded GETs done or running.
            assertArrayEquals(
                    Arrays.copyOfRange(data, bs, bs + 10),
                    store.getRanges("o", List.of(new ByteRange(bs, bs + 10))).get(0));
        }
    }
}
