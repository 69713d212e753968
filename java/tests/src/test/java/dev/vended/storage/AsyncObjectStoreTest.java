package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.StsProvider;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link AsyncObjectStore} with native completion: many calls in flight from one thread, every
 * operation, completions handed over by native runtime threads and callbacks run on the given
 * executor, the same exceptions as synchronous calls, the bound, close, credential rotation.
 */
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

    static ExecutorService callbacks() {
        return Executors.newFixedThreadPool(
                2,
                r -> {
                    Thread t = new Thread(r, "user-callback");
                    t.setDaemon(true);
                    return t;
                });
    }

    /** The native runtime's threads are {@code vended-storage-N} (crates/jni/src/runtime.rs). */
    static boolean isNativeThreadName(String name) {
        return name.matches("vended-storage-\\d+");
    }

    static boolean isNativeThread(Thread t) {
        return isNativeThreadName(t.getName());
    }

    /**
     * A callback executor that holds completions until {@link #release}, recording the threads
     * that handed them over: lets a test attach stages before any call can complete.
     */
    static final class Gate implements Executor {
        final LinkedBlockingQueue<Runnable> held = new LinkedBlockingQueue<>();
        final Set<Thread> submitters = ConcurrentHashMap.newKeySet();

        @Override
        public void execute(Runnable r) {
            submitters.add(Thread.currentThread());
            held.add(r);
        }

        void awaitHeld(int n) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (held.size() < n) {
                assertTrue(System.nanoTime() < deadline, "only " + held.size() + " completions");
                Thread.sleep(5); // polling a count; there is no signal to wait on
            }
        }

        void release(Executor to) {
            for (Runnable r; (r = held.poll()) != null; ) {
                to.execute(r);
            }
        }
    }

    private static <T> Throwable failure(CompletableFuture<T> f) {
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void sixtyFourCallsInFlightFromOneThreadAndEveryOperation() throws Exception {
        ExecutorService cb = callbacks();
        try (ObjectStore store = ObjectStore.open(server.uri("a64/"), server.rootOptions());
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 64)) {
            List<CompletableFuture<Void>> puts = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                puts.add(async.putAsync("o" + i, ("value-" + i).getBytes()));
            }
            CompletableFuture.allOf(puts.toArray(new CompletableFuture<?>[0]))
                    .get(60, TimeUnit.SECONDS);
            List<CompletableFuture<byte[]>> gets = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                gets.add(async.getAsync("o" + i));
            }
            for (int i = 0; i < 64; i++) {
                assertArrayEquals(("value-" + i).getBytes(), gets.get(i).get(60, TimeUnit.SECONDS));
            }
            assertEquals(64, async.listAsync(null).get(30, TimeUnit.SECONDS).size());
            ObjectMeta meta = async.headAsync("o1").get(30, TimeUnit.SECONDS);
            assertEquals(7, meta.size());
            assertEquals(store.head("o1").eTag(), meta.eTag());
            assertArrayEquals("lue".getBytes(), async.getRangeAsync("o1", 2, 5).get());
            assertArrayEquals(new byte[0], async.getRangeAsync("o1", 3, 3).get());
            assertArrayEquals("lue-1".getBytes(), async.getRangeAsync("o1", 2, 100).get());
            // As the synchronous getRange: a start past the end names the object's size.
            Throwable past = failure(async.getRangeAsync("o1", 7, 9));
            assertInstanceOf(InvalidOptionsException.class, past);
            assertTrue(past.getMessage().contains("past the end of the object (7 bytes)"));
            List<byte[]> parts =
                    async.getRangesAsync("o1", List.of(new ByteRange(0, 1), new ByteRange(6, 7)))
                            .get(30, TimeUnit.SECONDS);
            assertArrayEquals("v".getBytes(), parts.get(0));
            assertArrayEquals("1".getBytes(), parts.get(1));
            assertEquals(List.of(), async.getRangesAsync("o1", List.of()).get());

            WriteResult created = async.putIfAbsentAsync("new", new byte[] {1}).get();
            assertNotNull(created.eTag());
            assertInstanceOf(
                    ObjectAlreadyExistsException.class,
                    failure(async.putIfAbsentAsync("new", new byte[] {2})));
            assertInstanceOf(
                    PreconditionFailedException.class,
                    failure(async.putIfMatchAsync("new", new byte[] {3}, "\"not-the-etag\"")));
            async.putIfMatchAsync("new", new byte[] {4}, created.eTag()).get();
            assertArrayEquals(new byte[] {4}, store.get("new"));

            async.copyAsync("o2", "copied").get(30, TimeUnit.SECONDS);
            assertArrayEquals("value-2".getBytes(), store.get("copied"));
            async.renameAsync("copied", "moved").get(30, TimeUnit.SECONDS);
            assertArrayEquals("value-2".getBytes(), store.get("moved"));
            assertThrows(ObjectNotFoundException.class, () -> store.head("copied"));

            async.deleteAsync("o1").get();
            assertInstanceOf(ObjectNotFoundException.class, failure(async.getAsync("o1")));
            assertEquals(0, async.inFlight());
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    void rangesGoIntoTheCallersBuffersAndNothingIsAllocatedWhenTheReadFails() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("into/"), server.rootOptions());
                AsyncObjectStore async = AsyncObjectStore.of(store)) {
            byte[] data = new byte[3 << 20];
            new SplittableRandom(3).nextBytes(data);
            store.put("o", data);
            List<ByteRange> ranges =
                    List.of(
                            new ByteRange(5, 10),
                            new ByteRange(1 << 20, (2 << 20) + 17),
                            new ByteRange(0, 3));
            AtomicInteger allocations = new AtomicInteger();
            for (boolean direct : new boolean[] {false, true}) {
                allocations.set(0);
                List<ByteBuffer> got =
                        async.getRangesIntoAsync(
                                        "o",
                                        ranges,
                                        4096,
                                        1 << 20,
                                        n -> {
                                            allocations.incrementAndGet();
                                            return direct
                                                    ? ByteBuffer.allocateDirect(n)
                                                    : ByteBuffer.allocate(n);
                                        })
                                .get(30, TimeUnit.SECONDS);
                assertEquals(3, allocations.get());
                for (int i = 0; i < ranges.size(); i++) {
                    ByteRange r = ranges.get(i);
                    ByteBuffer b = got.get(i);
                    assertEquals(direct, b.isDirect());
                    assertEquals(0, b.position());
                    assertEquals(r.endExclusive() - r.start(), b.remaining());
                    byte[] bytes = new byte[b.remaining()];
                    b.get(bytes);
                    assertArrayEquals(
                            Arrays.copyOfRange(data, (int) r.start(), (int) r.endExclusive()),
                            bytes);
                }
            }
            // A missing object fails as getRangesAsync does, and the allocator is not called.
            allocations.set(0);
            assertInstanceOf(
                    ObjectNotFoundException.class,
                    failure(
                            async.getRangesIntoAsync(
                                    "missing",
                                    ranges,
                                    4096,
                                    1 << 20,
                                    n -> {
                                        allocations.incrementAndGet();
                                        return ByteBuffer.allocate(n);
                                    })));
            assertEquals(0, allocations.get());
            // An allocator that throws fails the call with its own exception.
            IllegalStateException exhausted = new IllegalStateException("pool exhausted");
            assertSame(
                    exhausted,
                    failure(
                            async.getRangesIntoAsync(
                                    "o",
                                    ranges,
                                    0,
                                    1,
                                    n -> {
                                        throw exhausted;
                                    })));
            assertEquals(0, async.inFlight());
        }
    }

    @Test
    void errorsAreTheSynchronousCallsExceptions() throws Exception {
        Map<String, String> badKey = server.endpointOptions();
        badKey.put("aws_access_key_id", "no-such-key");
        badKey.put("aws_secret_access_key", "wrong");
        ExecutorService cb = callbacks();
        try (ObjectStore store = ObjectStore.open(server.uri("err/"), server.rootOptions());
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 8);
                ObjectStore denied = ObjectStore.open(server.uri("err/"), badKey);
                AsyncObjectStore deniedAsync = AsyncObjectStore.of(denied, cb, 8)) {
            store.put("x", new byte[] {1, 2, 3});
            StorageException sync = assertThrows(StorageException.class, () -> store.get("missing"));
            Throwable async1 = failure(async.getAsync("missing"));
            assertEquals(sync.getClass(), async1.getClass());
            assertEquals(sync.kind(), ((StorageException) async1).kind());
            assertEquals(sync.getMessage(), async1.getMessage());
            assertInstanceOf(ObjectNotFoundException.class, failure(async.headAsync("missing")));

            StorageException syncDenied =
                    assertThrows(StorageException.class, () -> denied.get("x"));
            assertInstanceOf(CredentialsException.class, syncDenied);
            Throwable asyncDenied = failure(deniedAsync.getAsync("x"));
            assertEquals(syncDenied.getClass(), asyncDenied.getClass());
            assertEquals(syncDenied.kind(), ((StorageException) asyncDenied).kind());

            assertInstanceOf(IllegalArgumentException.class, failure(async.getRangeAsync("x", 5, 2)));
            assertInstanceOf(IllegalArgumentException.class, failure(async.getRangeAsync("x", -1, 2)));
            assertInstanceOf(NullPointerException.class, failure(async.getAsync(null)));
            assertInstanceOf(NullPointerException.class, failure(async.putAsync("y", null)));
            assertInstanceOf(NullPointerException.class, failure(async.copyAsync(null, "z")));
            assertEquals(0, async.inFlight(), "a call that never started gave its permit back");
            store.close();
            assertInstanceOf(IllegalStateException.class, failure(async.getAsync("x")));
            assertEquals(0, async.inFlight());
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    void nativeThreadsHandOverAndCallbacksRunOnTheGivenExecutor() throws Exception {
        ExecutorService cb = callbacks();
        Gate gate = new Gate();
        try (ObjectStore store = ObjectStore.open(server.uri("cb/"), server.rootOptions());
                AsyncObjectStore async = AsyncObjectStore.of(store, gate, 64)) {
            store.put("x", new byte[] {42});
            Set<String> stageThreads = ConcurrentHashMap.newKeySet();
            List<CompletableFuture<Integer>> chained = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                // Attached before completion can happen (the gate holds it): runs where the
                // future is completed.
                chained.add(
                        async.getAsync("x")
                                .thenApply(
                                        b -> {
                                            stageThreads.add(Thread.currentThread().getName());
                                            return (int) b[0];
                                        }));
            }
            gate.awaitHeld(16);
            // The request finished natively, but the call is in flight until it is delivered.
            assertEquals(16, async.inFlight());
            for (Thread t : gate.submitters) {
                assertTrue(isNativeThread(t), "completion handed over by " + t.getName());
                assertTrue(t.isDaemon(), t.getName());
            }
            assertTrue(chained.stream().noneMatch(CompletableFuture::isDone));
            gate.release(cb);
            for (CompletableFuture<Integer> f : chained) {
                assertEquals(42, f.get(30, TimeUnit.SECONDS));
            }
            assertEquals(Set.of("user-callback"), stageThreads);
            assertEquals(0, async.inFlight());
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    void anInlineOrRejectingExecutorNeverRunsStagesOnNativeThreads() throws Exception {
        ExecutorService dead = callbacks();
        dead.shutdown();
        Executor inline = Runnable::run;
        try (ObjectStore store = ObjectStore.open(server.uri("inline/"), server.rootOptions())) {
            store.put("x", new byte[] {7});
            for (Executor executor : List.of(inline, dead)) {
                try (AsyncObjectStore async = AsyncObjectStore.of(store, executor, 8)) {
                    List<CompletableFuture<String>> names = new ArrayList<>();
                    for (int i = 0; i < 32; i++) {
                        names.add(
                                async.getAsync("x")
                                        .thenApply(b -> Thread.currentThread().getName()));
                    }
                    for (CompletableFuture<String> f : names) {
                        String name = f.get(30, TimeUnit.SECONDS);
                        assertFalse(isNativeThreadName(name), name);
                    }
                    assertEquals(0, async.inFlight());
                }
            }
        }
    }

    @Test
    void theBoundBlocksTheCallerAndCloseRejects() throws Exception {
        ExecutorService cb = callbacks();
        Gate gate = new Gate();
        try (ObjectStore store = ObjectStore.open(server.uri("bound/"), server.rootOptions())) {
            store.put("x", new byte[] {1});
            AsyncObjectStore async = AsyncObjectStore.of(store, gate, 1);
            CompletableFuture<byte[]> first = async.getAsync("x");
            gate.awaitHeld(1);
            CompletableFuture<CompletableFuture<byte[]>> second =
                    CompletableFuture.supplyAsync(() -> async.getAsync("x"), cb);
            // The caller of the second call waits for a permit: nothing is queued or sent.
            assertThrows(TimeoutException.class, () -> second.get(300, TimeUnit.MILLISECONDS));
            assertEquals(1, async.inFlight());
            gate.release(cb);
            assertArrayEquals(new byte[] {1}, first.get(30, TimeUnit.SECONDS));
            CompletableFuture<byte[]> secondCall = second.get(30, TimeUnit.SECONDS);
            gate.awaitHeld(1);
            // Close while the second call is in flight: it still completes; new calls fail.
            async.close();
            ExecutionException rejected =
                    assertThrows(ExecutionException.class, () -> async.getAsync("x").get());
            assertInstanceOf(RejectedExecutionException.class, rejected.getCause());
            gate.release(cb);
            assertArrayEquals(new byte[] {1}, secondCall.get(30, TimeUnit.SECONDS));
            assertEquals(0, async.inFlight());
            assertFalse(store.isClosed(), "close() of the async view keeps the store open");
            assertThrows(IllegalArgumentException.class, () -> AsyncObjectStore.of(store, cb, 0));
        } finally {
            cb.shutdownNow();
        }
    }

    @Test
    @Timeout(180)
    void credentialsRotateUnderAsyncLoadWithNoAuthFailures() throws Exception {
        StsProvider provider = new StsProvider(server, 2);
        Map<String, String> initial = provider.fetchStorageOptions();
        ExecutorService cb = callbacks();
        byte[] payload = new byte[1024];
        long calls = 0;
        try (ObjectStore store =
                        ObjectStore.open(
                                server.uri("rot/"), initial, provider, Duration.ofMillis(500));
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 64)) {
            async.putAsync("k", payload).get(30, TimeUnit.SECONDS);
            long end = System.currentTimeMillis() + 7_000;
            while (System.currentTimeMillis() < end) {
                List<CompletableFuture<byte[]>> batch = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    batch.add(i % 8 == 0
                            ? async.putAsync("k" + i, payload).thenApply(v -> payload)
                            : async.getAsync("k"));
                }
                for (CompletableFuture<byte[]> f : batch) {
                    assertEquals(1024, f.get(30, TimeUnit.SECONDS).length);
                }
                calls += batch.size();
            }
            assertTrue(store.refreshStats().generation() >= 2, "no rotation: " + store.refreshStats());
        } finally {
            cb.shutdownNow();
        }
        Map<String, KeyStats> endpoint = server.stats();
        long accepted = 0;
        for (String key : provider.vendedKeyIds()) {
            KeyStats k = endpoint.getOrDefault(key, KeyStats.NONE);
            assertEquals(0, k.rejected(), () -> "rejected requests for vended key " + key + ": " + k);
            assertEquals(0, k.expired(), () -> "requests signed with an expired key " + key + ": " + k);
            accepted += k.accepted();
        }
        assertTrue(accepted >= calls, "endpoint accepted " + accepted + " of " + calls + " calls");
    }
}
