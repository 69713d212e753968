package dev.vended.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.LocalS3Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A stream's block lent by the native side ({@link NativeBlock}): small reads copy out of the
 * network buffers the block's bytes arrived in, across their chunk boundaries, under every read
 * policy and with the prefetch; closing the stream or moving to another block frees the native
 * memory; a close racing with reads on another thread never frees memory under a copy (the reader
 * gets an {@link IOException} or its bytes, both correct).
 */
@Timeout(180)
class StreamBlockTest {

    private static LocalS3Server server;
    private static ObjectStore store;
    private static final byte[] DATA = new byte[(3 << 20) + 4321];

    @BeforeAll
    static void start() throws Exception {
        server = LocalS3Server.start("blocks");
        store = ObjectStore.open(server.uri("b/"), server.rootOptions());
        new SplittableRandom(35).nextBytes(DATA);
        store.put("o", DATA);
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static byte[] slice(long from, int len) {
        return Arrays.copyOfRange(DATA, (int) from, (int) from + len);
    }

    @Test
    void smallReadsCopyOutOfTheLentBlockUnderEveryPolicy() throws Exception {
        for (ReadPolicy policy : ReadPolicy.values()) {
            ReadOptions options = ReadOptions.defaults().withReadPolicy(policy);
            try (SeekableObjectInputStream in = store.openInput("o", options)) {
                // One byte at a time through two blocks and the prefetch: every byte right.
                for (int i = 0; i < (2 << 20) + 17; i++) {
                    assertThat(in.read()).as("%s byte %d", policy, i).isEqualTo(DATA[i] & 0xff);
                }
                // Small array, heap and direct buffer reads of odd sizes, sequential.
                byte[] b = new byte[777];
                ByteBuffer heap = ByteBuffer.allocate(333);
                ByteBuffer direct = ByteBuffer.allocateDirect(5000);
                long p = in.getPos();
                for (int round = 0; round < 40; round++) {
                    assertThat(in.read(b, 0, b.length)).isEqualTo(b.length);
                    assertThat(b).as("%s array at %d", policy, p).isEqualTo(slice(p, b.length));
                    p += b.length;
                    heap.clear();
                    assertThat(in.read(heap)).isEqualTo(heap.capacity());
                    assertThat(heap.array()).isEqualTo(slice(p, heap.capacity()));
                    p += heap.capacity();
                    direct.clear().position(10);
                    assertThat(in.read(direct)).isEqualTo(direct.capacity() - 10);
                    byte[] got = new byte[direct.capacity() - 10];
                    direct.get(10, got);
                    assertThat(got).isEqualTo(slice(p, got.length));
                    p += got.length;
                }
                assertThat(in.getPos()).isEqualTo(p);
            }
        }
    }

    @Test
    void footerAndRandomPositionedReadsComeFromTheBlockTheyLoaded() throws Exception {
        try (SeekableObjectInputStream in = store.openInput("o")) {
            byte[] tail = new byte[8];
            in.readFully(DATA.length - 8, tail);
            assertThat(tail).isEqualTo(slice(DATA.length - 8, 8));
            long requests = in.counters().nativeReads();
            byte[] footer = new byte[40_000];
            in.readFully(DATA.length - 8 - footer.length, footer);
            assertThat(footer).isEqualTo(slice(DATA.length - 8 - footer.length, footer.length));
            assertThat(in.counters().nativeReads())
                    .as("the footer came from the block")
                    .isEqualTo(requests);
            SplittableRandom random = new SplittableRandom(7);
            for (int i = 0; i < 200; i++) {
                int len = 1 + random.nextInt(9000);
                long at = random.nextLong(DATA.length - len);
                byte[] got = new byte[len];
                in.readFully(at, got);
                assertThat(got).as("%d bytes at %d", len, at).isEqualTo(slice(at, len));
            }
        }
    }

    @Test
    void closingAStreamOrMovingOnFreesItsBlocks() throws Exception {
        long before = NativeTestHooks.liveBlocks();
        SeekableObjectInputStream in = store.openInput("o");
        for (long at : new long[] {0, 1 << 20, 2 << 20, 100, DATA.length - 10}) {
            byte[] b = new byte[10];
            in.readFully(at, b);
            assertThat(b).isEqualTo(slice(at, 10));
            // One block held at a time by positioned reads: the previous one was freed.
            assertThat(NativeTestHooks.liveBlocks() - before).as("at %d", at).isLessThanOrEqualTo(1);
        }
        in.close();
        assertThat(NativeTestHooks.liveBlocks()).isLessThanOrEqualTo(before);
        assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("closed");
    }

    @Test
    void aCloseRacingWithReadsNeverFreesMemoryUnderACopy() throws Exception {
        long before = NativeTestHooks.liveBlocks();
        for (int round = 0; round < 30; round++) {
            SeekableObjectInputStream in = store.openInput("o");
            CountDownLatch reading = new CountDownLatch(1);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong checked = new AtomicLong();
            Thread reader =
                    new Thread(
                            () -> {
                                byte[] b = new byte[100];
                                try {
                                    for (int i = 0; i < 200_000; i++) {
                                        long at = (i * 7919L) % (DATA.length - b.length);
                                        in.readFully(at, b);
                                        if (!Arrays.equals(b, slice(at, b.length))) {
                                            failure.set(new AssertionError("wrong bytes at " + at));
                                            return;
                                        }
                                        checked.incrementAndGet();
                                        reading.countDown();
                                    }
                                } catch (IOException e) {
                                    // The close won: a closed stream, or a block released
                                    // before this read's copy started. Anything else fails.
                                } catch (RuntimeException e) {
                                    failure.set(e);
                                } finally {
                                    reading.countDown();
                                }
                            });
            reader.start();
            assertThat(reading.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            in.close();
            reader.join(60_000);
            assertThat(reader.isAlive()).isFalse();
            assertThat(failure.get()).as("round %d", round).isNull();
            assertThat(checked.get()).isPositive();
        }
        assertThat(NativeTestHooks.liveBlocks()).isLessThanOrEqualTo(before);
    }
}
