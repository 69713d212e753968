package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A1 and A2 through the Java binding, against a stub S3 endpoint on 127.0.0.1: an endpoint that
 * echoes the request's secrets in its 403 answer (no exception's message, {@code toString}, cause
 * or stack trace text contains them; the message still names operation, location, status and
 * code), and one that announces a body's length and closes the connection early (a {@code
 * TRANSIENT}, retryable {@link StorageException} naming the location, the range and the byte
 * reached).
 */
@Timeout(60)
class A1A2StubEndpointTest {

    private static final String SECRET = "a1SECRETKEYwJalrXUtnFEMIbPxRfiCY";
    private static final String TOKEN = "a1TOKENIQoJb3JpZ2luX2VjEabc";

    /** A stub S3 endpoint that refuses every request with a 403 quoting the request's secrets. */
    private static final class Stub implements AutoCloseable {
        final HttpServer server;

        Stub() throws IOException {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", this::answer);
            server.start();
        }

        private void answer(HttpExchange x) throws IOException {
            x.getRequestBody().readAllBytes();
            String seen =
                    "token="
                            + x.getRequestHeaders().getFirst("x-amz-security-token")
                            + " auth="
                            + x.getRequestHeaders().getFirst("Authorization")
                            + " secret "
                            + SECRET;
            byte[] body =
                    ("<Error><Code>AccessDenied</Code><Message>denied: "
                                    + seen
                                    + "</Message></Error>")
                            .getBytes(StandardCharsets.UTF_8);
            x.getResponseHeaders().set("Content-Type", "application/xml");
            boolean head = x.getRequestMethod().equals("HEAD");
            x.sendResponseHeaders(403, head ? -1 : body.length);
            if (!head) {
                try (OutputStream out = x.getResponseBody()) {
                    out.write(body);
                }
            }
            x.close();
        }

        ObjectStore open() throws StorageException {
            return A1A2StubEndpointTest.open(server.getAddress().getPort());
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    /**
     * A stub S3 endpoint on a plain socket: every GET announces the length asked for (of a
     * 1000-byte object), sends 100 bytes of it and closes the connection.
     */
    private static final class ShortBodies implements AutoCloseable {
        final ServerSocket socket;
        final Thread thread;

        ShortBodies() throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            thread = new Thread(this::serve, "a2-short-bodies");
            thread.setDaemon(true);
            thread.start();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try (Socket s = socket.accept()) {
                    answer(s);
                } catch (IOException e) {
                    // closed: the loop ends; a broken connection: the next one
                }
            }
        }

        private static void answer(Socket s) throws IOException {
            BufferedReader in =
                    new BufferedReader(
                            new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
            long start = 0;
            long last = 999;
            boolean ranged = false;
            for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                String lower = line.toLowerCase(java.util.Locale.ROOT);
                if (lower.startsWith("range: bytes=")) {
                    String[] ab = line.substring("range: bytes=".length()).trim().split("-", 2);
                    start = Long.parseLong(ab[0]);
                    last = Math.min(999, Long.parseLong(ab[1]));
                    ranged = true;
                }
            }
            long len = last + 1 - start;
            String head =
                    (ranged ? "HTTP/1.1 206 Partial Content\r\n" : "HTTP/1.1 200 OK\r\n")
                            + (ranged ? "Content-Range: bytes " + start + "-" + last + "/1000\r\n" : "")
                            + "Content-Length: " + len + "\r\n"
                            + "ETag: \"c33\"\r\n"
                            + "Last-Modified: Mon, 07 Dec 2026 12:00:00 GMT\r\n"
                            + "Connection: close\r\n\r\n";
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[(int) Math.min(100, len)]);
            out.flush();
        }

        ObjectStore open() throws StorageException {
            return A1A2StubEndpointTest.open(socket.getLocalPort());
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A store of {@code s3://stub/p/} at the stub on {@code port}, with 2 retries. */
    private static ObjectStore open(int port) throws StorageException {
        return ObjectStore.open(
                "s3://stub/p/",
                Map.of(
                        "aws_endpoint", "http://127.0.0.1:" + port,
                        "aws_region", "us-east-1",
                        "aws_allow_http", "true",
                        "aws_access_key_id", "AKIDC32",
                        "aws_secret_access_key", SECRET,
                        "aws_session_token", TOKEN,
                        "max_retries", "2",
                        "retry_init_backoff", "1ms",
                        "retry_max_backoff", "2ms"));
    }

    /** Every text of {@code t}: toString, and the printed stack trace with its causes. */
    private static String everything(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return t + "\n" + w;
    }

    @Test
    void a1SecretsEchoedInA403AreInNoException() throws Exception {
        try (Stub stub = new Stub();
                ObjectStore store = stub.open()) {
            CredentialsException get =
                    assertThrows(CredentialsException.class, () -> store.get("dir/k"));
            CredentialsException head =
                    assertThrows(CredentialsException.class, () -> store.head("dir/k"));
            CredentialsException stream =
                    assertThrows(
                            CredentialsException.class,
                            () -> {
                                try (InputStream in = store.openInput("dir/k")) {
                                    in.read();
                                }
                            });
            for (StorageException e : new StorageException[] {get, head, stream}) {
                String text = everything(e);
                assertFalse(text.contains(SECRET), text);
                assertFalse(text.contains(TOKEN), text);
                assertTrue(
                        e.getMessage().matches("(GET|HEAD) s3://stub/p/dir/k: 403 AccessDenied: .*"),
                        e.getMessage());
                assertEquals(StorageException.Kind.CREDENTIALS, e.kind());
            }
            assertTrue(get.getMessage().contains("token=***"), get.getMessage());
        }
    }

    @Test
    void a2ABodyEndingEarlyNamesLocationRangeAndByteReached() throws Exception {
        try (ShortBodies stub = new ShortBodies();
                ObjectStore store = stub.open()) {
            StorageException get = assertThrows(StorageException.class, () -> store.get("dir/k"));
            assertTrue(
                    get.getMessage()
                            .startsWith(
                                    "GET s3://stub/p/dir/k: the body of bytes 0..1000 ended early at byte 300 (300 of 1000 bytes received"),
                    get.getMessage());
            assertEquals(StorageException.Kind.TRANSIENT, get.kind());
            assertTrue(get.isRetryable());
            StorageException range =
                    assertThrows(StorageException.class, () -> store.getRange("dir/k", 100, 900));
            assertTrue(
                    range.getMessage().contains("the body of bytes 100..900 ended early at byte 400"),
                    range.getMessage());
        }
    }
}
