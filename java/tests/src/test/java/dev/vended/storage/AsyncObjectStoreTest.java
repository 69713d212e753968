package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/** {@link AsyncObjectStore}: many calls in flight, callbacks on the given executor, cancel, bound. */
@Timeout(120)
class AsyncObjectStoreTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("async");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static ExecutorService callbacks() {
        return Executors.newFixedThreadPool(
                2,
                r -> {
                    Thread t = new Thread(r, "user-callback");
                    t.setDaemon(true);
                    return t;
                });
    }

    /** Holds submitted tasks until {@link #release()}: lets a test act before a call starts. */
    private static final class Gate implements java.util.concurrent.Executor {
        final LinkedBlockingQueue<Runnable> held = new LinkedBlockingQueue<>();
        final ExecutorService runner = Executors.newFixedThreadPool(4);

        @Override
        public void execute(Runnable r) {
            held.add(r);
        }

        void release() {
            for (Runnable r; (r = held.poll()) != null; ) {
                runner.execute(r);
            }
        }
    }

    @Test
    void sixtyFourCallsInFlightFromOneThreadComplete() throws Exception {
        ExecutorService cb = callbacks();
        try (ObjectStore store = ObjectStore.open(server.uri("a64/"), server.rootOptions());
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 64)) {
            List<CompletableFuture<Void>> puts = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                puts.add(async.putAsync("o" + i, ("value-" + i).getBytes()));
            }
            CompletableFuture.allOf(puts.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
            List<CompletableFuture<byte[]>> gets = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                gets.add(async.getAsync("o" + i));
            }
            for (int i = 0; i < 64; i++) {
                assertArrayEquals(("value-" + i).getBytes(), gets.get(i).get(60, TimeUnit.SECONDS));
            }
            assertEquals(64, async.listAsync(null).get(60, TimeUnit.SECONDS).size());
            assertEquals(7, async.headAsync("o1").get().size());
            assertArrayEquals("lue".getBytes(), async.getRangeAsync("o1", 2, 5).get());
            async.deleteAsync("o1").get();
            ExecutionException missing =
                    assertThrows(ExecutionException.class, () -> async.getAsync("o1").get());
            assertInstanceOf(ObjectNotFoundException.class, missing.getCause());
            assertEquals(0, async.inFlight());
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    void callbacksRunOnTheGivenExecutor() throws Exception {
        ExecutorService cb = callbacks();
        Gate gate = new Gate();
        try (ObjectStore store = ObjectStore.open(server.uri("cb/"), server.rootOptions());
                AsyncObjectStore async = new AsyncObjectStore(store, cb, 64, gate)) {
            store.put("x", new byte[] {42});
            Set<String> threads = ConcurrentHashMap.newKeySet();
            List<CompletableFuture<Integer>> chained = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                // Attached before the call can run (the gate holds it): must run where the
                // future is completed, i.e. on the callback executor.
                chained.add(
                        async.getAsync("x")
                                .thenApply(
                                        b -> {
                                            threads.add(Thread.currentThread().getName());
                                            return (int) b[0];
                                        }));
            }
            assertEquals(16, async.inFlight());
            gate.release();
            for (CompletableFuture<Integer> f : chained) {
                assertEquals(42, f.get(30, TimeUnit.SECONDS));
            }
            assertEquals(Set.of("user-callback"), threads);
        } finally {
            cb.shutdownNow();
            gate.runner.shutdownNow();
        }
    }

    @Test
    void cancelBeforeStartNeverSendsTheCall() throws Exception {
        ExecutorService cb = callbacks();
        Gate gate = new Gate();
        try (ObjectStore store = ObjectStore.open(server.uri("cancel/"), server.rootOptions());
                AsyncObjectStore async = new AsyncObjectStore(store, cb, 2, gate)) {
            CompletableFuture<Void> cancelled = async.putAsync("never", new byte[] {1});
            CompletableFuture<Void> kept = async.putAsync("kept", new byte[] {2});
            assertTrue(cancelled.cancel(true));
            assertThrows(CancellationException.class, cancelled::join);
            gate.release();
            kept.get(30, TimeUnit.SECONDS);
            assertArrayEquals(new byte[] {2}, store.get("kept"));
            assertThrows(ObjectNotFoundException.class, () -> store.head("never"));
            // The cancelled call's permit came back: the bound (2) admits two more.
            CompletableFuture<byte[]> a = async.getAsync("kept");
            CompletableFuture<byte[]> b = async.getAsync("kept");
            gate.release();
            assertArrayEquals(new byte[] {2}, a.get(30, TimeUnit.SECONDS));
            assertArrayEquals(new byte[] {2}, b.get(30, TimeUnit.SECONDS));
            assertEquals(0, async.inFlight());
        } finally {
            cb.shutdownNow();
            gate.runner.shutdownNow();
        }
    }

    @Test
    void theBoundBlocksTheSubmitterAndCloseRejects() throws Exception {
        ExecutorService cb = callbacks();
        Gate gate = new Gate();
        try (ObjectStore store = ObjectStore.open(server.uri("bound/"), server.rootOptions())) {
            store.put("x", new byte[] {1});
            AsyncObjectStore async = new AsyncObjectStore(store, cb, 1, gate);
            CompletableFuture<byte[]> first = async.getAsync("x");
            CompletableFuture<CompletableFuture<byte[]>> second =
                    CompletableFuture.supplyAsync(() -> async.getAsync("x"));
            // The submitter of the second call waits for a permit; it is not queued.
            assertThrows(
                    java.util.concurrent.TimeoutException.class,
                    () -> second.get(300, TimeUnit.MILLISECONDS));
            assertEquals(1, gate.held.size());
            gate.release();
            assertArrayEquals(new byte[] {1}, first.get(30, TimeUnit.SECONDS));
            CompletableFuture<byte[]> secondCall = second.get(30, TimeUnit.SECONDS);
            gate.release();
            assertArrayEquals(new byte[] {1}, secondCall.get(30, TimeUnit.SECONDS));
            async.close();
            ExecutionException rejected =
                    assertThrows(ExecutionException.class, () -> async.getAsync("x").get());
            assertInstanceOf(RejectedExecutionException.class, rejected.getCause());
            assertThrows(IllegalArgumentException.class, () -> AsyncObjectStore.of(store, cb, 0));
        } finally {
            cb.shutdownNow();
            gate.runner.shutdownNow();
        }
    }
}
