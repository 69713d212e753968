package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Cancel and close of {@link AsyncObjectStore} calls whose request is still at the server: an S3
 * endpoint (127.0.0.1) that holds every GET until the test releases it and counts the answers it
 * managed to send.
 */
@Timeout(120)
class AsyncCancelTest {

    private static final byte[] BODY = "held-body".getBytes();

    private HttpServer http;
    private final CountDownLatch release = new CountDownLatch(1);
    private final LinkedBlockingQueue<String> received = new LinkedBlockingQueue<>();
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger answerFailed = new AtomicInteger();
    private ExecutorService cb;

    @BeforeEach
    void start() throws IOException {
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "held-endpoint");
            t.setDaemon(true);
            return t;
        }));
        http.createContext("/", this::handle);
        http.start();
        cb = AsyncObjectStoreTest.callbacks();
    }

    @AfterEach
    void stop() {
        release.countDown();
        http.stop(0);
        cb.shutdownNow();
    }

    private void handle(HttpExchange ex) throws IOException {
        received.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath());
        try {
            if (!release.await(60, TimeUnit.SECONDS)) {
                ex.close();
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ex.close();
            return;
        }
        try {
            ex.getResponseHeaders().add("ETag", "\"e1\"");
            ex.getResponseHeaders().add("Last-Modified", "Tue, 01 Dec 2026 12:00:00 GMT");
            ex.sendResponseHeaders(200, BODY.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(BODY);
            }
            answered.incrementAndGet();
        } catch (IOException e) {
            answerFailed.incrementAndGet(); // the client went away
            throw e;
        }
    }

    private ObjectStore open() throws StorageException {
        Map<String, String> options =
                Map.of(
                        "aws_endpoint", "http://127.0.0.1:" + http.getAddress().getPort(),
                        "aws_region", "us-east-1",
                        "aws_allow_http", "true",
                        "aws_access_key_id", "held",
                        "aws_secret_access_key", "held-secret");
        return ObjectStore.open("s3://held/p/", options);
    }

    private String awaitRequest() throws InterruptedException {
        String r = received.poll(30, TimeUnit.SECONDS);
        assertTrue(r != null, "the endpoint received no request");
        return r;
    }

    private static void awaitInFlight(AsyncObjectStore async, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (async.inFlight() != n) {
            assertTrue(System.nanoTime() < deadline, "in flight: " + async.inFlight() + ", want " + n);
            Thread.sleep(5); // polling a count; there is no signal to wait on
        }
    }

    @Test
    void cancelStopsTheNativeRequestAndReturnsThePermit() throws Exception {
        try (ObjectStore store = open();
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 1)) {
            CompletableFuture<byte[]> slow = async.getAsync("slow");
            assertEquals("GET /held/p/slow", awaitRequest());
            assertEquals(1, async.inFlight());
            assertTrue(slow.cancel(true));
            assertThrows(CancellationException.class, slow::join);
            // The permit comes back while the server still holds the request: the native task
            // stopped waiting for it (with a blocking call it could only come back after the
            // answer).
            awaitInFlight(async, 0);
            assertEquals(0, answered.get());
            assertEquals(1, release.getCount(), "released early");
            // The bound (1) admits the next call at once.
            CompletableFuture<byte[]> next = async.getAsync("next");
            assertEquals("GET /held/p/next", awaitRequest());
            release.countDown();
            assertArrayEquals(BODY, next.get(30, TimeUnit.SECONDS));
            // The cancelled request's connection was dropped: its answer could not be delivered,
            // and the cancelled future stays cancelled.
            assertTrue(slow.isCancelled());
            assertEquals(0, async.inFlight());
        }
    }

    @Test
    void callsInFlightCompleteAfterTheAsyncViewAndTheStoreAreClosed() throws Exception {
        ObjectStore store = open();
        AsyncObjectStore async = AsyncObjectStore.of(store, cb, 4);
        CompletableFuture<byte[]> a = async.getAsync("a");
        CompletableFuture<byte[]> b = async.getAsync("b");
        awaitRequest();
        awaitRequest();
        async.close();
        store.close();
        ExecutionException closed = assertThrows(ExecutionException.class, () -> async.getAsync("c").get());
        assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, closed.getCause());
        assertFalse(a.isDone());
        release.countDown();
        assertArrayEquals(BODY, a.get(30, TimeUnit.SECONDS));
        assertArrayEquals(BODY, b.get(30, TimeUnit.SECONDS));
        assertEquals(0, async.inFlight());
        assertEquals(2, answered.get());
    }
}
