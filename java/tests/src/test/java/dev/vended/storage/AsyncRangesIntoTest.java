package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code AsyncObjectStore.getRangesIntoAsync} against callers that misuse it: the native copy into
 * the allocator's buffers stays inside each buffer whatever another thread does to its position,
 * the lengths fetched are the ones used when the caller changes its list afterwards, and a call
 * cancelled before its result is taken never calls the allocator.
 */
@Timeout(120)
class AsyncRangesIntoTest {

    private static LocalS3Server server;
    private static ObjectStore store;
    private static final byte[] DATA = new byte[1 << 20];

    @BeforeAll
    static void start() throws Exception {
        server = LocalS3Server.start("rangesinto");
        store = ObjectStore.open(server.uri("r/"), server.rootOptions());
        new SplittableRandom(41).nextBytes(DATA);
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

    /**
     * A thread moves each buffer's position while the native side fills it. Each 64-byte range
     * goes into a slice of 64 bytes of one parent buffer, 256 bytes apart: the 192 bytes after
     * each slice must stay zero (before the fix, 2 of 400 slots were written past their slice and
     * separate buffers crashed the JVM). Each call either completes or fails with {@link
     * IllegalArgumentException}; none writes outside its buffers.
     */
    @Test
    void aPositionMovedByAnotherThreadNeverLetsTheCopyLeaveTheBuffer() throws Exception {
        List<ByteRange> ranges = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            ranges.add(new ByteRange(i * 10L, i * 10L + 64));
        }
        try (AsyncObjectStore async = AsyncObjectStore.of(store)) {
            for (int round = 0; round < 10; round++) {
                ByteBuffer parent = ByteBuffer.allocateDirect(400 * 256);
                AtomicBoolean stop = new AtomicBoolean();
                AtomicReference<ByteBuffer> current = new AtomicReference<>();
                Thread mover =
                        new Thread(
                                () -> {
                                    while (!stop.get()) {
                                        ByteBuffer c = current.get();
                                        if (c != null) {
                                            c.position(c.limit());
                                            c.position(0);
                                        }
                                    }
                                });
                mover.setDaemon(true);
                mover.start();
                AtomicInteger slot = new AtomicInteger();
                try {
                    async.getRangesIntoAsync(
                                    "o",
                                    ranges,
                                    4096,
                                    1 << 20,
                                    n -> {
                                        int p = slot.getAndAdd(256);
                                        ByteBuffer s =
                                                parent.duplicate().position(p).limit(p + n).slice();
                                        current.set(s);
                                        return s;
                                    })
                            .get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    // The caller's race may fail the call, as a clear argument error.
                    assertTrue(
                            e.getCause() instanceof IllegalArgumentException,
                            String.valueOf(e.getCause()));
                } finally {
                    stop.set(true);
                    mover.join(10_000);
                }
                for (int i = 0; i < 400; i++) {
                    for (int g = i * 256 + 64; g < (i + 1) * 256; g++) {
                        assertEquals(0, parent.get(g), "round " + round + ": byte " + g);
                    }
                }
            }
        }
    }

    @Test
    void theLengthsFetchedAreUsedWhateverTheCallerDoesToItsList() throws Exception {
        ExecutorService cb = AsyncObjectStoreTest.callbacks();
        AsyncObjectStoreTest.Gate gate = new AsyncObjectStoreTest.Gate();
        try (AsyncObjectStore async = AsyncObjectStore.of(store, gate, 8)) {
            List<ByteRange> ranges = new ArrayList<>(List.of(new ByteRange(0, 1000)));
            CompletableFuture<List<ByteBuffer>> f =
                    async.getRangesIntoAsync("o", ranges, 4096, 1 << 20, ByteBuffer::allocate);
            ranges.set(0, new ByteRange(0, 1));
            ranges.add(new ByteRange(5, 6));
            gate.awaitHeld(1);
            gate.release(cb);
            List<ByteBuffer> got = f.get(30, TimeUnit.SECONDS);
            assertEquals(1, got.size());
            byte[] bytes = new byte[got.get(0).remaining()];
            got.get(0).get(bytes);
            assertArrayEquals(Arrays.copyOf(DATA, 1000), bytes);
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    void aCallCancelledBeforeItsResultIsTakenNeverCallsTheAllocator() throws Exception {
        ExecutorService cb = AsyncObjectStoreTest.callbacks();
        AsyncObjectStoreTest.Gate gate = new AsyncObjectStoreTest.Gate();
        AtomicInteger allocations = new AtomicInteger();
        try (AsyncObjectStore async = AsyncObjectStore.of(store, gate, 8)) {
            CompletableFuture<List<ByteBuffer>> f =
                    async.getRangesIntoAsync(
                            "o",
                            List.of(new ByteRange(0, 100), new ByteRange(500, 600)),
                            4096,
                            1 << 20,
                            n -> {
                                allocations.incrementAndGet();
                                return ByteBuffer.allocate(n);
                            });
            // The read has ended (its completion is held), then the caller cancels.
            gate.awaitHeld(1);
            assertTrue(f.cancel(true));
            gate.release(cb);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (async.inFlight() > 0) {
                assertTrue(System.nanoTime() < deadline, "the cancelled call kept its permit");
                Thread.sleep(5); // polling a count; there is no signal to wait on
            }
            assertEquals(0, allocations.get());
            try {
                f.get();
            } catch (CancellationException expected) {
                // as cancelled
            }
        } finally {
            cb.shutdownNow();
        }
    }
}
