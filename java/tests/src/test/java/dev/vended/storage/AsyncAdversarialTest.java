package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * {@link AsyncObjectStore} and {@link AsyncNative} used as a hostile caller would: bad arguments
 * to every method, executors that throw errors or run a completion twice, {@code take} twice and
 * while running, cancel racing completion, the store closed under 64 calls, many views of one
 * store, an interrupted caller at the bound, and sinks that must be freed (no global reference
 * kept) after 10,000 tasks.
 */
@Timeout(180)
class AsyncAdversarialTest {

    private static LocalS3Server server;
    private static ExecutorService cb;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("async-adversarial");
        cb = AsyncObjectStoreTest.callbacks();
    }

    @AfterAll
    static void stopEndpoint() {
        cb.shutdownNow();
        if (server != null) {
            server.close();
        }
    }

    private static ObjectStore open(String prefix) throws StorageException {
        return ObjectStore.open(server.uri(prefix), server.rootOptions());
    }

    /** The exception a future failed with. */
    private static Throwable failure(CompletableFuture<?> f) throws Exception {
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static void awaitInFlight(AsyncObjectStore async, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (async.inFlight() != n) {
            assertTrue(
                    System.nanoTime() < deadline,
                    "in flight: " + async.inFlight() + ", want " + n);
            Thread.sleep(5); // polling a count; there is no signal to wait on
        }
    }

    @Test
    void badArgumentsFailTheFutureNeverTheCall() throws Exception {
        try (ObjectStore store = open("bad/");
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 4)) {
            store.put("o", new byte[] {1, 2, 3});
            List<Supplier<CompletableFuture<?>>> npe =
                    List.of(
                            () -> async.getAsync(null),
                            () -> async.getRangeAsync(null, 0, 1),
                            () -> async.getRangesAsync(null, List.of(new ByteRange(0, 1))),
                            () -> async.getRangesAsync("o", null),
                            () -> async.getRangesAsync("o", Arrays.asList((ByteRange) null)),
                            () -> async.putAsync(null, new byte[1]),
                            () -> async.putAsync("o", null),
                            () -> async.putIfAbsentAsync("o", null),
                            () -> async.putIfMatchAsync("o", new byte[1], null),
                            () -> async.headAsync(null),
                            () -> async.deleteAsync(null),
                            () -> async.copyAsync(null, "x"),
                            () -> async.copyAsync("o", null),
                            () -> async.renameIfNotExistsAsync(null, null));
            for (Supplier<CompletableFuture<?>> s : npe) {
                assertInstanceOf(NullPointerException.class, failure(s.get()));
            }
            for (long[] r : new long[][] {{-1, 2}, {5, 4}, {Long.MIN_VALUE, 0}}) {
                Throwable t = failure(async.getRangeAsync("o", r[0], r[1]));
                assertInstanceOf(IllegalArgumentException.class, t);
                assertTrue(t.getMessage().contains("invalid range"), t.getMessage());
            }
            assertArrayEquals(
                    new byte[0], async.getRangeAsync("o", 2, 2).get(30, TimeUnit.SECONDS));
            assertEquals(List.of(), async.getRangesAsync("o", List.of()).get(30, TimeUnit.SECONDS));
            // A mode outside 0..2 through the native entry point itself.
            long h = store.acquireHandle();
            try {
                byte[] one = new byte[1];
                Recorder sink = new Recorder();
                for (int mode : new int[] {-1, 3, Integer.MAX_VALUE}) {
                    IllegalArgumentException e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> AsyncNative.startPut(h, "o", one, mode, null, sink));
                    assertTrue(e.getMessage().contains("mode " + mode), e.getMessage());
                }
                assertThrows(
                        IllegalArgumentException.class,
                        () -> AsyncNative.startGet(h, "o", null),
                        "a null sink");
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                AsyncNative.startGetRanges(
                                        h, "o", new long[2], new long[1], -1L, 1L, null,
                                        new Recorder()));
            } finally {
                store.releaseHandle();
            }
            assertEquals(0, async.inFlight());
        }
    }

    @Test
    void aHugeRangeListIsOneCall() throws Exception {
        try (ObjectStore store = open("huge/");
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 4)) {
            byte[] data = new byte[4096];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) i;
            }
            store.put("o", data);
            List<ByteRange> ranges = new ArrayList<>();
            for (int i = 0; i < 100_000; i++) {
                int a = i % 4095;
                ranges.add(new ByteRange(a, a + 1));
            }
            List<byte[]> parts = async.getRangesAsync("o", ranges).get(60, TimeUnit.SECONDS);
            assertEquals(100_000, parts.size());
            for (int i = 0; i < parts.size(); i += 997) {
                assertArrayEquals(new byte[] {(byte) (i % 4095)}, parts.get(i));
            }
        }
    }

    /** Executors that throw an Error, run the completion inline and then throw, or run it twice. */
    @Test
    void hostileExecutorsNeitherHangAFutureNorReturnAPermitTwice() throws Exception {
        Executor throwsError =
                r -> {
                    throw new AssertionError("executor broken");
                };
        Executor inlineThenThrow =
                r -> {
                    r.run();
                    throw new IllegalStateException("ran it, then failed");
                };
        Executor twice =
                r -> {
                    cb.execute(r);
                    cb.execute(r);
                };
        try (ObjectStore store = open("exec/")) {
            store.put("o", new byte[] {7});
            for (Executor e : List.of(throwsError, inlineThenThrow, twice)) {
                try (AsyncObjectStore async = AsyncObjectStore.of(store, e, 8)) {
                    List<CompletableFuture<byte[]>> fs = new ArrayList<>();
                    for (int i = 0; i < 32; i++) {
                        fs.add(async.getAsync("o"));
                    }
                    for (CompletableFuture<byte[]> f : fs) {
                        assertArrayEquals(new byte[] {7}, f.get(30, TimeUnit.SECONDS));
                    }
                    awaitInFlight(async, 0);
                    // No permit came back twice: still exactly 8 admitted, the 9th waits.
                    Thread.sleep(200); // let any duplicate delivery run before counting
                    assertEquals(0, async.inFlight(), "permits returned twice");
                }
            }
        }
    }

    @Test
    void callbacksThatThrowHurtOnlyTheirOwnStage() throws Exception {
        try (ObjectStore store = open("cbthrow/");
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 8)) {
            store.put("o", new byte[] {1});
            List<CompletableFuture<?>> stages = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                CompletableFuture<byte[]> f = async.getAsync("o");
                stages.add(
                        f.thenApply(
                                b -> {
                                    throw new IllegalStateException("user stage");
                                }));
                f.whenComplete(
                        (b, t) -> {
                            throw new Error("user whenComplete");
                        });
                assertArrayEquals(new byte[] {1}, f.get(30, TimeUnit.SECONDS));
            }
            for (CompletableFuture<?> s : stages) {
                assertInstanceOf(IllegalStateException.class, failure(s));
            }
            awaitInFlight(async, 0);
            assertArrayEquals(new byte[] {1}, async.getAsync("o").get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void cancelRacingCompletionLeavesEachFutureOneWayAndNoPermitOut() throws Exception {
        try (ObjectStore store = open("race/");
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 16)) {
            store.put("o", new byte[] {9});
            int cancelled = 0;
            int done = 0;
            for (int i = 0; i < 2000; i++) {
                CompletableFuture<byte[]> f = async.getAsync("o");
                // Jitter (0 to ~1 ms, about one local GET) so cancel lands before, during and
                // after completion.
                LockSupport.parkNanos((i % 40) * 25_000L);
                f.cancel(true);
                try {
                    assertArrayEquals(new byte[] {9}, f.get(30, TimeUnit.SECONDS));
                    done++;
                } catch (CancellationException e) {
                    cancelled++;
                }
            }
            assertEquals(2000, cancelled + done);
            awaitInFlight(async, 0);
            System.out.println("cancel race: " + cancelled + " cancelled, " + done + " done");
        }
    }

    @Test
    void closingTheStoreUnder64CallsCompletesThemAll() throws Exception {
        ObjectStore store = open("close/");
        store.put("o", new byte[] {5});
        AsyncObjectStore async = AsyncObjectStore.of(store, cb, 64);
        List<CompletableFuture<byte[]>> fs = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            fs.add(async.getAsync("o"));
        }
        store.close();
        System.gc();
        for (CompletableFuture<byte[]> f : fs) {
            assertArrayEquals(new byte[] {5}, f.get(30, TimeUnit.SECONDS));
        }
        assertInstanceOf(IllegalStateException.class, failure(async.getAsync("o")));
        awaitInFlight(async, 0);
    }

    @Test
    void manyViewsOfOneStore() throws Exception {
        try (ObjectStore store = open("views/")) {
            store.put("o", new byte[] {3});
            List<AsyncObjectStore> views = new ArrayList<>();
            List<CompletableFuture<byte[]>> fs = new ArrayList<>();
            for (int v = 0; v < 32; v++) {
                AsyncObjectStore view = AsyncObjectStore.of(store, cb, 2);
                views.add(view);
                for (int i = 0; i < 8; i++) {
                    fs.add(view.getAsync("o"));
                }
            }
            for (CompletableFuture<byte[]> f : fs) {
                assertArrayEquals(new byte[] {3}, f.get(30, TimeUnit.SECONDS));
            }
            for (AsyncObjectStore view : views) {
                awaitInFlight(view, 0);
                view.close();
            }
        }
    }

    /** A TCP endpoint that accepts connections and never answers. */
    private static final class Silent implements AutoCloseable {
        final ServerSocket listener;
        final List<Socket> held = new ArrayList<>();
        final Thread acceptor;

        Silent() throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor =
                    new Thread(
                            () -> {
                                while (true) {
                                    try {
                                        Socket s = listener.accept();
                                        synchronized (held) {
                                            held.add(s);
                                        }
                                    } catch (IOException e) {
                                        return;
                                    }
                                }
                            },
                            "silent-endpoint");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        ObjectStore open() throws StorageException {
            return ObjectStore.open(
                    "s3://silent/p/",
                    Map.of(
                            "aws_endpoint", "http://127.0.0.1:" + listener.getLocalPort(),
                            "aws_region", "us-east-1",
                            "aws_allow_http", "true",
                            "aws_access_key_id", "k",
                            "aws_secret_access_key", "silent-secret"));
        }

        @Override
        public void close() throws IOException {
            listener.close();
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    void interruptedCallerAtTheBoundGetsAFailedFuture() throws Exception {
        try (Silent silent = new Silent();
                ObjectStore store = silent.open();
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 1)) {
            CompletableFuture<byte[]> held = async.getAsync("held");
            awaitInFlight(async, 1);
            CompletableFuture<CompletableFuture<byte[]>> second = new CompletableFuture<>();
            AtomicInteger flagAfter = new AtomicInteger(-1);
            Thread caller =
                    new Thread(
                            () -> {
                                second.complete(async.getAsync("blocked"));
                                flagAfter.set(Thread.currentThread().isInterrupted() ? 1 : 0);
                            });
            caller.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (caller.getState() != Thread.State.WAITING) {
                assertTrue(System.nanoTime() < deadline, "the caller never blocked at the bound");
                Thread.sleep(5);
            }
            caller.interrupt();
            caller.join(30_000);
            assertInstanceOf(
                    InterruptedException.class, failure(second.get(30, TimeUnit.SECONDS)));
            assertEquals(1, flagAfter.get(), "interrupt flag set again");
            assertEquals(1, async.inFlight());
            // A caller waiting at the bound when the view is closed is rejected, not started.
            CompletableFuture<CompletableFuture<byte[]>> third = new CompletableFuture<>();
            Thread waiting = new Thread(() -> third.complete(async.getAsync("after-close")));
            waiting.start();
            while (waiting.getState() != Thread.State.WAITING) {
                assertTrue(System.nanoTime() < deadline, "the caller never blocked at the bound");
                Thread.sleep(5);
            }
            async.close();
            assertTrue(held.cancel(true));
            assertInstanceOf(
                    RejectedExecutionException.class, failure(third.get(30, TimeUnit.SECONDS)));
            awaitInFlight(async, 0);
        }
    }

    /** Records the task ids it was told about. */
    static final class Recorder extends AsyncNative.Sink {
        final CountDownLatch ready = new CountDownLatch(1);
        volatile long task;

        @Override
        void ready(long t) {
            task = t;
            ready.countDown();
        }
    }

    @Test
    void takeWhileRunningAndTakeTwice() throws Exception {
        try (Silent silent = new Silent();
                ObjectStore store = silent.open()) {
            long h = store.acquireHandle();
            long id;
            Recorder r = new Recorder();
            try {
                id = AsyncNative.startGet(h, "held", r);
            } finally {
                store.releaseHandle();
            }
            assertTrue(id > 0);
            // take before ready: refused, and the task keeps running (it is not lost).
            IllegalArgumentException early =
                    assertThrows(IllegalArgumentException.class, () -> AsyncNative.take(id));
            assertTrue(early.getMessage().contains("still running"), early.getMessage());
            assertEquals(1, r.ready.getCount(), "a refused take ended the task");
            assertTrue(AsyncNative.cancel(id), "the task was still running");
            assertTrue(r.ready.await(30, TimeUnit.SECONDS));
            assertEquals(id, r.task);
            assertNull(AsyncNative.take(id), "a cancelled task gives null");
            assertThrows(IllegalStateException.class, () -> AsyncNative.take(id));
            assertEquals(false, AsyncNative.cancel(id));
            assertThrows(IllegalStateException.class, () -> AsyncNative.take(-5));
        }
    }

    /**
     * 10,000 tasks through {@link AsyncNative}: every sink is collectable once its task was taken,
     * so the native side deleted each global reference.
     */
    @Test
    void noSinkIsKeptAfter10000Tasks() throws Exception {
        try (ObjectStore store = open("leak/")) {
            store.put("o", new byte[] {1});
            int n = 10_000;
            List<WeakReference<Recorder>> refs = new ArrayList<>(n);
            long h = store.acquireHandle();
            try {
                for (int batch = 0; batch < n / 100; batch++) {
                    List<Recorder> sinks = new ArrayList<>();
                    for (int i = 0; i < 100; i++) {
                        Recorder r = new Recorder();
                        sinks.add(r);
                        refs.add(new WeakReference<>(r));
                        AsyncNative.startHead(h, "o", r);
                    }
                    for (Recorder r : sinks) {
                        assertTrue(r.ready.await(30, TimeUnit.SECONDS));
                        assertInstanceOf(String[].class, AsyncNative.take(r.task));
                    }
                }
            } finally {
                store.releaseHandle();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long alive;
            do {
                System.gc();
                Thread.sleep(20); // the collector has no completion signal
                alive = refs.stream().filter(w -> w.get() != null).count();
            } while (alive > 0 && System.nanoTime() < deadline);
            assertEquals(0, alive, "sinks still referenced (global references not deleted)");
        }
    }

    /**
     * A child JVM whose main returns with 64 calls held at a silent endpoint (default executor, no
     * close): it exits promptly (native threads are daemons, nothing waits for the calls).
     */
    @Test
    void jvmExitsWith64CallsInFlight() throws Exception {
        try (Silent silent = new Silent()) {
            List<java.nio.file.Path> cp = new ArrayList<>();
            cp.add(ChildJvm.codeSource(ObjectStore.class));
            cp.add(ChildJvm.codeSource(ExitWithCallsInFlight.class));
            cp.addAll(ChildJvm.testkitClassPath());
            ChildJvm.Result r =
                    ChildJvm.run(
                            cp,
                            List.of(),
                            ExitWithCallsInFlight.class.getName(),
                            List.of(Integer.toString(silent.listener.getLocalPort())),
                            Duration.ofSeconds(60));
            assertFalse(r.timedOut(), () -> "the JVM did not exit: " + r.describe());
            long returnedAt = r.markerMillis("MAIN-RETURNING");
            assertTrue(returnedAt > 0, () -> "main did not return: " + r.describe());
            assertEquals(0, r.exitCode(), r::describe);
            long exitMillis = r.exitedAtMillis() - returnedAt;
            assertTrue(
                    exitMillis < 10_000,
                    () -> "exit took " + exitMillis + " ms: " + r.describe());
            assertTrue(r.output().contains("IN-FLIGHT 64"), r::describe);
            assertTrue(r.jniWarnings().isEmpty(), () -> "JNI warnings: " + r.describe());
        }
    }

    /** The child of {@link #jvmExitsWith64CallsInFlight}: argument the silent endpoint's port. */
    public static final class ExitWithCallsInFlight {
        private ExitWithCallsInFlight() {}

        /**
         * Starts 64 GETs that never get an answer and returns.
         *
         * @param args the port
         * @throws Exception never expected
         */
        public static void main(String[] args) throws Exception {
            ObjectStore store =
                    ObjectStore.open(
                            "s3://silent/p/",
                            Map.of(
                                    "aws_endpoint", "http://127.0.0.1:" + args[0],
                                    "aws_region", "us-east-1",
                                    "aws_allow_http", "true",
                                    "aws_access_key_id", "k",
                                    "aws_secret_access_key", "silent-secret"));
            AsyncObjectStore async = AsyncObjectStore.of(store);
            for (int i = 0; i < 64; i++) {
                async.getAsync("held-" + i);
            }
            System.out.println("IN-FLIGHT " + async.inFlight());
            System.out.println("MAIN-RETURNING " + System.currentTimeMillis());
            System.out.flush();
        }
    }
}
