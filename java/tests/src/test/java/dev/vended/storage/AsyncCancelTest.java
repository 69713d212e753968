package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
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
 * endpoint (a raw socket on 127.0.0.1) that holds every GET until the test releases it, counts the
 * answers it sent and sees a client closing a held request's connection.
 */
@Timeout(120)
class AsyncCancelTest {

    private static final byte[] BODY = "held-body".getBytes();

    private ServerSocket listener;
    private final ExecutorService connections =
            Executors.newCachedThreadPool(
                    r -> {
                        Thread t = new Thread(r, "held-endpoint");
                        t.setDaemon(true);
                        return t;
                    });
    private final CountDownLatch release = new CountDownLatch(1);
    private final LinkedBlockingQueue<String> received = new LinkedBlockingQueue<>();
    private final AtomicInteger answered = new AtomicInteger();
    private final CountDownLatch clientClosed = new CountDownLatch(1);
    private ExecutorService cb;

    @BeforeEach
    void start() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        connections.execute(
                () -> {
                    while (!listener.isClosed()) {
                        try {
                            Socket s = listener.accept();
                            connections.execute(() -> serve(s));
                        } catch (IOException e) {
                            return; // closed
                        }
                    }
                });
        cb = AsyncObjectStoreTest.callbacks();
    }

    @AfterEach
    void stop() throws IOException {
        release.countDown();
        listener.close();
        connections.shutdownNow();
        cb.shutdownNow();
    }

    /**
     * One connection: for each request, records it, then holds it until {@link #release} (answer
     * {@link #BODY}) or until the client closes the connection (counted in {@link #clientClosed}).
     */
    private void serve(Socket socket) {
        try (socket) {
            socket.setSoTimeout(20);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            for (String line; (line = readHead(in)) != null; ) {
                String[] parts = line.split(" ");
                received.add(parts[0] + " " + parts[1].split("\\?")[0]);
                while (release.getCount() > 0) {
                    try {
                        if (in.read() == -1) {
                            clientClosed.countDown();
                            return;
                        }
                    } catch (SocketTimeoutException e) {
                        // still held
                    }
                }
                answered.incrementAndGet(); // before the client can see the answer
                out.write(
                        ("HTTP/1.1 200 OK\r\nContent-Length: "
                                        + BODY.length
                                        + "\r\nETag: \"e1\"\r\n"
                                        + "Last-Modified: Tue, 01 Dec 2026 12:00:00 GMT\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                out.write(BODY);
                out.flush();
            }
        } catch (IOException e) {
            // the connection ended
        }
    }

    /** The request line of the next request head (read to its blank line); null at EOF. */
    private String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b;
            try {
                b = in.read();
            } catch (SocketTimeoutException e) {
                if (listener.isClosed()) {
                    return null;
                }
                continue;
            }
            if (b == -1) {
                return null;
            }
            head.append((char) b);
        }
        return head.substring(0, head.indexOf("\r\n"));
    }

    private ObjectStore open() throws StorageException {
        Map<String, String> options =
                Map.of(
                        "aws_endpoint", "http://127.0.0.1:" + listener.getLocalPort(),
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
            // ... and dropped the request: the server sees its connection closed by the client.
            assertTrue(clientClosed.await(30, TimeUnit.SECONDS), "the connection stayed open");
            assertEquals(0, answered.get());
            assertEquals(1, release.getCount(), "released early");
            // The bound (1) admits the next call at once.
            CompletableFuture<byte[]> next = async.getAsync("next");
            assertEquals("GET /held/p/next", awaitRequest());
            release.countDown();
            assertArrayEquals(BODY, next.get(30, TimeUnit.SECONDS));
            // Whatever happens to the held answer of the cancelled request, its future stays
            // cancelled and no permit is taken twice.
            assertTrue(slow.isCancelled());
            assertEquals(0, async.inFlight());
        }
    }

    /**
     * Live Java threads other than the native runtime's ({@code vended-storage-N}) and this
     * endpoint's.
     */
    private static long otherJavaThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .map(Thread::getName)
                .filter(n -> !AsyncObjectStoreTest.isNativeThreadName(n))
                .filter(n -> !n.startsWith("held-endpoint"))
                .count();
    }

    @Test
    void sixtyFourRequestsAtTheServerTieUpNoJavaThread() throws Exception {
        try (ObjectStore store = open();
                AsyncObjectStore async = AsyncObjectStore.of(store, cb, 64)) {
            long before = otherJavaThreads();
            java.util.List<CompletableFuture<byte[]>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 64; i++) {
                calls.add(async.getAsync("h" + i));
            }
            for (int i = 0; i < 64; i++) {
                awaitRequest();
            }
            // All 64 are at the server at once, issued from this thread; no Java thread waits
            // for any of them (a thread per call would add 64).
            assertEquals(64, async.inFlight());
            long added = otherJavaThreads() - before;
            assertTrue(added <= 8, added + " Java threads were added for 64 calls");
            release.countDown();
            for (CompletableFuture<byte[]> f : calls) {
                assertArrayEquals(BODY, f.get(30, TimeUnit.SECONDS));
            }
            assertEquals(64, answered.get());
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
