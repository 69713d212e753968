package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.EndpointProvider;
import dev.vended.storage.testkit.IssuingProvider;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code close()} racing with 8 threads doing I/O on an S3 store whose short-lived credentials are
 * refreshed meanwhile: every call completes or throws {@link IllegalStateException}, nothing else;
 * afterwards the provider is released. Also the same race straight against the native handle table,
 * without the Java-side call counting.
 */
@Timeout(90)
class CloseRaceTest {

    private static final int THREADS = 8;

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("closerace");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** What the workers saw. */
    private static final class Outcome {
        final AtomicLong completed = new AtomicLong();
        final AtomicInteger closedSeen = new AtomicInteger();
        final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
    }

    /**
     * One store, 8 workers, close from another thread; returns a weak reference to the provider.
     */
    private static WeakReference<IssuingProvider> raceOnce(int round) throws Exception {
        IssuingProvider provider = new IssuingProvider(server, 2_000, null);
        Map<String, String> initial = provider.fetchStorageOptions();
        ObjectStore store =
                ObjectStore.open(
                        server.uri("race-" + UUID.randomUUID() + "/"),
                        initial,
                        provider,
                        Duration.ofMillis(700));
        Outcome outcome = new Outcome();
        CountDownLatch warmedUp = new CountDownLatch(THREADS);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            Thread w =
                    new Thread(
                            () -> {
                                byte[] data = new byte[512 + id];
                                for (int n = 0; ; n++) {
                                    String path = "t" + id + "/" + (n % 8);
                                    try {
                                        store.put(path, data);
                                        assertArrayEquals(data, store.get(path));
                                        outcome.completed.addAndGet(2);
                                    } catch (IllegalStateException e) {
                                        if (!e.getMessage().contains("closed")) {
                                            outcome.unexpected.add(e);
                                        }
                                        outcome.closedSeen.incrementAndGet();
                                        return;
                                    } catch (Throwable e) {
                                        outcome.unexpected.add(e);
                                        return;
                                    }
                                    if (n == 5) {
                                        warmedUp.countDown();
                                    }
                                }
                            },
                            "close-race-" + round + "-" + t);
            workers.add(w);
        }
        workers.forEach(Thread::start);
        assertTrue(warmedUp.await(30, TimeUnit.SECONDS), "workers did not get going");
        // Vary the moment: sometimes right away, sometimes across a credential refresh.
        Thread.sleep(round * 400L);
        Thread closer = new Thread(store::close, "close-race-closer-" + round);
        closer.start();
        closer.join(10_000);
        assertFalse(closer.isAlive(), "close() blocked");
        for (Thread w : workers) {
            w.join(30_000);
            assertFalse(w.isAlive(), () -> w.getName() + " still running after close");
        }
        assertTrue(
                outcome.unexpected.isEmpty(),
                () -> "round " + round + ": unexpected failures: " + outcome.unexpected);
        assertEquals(THREADS, outcome.closedSeen.get(), "every worker ends on the closed store");
        assertTrue(outcome.completed.get() > 0);
        assertTrue(store.isClosed());
        return new WeakReference<>(provider);
    }

    @Test
    void closeRacingWithEightThreadsOfIoThenTheProviderIsReleased() throws Exception {
        List<WeakReference<IssuingProvider>> refs = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            refs.add(raceOnce(round));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (refs.stream().anyMatch(r -> r.get() != null) && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        for (int i = 0; i < refs.size(); i++) {
            assertNull(refs.get(i).get(), "round " + i + ": provider still reachable after close");
        }
    }

    /**
     * Closes the store while a background refresh is inside the provider on a native thread: the
     * refresh task then holds the last reference to the provider and drops it on that native
     * thread.
     */
    private static WeakReference<EndpointProvider> closeDuringRefresh() throws Exception {
        EndpointProvider provider = new EndpointProvider(server.endpoint(), 3_000);
        Map<String, String> initial = provider.fetchStorageOptions();
        long expiresAt = Long.parseLong(initial.get("expires_at_millis"));
        ObjectStore store =
                ObjectStore.open(
                        server.uri("refresh-close-" + UUID.randomUUID() + "/"),
                        initial,
                        provider,
                        Duration.ofMillis(1_400));
        store.put("x", new byte[] {1});
        provider.delay(1_500);
        Waits.sleepUntil(expiresAt - 1_300); // inside the lead window, before the stale window
        store.get("x"); // starts a background refresh, does not wait for it
        assertTrue(provider.awaitCalls(2, 10_000), "no background refresh: " + provider.callLog());
        store.close();
        assertTrue(
                provider.callLog().get(1).startsWith("vended-storage-"),
                () -> "refresh not on a native thread: " + provider.callLog());
        return new WeakReference<>(provider);
    }

    @Test
    void closeWhileARefreshIsInFlightReleasesTheProviderFromTheNativeThread() throws Exception {
        WeakReference<EndpointProvider> ref = closeDuringRefresh();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ref.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        assertNull(ref.get(), "provider still reachable after the in-flight refresh ended");
        // The runtime is still fine afterwards.
        try (ObjectStore store = ObjectStore.open(server.uri("after/"), server.rootOptions())) {
            store.put("y", new byte[] {2});
            assertArrayEquals(new byte[] {2}, store.get("y"));
        }
    }

    @Test
    void nativeCloseRacingWithNativeCallsOnTheSameHandle() throws Exception {
        // Straight to the native bridge: calls racing with close() on the same handle either
        // complete or find the handle closed (IllegalStateException); never a crash.
        ObjectStore.nativeVersion();
        Map<String, String> o = server.rootOptions();
        String[] keys = o.keySet().toArray(new String[0]);
        String[] values = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            values[i] = o.get(keys[i]);
        }
        for (int round = 0; round < 3; round++) {
            long h =
                    NativeBridge.open(
                            server.uri("native-race-" + UUID.randomUUID() + "/"),
                            keys,
                            values,
                            null,
                            null,
                            -1,
                            0);
            NativeBridge.put(h, "x", new byte[] {1, 2, 3});
            Outcome outcome = new Outcome();
            CountDownLatch started = new CountDownLatch(THREADS);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread w =
                        new Thread(
                                () -> {
                                    started.countDown();
                                    while (true) {
                                        try {
                                            NativeBridge.get(h, "x");
                                            NativeBridge.head(h, "x");
                                            NativeBridge.put(h, "y", new byte[] {4});
                                            outcome.completed.addAndGet(3);
                                        } catch (IllegalStateException e) {
                                            outcome.closedSeen.incrementAndGet();
                                            return;
                                        } catch (Throwable e) {
                                            outcome.unexpected.add(e);
                                            return;
                                        }
                                    }
                                });
                workers.add(w);
                w.start();
            }
            assertTrue(started.await(10, TimeUnit.SECONDS));
            Thread.sleep(50 + 100L * round);
            NativeBridge.close(h);
            NativeBridge.close(h); // idempotent
            for (Thread w : workers) {
                w.join(30_000);
                assertFalse(w.isAlive());
            }
            assertTrue(outcome.unexpected.isEmpty(), () -> "unexpected: " + outcome.unexpected);
            assertEquals(THREADS, outcome.closedSeen.get());
        }
    }
}
