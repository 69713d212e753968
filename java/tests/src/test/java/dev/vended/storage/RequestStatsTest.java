package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ObjectStore#requestStats()} and {@link AuditContext} through the native side, against a
 * stub S3 endpoint that answers 503 as often as told and records each request's User-Agent.
 */
@Timeout(60)
class RequestStatsTest {

    /** A stub S3 endpoint: every GET answers {@code abc}, after {@code busy} 503 answers. */
    private static final class Stub implements AutoCloseable {
        final HttpServer server;
        final AtomicInteger busy = new AtomicInteger();
        final List<String> agents = new CopyOnWriteArrayList<>();

        Stub() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", this::answer);
            server.start();
        }

        private void answer(HttpExchange x) throws IOException {
            agents.add(String.valueOf(x.getRequestHeaders().getFirst("User-Agent")));
            x.getRequestBody().readAllBytes();
            if (busy.getAndDecrement() > 0) {
                x.sendResponseHeaders(503, -1);
                x.close();
                return;
            }
            byte[] body = "abc".getBytes(StandardCharsets.US_ASCII);
            x.getResponseHeaders().set("Last-Modified", "Wed, 02 Dec 2026 20:00:00 GMT");
            x.getResponseHeaders().set("ETag", "\"e1\"");
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        }

        ObjectStore open(String userAgent) throws StorageException {
            return ObjectStore.open(
                    "s3://stub/p/",
                    Map.of(
                            "aws_endpoint", "http://127.0.0.1:" + server.getAddress().getPort(),
                            "aws_region", "us-east-1",
                            "aws_allow_http", "true",
                            "aws_access_key_id", "k",
                            "aws_secret_access_key", "stub-secret",
                            "user_agent", userAgent,
                            "retry_init_backoff", "1ms",
                            "retry_max_backoff", "2ms"));
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    @Test
    void throttledAnswersAreCountedAsRetriesOfOneRead() throws Exception {
        try (Stub stub = new Stub();
                ObjectStore store = stub.open("stats-test/1")) {
            assertArrayEquals("abc".getBytes(StandardCharsets.US_ASCII), store.get("obj"));
            stub.busy.set(2);
            assertArrayEquals("abc".getBytes(StandardCharsets.US_ASCII), store.get("obj"));
            RequestStats s = store.requestStats();
            // 1 + (2 answered 503, then the retry that succeeded); no provider
            assertEquals(new RequestStats(4, 4, 0, 0, 0, 0, 2, 2, 0, 0, 0), s);
            assertEquals(4, stub.agents.size());
        }
    }

    @Test
    void theCallingThreadsAuditContextReachesOnlyItsRequests() throws Exception {
        try (Stub stub = new Stub();
                ObjectStore store = stub.open("audit-test/1")) {
            Thread inTask =
                    new Thread(
                            () -> {
                                AuditContext.set("spark-task/3.1.0 spark-tid/42\r\nX: y");
                                try {
                                    store.get("obj");
                                } catch (StorageException e) {
                                    throw new IllegalStateException(e);
                                }
                            });
            inTask.start();
            inTask.join();
            store.get("obj"); // this thread: no context
            AuditContext.set("job/7");
            AuditContext.set(null);
            store.get("obj"); // set and cleared: none
            assertEquals(
                    List.of(
                            "audit-test/1 spark-task/3.1.0 spark-tid/42__X: y",
                            "audit-test/1",
                            "audit-test/1"),
                    stub.agents);
        }
    }
}
