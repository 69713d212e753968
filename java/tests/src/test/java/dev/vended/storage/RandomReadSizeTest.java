package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The adaptive size of ranged reads ({@link ReadPolicy#RANDOM}, default 1 MiB blocks): a 64 KiB
 * random read fetches about 64 KiB (not a block), a run that turns out sequential grows to whole
 * blocks with the read-ahead, and a footer read fetches the last 64 KiB (not the last block). GETs
 * are counted in the local endpoint's request log, bytes by the stream's ranged reads.
 */
@Timeout(120)
class RandomReadSizeTest {

    private static final int SIZE = 16 << 20;
    private static final int READ = 64 << 10;
    private static LocalS3Server server;
    private static byte[] data;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("random-read-size");
        data = new byte[SIZE];
        new SplittableRandom(7).nextBytes(data);
        try (ObjectStore store = store()) {
            store.put("o", data);
        }
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static ObjectStore store() throws StorageException {
        return ObjectStore.open(server.uri("rrs/"), server.rootOptions());
    }

    private static ReadOptions random() {
        return ReadOptions.defaults().withReadPolicy(ReadPolicy.RANDOM).withKnownLength(SIZE, null);
    }

    private static long gets() throws IOException {
        return server.requests().stream()
                .filter(r -> r.method().equals("GET") && "rrs/o".equals(r.key()))
                .filter(RequestRecord::accepted)
                .count();
    }

    @Test
    void randomReadsOf64KiBFetchAboutWhatTheyNeed() throws Exception {
        SplittableRandom r = new SplittableRandom(11);
        int reads = 40;
        try (ObjectStore store = store();
                SeekableObjectInputStream in = store.openInput("o", random())) {
            long before = gets();
            byte[] b = new byte[READ];
            for (int i = 0; i < reads; i++) {
                long p = r.nextLong(SIZE - READ);
                if (i % 2 == 0) {
                    in.seek(p);
                    int done = 0;
                    while (done < READ) {
                        done += in.read(b, done, READ - done);
                    }
                } else {
                    in.readFully(p, b);
                }
                assertArrayEquals(Arrays.copyOfRange(data, (int) p, (int) p + READ), b, "at " + p);
            }
            long read = (long) reads * READ;
            assertTrue(
                    in.counters().rangedBytes() <= 2 * read,
                    in.counters().rangedBytes() + " bytes fetched for " + read + " read");
            assertTrue(
                    in.counters().rangedBytes() >= read,
                    in.counters().rangedBytes() + " bytes fetched");
            assertEquals(reads, gets() - before, "one GET per random read");
            assertEquals(0, in.counters().prefetchesUsed());
        }
    }

    @Test
    void aSmallRandomReadFetches64KiB() throws Exception {
        try (ObjectStore store = store();
                SeekableObjectInputStream in = store.openInput("o", random())) {
            in.seek(3_000_000);
            assertEquals(data[3_000_000] & 0xff, in.read());
            assertEquals(ReadOptions.MIN_RANDOM_READ, in.counters().rangedBytes());
            byte[] b = new byte[100];
            in.readFully(5_000_000, b);
            assertArrayEquals(Arrays.copyOfRange(data, 5_000_000, 5_000_100), b);
            assertEquals(2L * ReadOptions.MIN_RANDOM_READ, in.counters().rangedBytes());
        }
    }

    @Test
    void aSequentialRunGrowsToWholeBlocks() throws Exception {
        int scan = 4 << 20;
        try (ObjectStore store = store();
                SeekableObjectInputStream in = store.openInput("o", random())) {
            long before = gets();
            in.seek(1 << 20);
            byte[] b = new byte[READ];
            for (int done = 0; done < scan; done += READ) {
                int got = 0;
                while (got < READ) {
                    got += in.read(b, got, READ - got);
                }
                int p = (1 << 20) + done;
                assertArrayEquals(Arrays.copyOfRange(data, p, p + READ), b, "at " + p);
            }
            assertTrue(in.awaitPrefetch(60_000));
            // the first 64 KiB, then 1 MiB blocks (read ahead one block beyond the scan)
            assertTrue(gets() - before <= 6, (gets() - before) + " GETs");
            assertTrue(
                    in.counters().prefetchesUsed() >= 2,
                    in.counters().prefetchesUsed() + " prefetched");
            assertTrue(
                    in.counters().rangedBytes() <= scan + 2L * ReadOptions.DEFAULT_BLOCK_SIZE,
                    in.counters().rangedBytes() + " bytes fetched");
        }
    }

    @Test
    void aFooterReadFetchesTheLast64KiBNotABlock() throws Exception {
        try (ObjectStore store = store();
                SeekableObjectInputStream in = store.openInput("o", random())) {
            long before = gets();
            byte[] tail = new byte[8];
            in.readFully(SIZE - 8, tail);
            byte[] footer = new byte[20 << 10];
            in.readFully(SIZE - 8 - footer.length, footer);
            assertArrayEquals(Arrays.copyOfRange(data, SIZE - 8, SIZE), tail);
            assertArrayEquals(
                    Arrays.copyOfRange(data, SIZE - 8 - footer.length, SIZE - 8), footer);
            assertEquals(1, gets() - before, "tail and footer: one GET");
            assertEquals(
                    ReadOptions.MIN_RANDOM_READ, in.counters().rangedBytes(), "64 KiB, not 1 MiB");
            // A longer footer: a second GET of its own size, still not a block.
            byte[] big = new byte[300 << 10];
            in.readFully(SIZE - 8 - big.length, big);
            assertArrayEquals(Arrays.copyOfRange(data, SIZE - 8 - big.length, SIZE - 8), big);
            assertEquals(2, gets() - before);
            assertEquals(ReadOptions.MIN_RANDOM_READ + big.length, in.counters().rangedBytes());
        }
    }

    @Test
    void smallReadsInTheLastBlockFetch64KiBEach() throws Exception {
        try (ObjectStore store = store();
                SeekableObjectInputStream in = store.openInput("o", random())) {
            long before = gets();
            byte[] b = new byte[100];
            int[] at = {SIZE - 900_000, SIZE - 500_000, SIZE - 200_000};
            for (int p : at) {
                in.readFully(p, b);
                assertArrayEquals(Arrays.copyOfRange(data, p, p + 100), b, "at " + p);
            }
            assertEquals(at.length, gets() - before);
            assertEquals(
                    (long) at.length * ReadOptions.MIN_RANDOM_READ, in.counters().rangedBytes());
        }
    }
}
