package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Opening, closing and using closed stores (memory:// store, native library needed). */
@Timeout(60)
class ObjectStoreLifecycleTest {

    private static String memoryUri() {
        return "memory:///lifecycle-" + UUID.randomUUID() + "/";
    }

    @Test
    void nativeVersionIsReported() {
        String v = ObjectStore.nativeVersion();
        assertNotNull(v);
        assertFalse(v.isBlank());
    }

    @Test
    void closeIsIdempotentAndEveryMethodThrowsAfterwards() throws Exception {
        ObjectStore store = ObjectStore.open(memoryUri(), Map.of());
        store.put("x", new byte[] {1});
        assertFalse(store.isClosed());
        store.close();
        store.close();
        assertTrue(store.isClosed());
        assertTrue(store.toString().contains("closed=true"), store.toString());

        List<Executable> calls =
                List.of(
                        () -> store.get("x"),
                        () -> store.getRange("x", 0, 1),
                        () -> store.put("x", new byte[] {2}),
                        () -> store.head("x"),
                        () -> store.list(null),
                        () -> store.list("a"),
                        () -> store.delete("x"),
                        store::refreshStats);
        for (Executable call : calls) {
            IllegalStateException e = assertThrows(IllegalStateException.class, call);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
        store.close();
    }

    @Test
    void tryWithResourcesAndBuilder() throws Exception {
        byte[] data = "hello".getBytes(StandardCharsets.UTF_8);
        try (ObjectStore store = ObjectStore.builder(memoryUri()).options(Map.of()).open()) {
            store.put("greeting", data);
            assertArrayEquals(data, store.get("greeting"));
            RefreshStats stats = store.refreshStats();
            assertEquals(-1L, stats.expiresAtMillis());
        }
    }

    @Test
    void nullPathsAndBadRangesAreRejectedInJava() throws Exception {
        try (ObjectStore store = ObjectStore.open(memoryUri(), null)) {
            NullPointerException e =
                    assertThrows(NullPointerException.class, () -> store.get(null));
            assertEquals("path", e.getMessage());
            assertEquals(
                    "path",
                    assertThrows(NullPointerException.class, () -> store.put(null, new byte[0]))
                            .getMessage());
            assertEquals(
                    "data",
                    assertThrows(NullPointerException.class, () -> store.put("p", null))
                            .getMessage());
            assertEquals(
                    "path",
                    assertThrows(NullPointerException.class, () -> store.head(null)).getMessage());
            assertEquals(
                    "path",
                    assertThrows(NullPointerException.class, () -> store.delete(null))
                            .getMessage());
            assertEquals(
                    "path",
                    assertThrows(NullPointerException.class, () -> store.getRange(null, 0, 1))
                            .getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.getRange("p", -1, 1));
            assertThrows(IllegalArgumentException.class, () -> store.getRange("p", 5, 4));
        }
    }

    @Test
    void closeWhileOtherThreadsAreInCalls() throws Exception {
        ObjectStore store = ObjectStore.open(memoryUri(), Map.of());
        int threads = 4;
        CountDownLatch warmedUp = new CountDownLatch(threads);
        ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        AtomicLong closedSeen = new AtomicLong();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w =
                    new Thread(
                            () -> {
                                byte[] data = new byte[1024];
                                for (int n = 0; ; n++) {
                                    try {
                                        store.put("t" + id + "/" + (n % 16), data);
                                        store.get("t" + id + "/" + (n % 16));
                                        store.list("t" + id);
                                    } catch (IllegalStateException e) {
                                        closedSeen.incrementAndGet();
                                        return;
                                    } catch (Throwable e) {
                                        unexpected.add(e);
                                        return;
                                    }
                                    if (n == 20) {
                                        warmedUp.countDown();
                                    }
                                }
                            },
                            "lifecycle-worker-" + t);
            workers.add(w);
            w.start();
        }
        assertTrue(warmedUp.await(30, TimeUnit.SECONDS), "workers did not get going");
        store.close();
        for (Thread w : workers) {
            w.join(30_000);
            assertFalse(w.isAlive(), w.getName() + " still running after close");
        }
        assertTrue(unexpected.isEmpty(), () -> "unexpected failures: " + unexpected);
        assertEquals(threads, closedSeen.get());
    }

    @Test
    void storesAreIndependentOfEachOtherAfterClose() throws Exception {
        String uri = memoryUri();
        ObjectStore a = ObjectStore.open(uri, Map.of());
        ObjectStore b = ObjectStore.open(uri, Map.of());
        a.close();
        b.put("still-open", new byte[] {7});
        assertArrayEquals(new byte[] {7}, b.get("still-open"));
        b.close();
    }
}
