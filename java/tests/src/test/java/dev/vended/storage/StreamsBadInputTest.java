package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
                    store.openInput("o", ReadOptions.defaults().withBlockSize(4096))) {
                for (int i = 0; i < data.length; i++) {
                    assertEquals(data[i] & 0xff, in.read(), "byte " + i);
                }
                assertEquals(-1, in.read());
                // 100,000 bytes in 4 KiB blocks: 25 native reads, not 100,000.
                assertEquals((data.length + 4095) / 4096, in.nativeReads());
                // Seeking back inside the current block costs nothing.
                long before = in.nativeReads();
                in.seek(data.length - 10);
                assertEquals(data[data.length - 10] & 0xff, in.read());
                assertEquals(before, in.nativeReads());
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
                assertEquals(1, in.nativeReads(), "one request for one large read");
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
}
