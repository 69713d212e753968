package dev.vended.storage.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The unsigned loopback server for the ceiling: {@code GET /.../get-N} answers N bytes from
 * memory (any N: a 64 MiB random array, repeated); {@code PUT /anything} reads and discards the body. It also serves the unsigned S3
 * clients (path-style {@code /bucket/key}), which is why it sends an ETag. No signing, no disk. Runs in the driver JVM,
 * so like the S3 endpoint it is another process than the measuring one. Listens on 127.0.0.1 only.
 */
final class CeilingServer implements AutoCloseable {
    private static final int MAX = 64 << 20;
    private static final int CHUNK = 1 << 20;
    // object_store requires both on a GET and an ETag on a PUT (S3 always sends them).
    private static final String ETAG = "\"ceiling\"";
    private static final String LAST_MODIFIED = "Thu, 01 Jan 2026 00:00:00 GMT";

    private final HttpServer server;
    private final ExecutorService pool;
    private final byte[] data = BenchEnv.randomBytes(MAX, 42);

    CeilingServer() throws IOException {
        // Without it the JDK server leaves Nagle on: a small body written after the headers waits
        // for the client's delayed ACK (40 ms per request).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        pool =
                Executors.newFixedThreadPool(
                        16,
                        r -> {
                            Thread t = new Thread(r, "ceiling-server");
                            t.setDaemon(true);
                            return t;
                        });
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String method = ex.getRequestMethod();
            if ("GET".equals(method)) {
                String path = ex.getRequestURI().getPath();
                long n;
                try {
                    n = Long.parseLong(path.substring(path.lastIndexOf('-') + 1));
                } catch (NumberFormatException e) {
                    ex.sendResponseHeaders(404, -1);
                    return;
                }
                if (n < 0) {
                    ex.sendResponseHeaders(416, -1);
                    return;
                }
                ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
                ex.getResponseHeaders().set("ETag", ETAG);
                ex.getResponseHeaders().set("Last-Modified", LAST_MODIFIED);
                ex.sendResponseHeaders(200, n == 0 ? -1 : n);
                try (OutputStream os = ex.getResponseBody()) {
                    // 1 MiB writes: one big write would make NIO allocate a temporary direct
                    // buffer of the whole size per thread.
                    // Objects above 64 MiB repeat the same 64 MiB (MAX is a multiple of CHUNK).
                    for (long off = 0; off < n; off += CHUNK) {
                        os.write(data, (int) (off % MAX), (int) Math.min(CHUNK, n - off));
                    }
                }
            } else if ("PUT".equals(method)) {
                byte[] buf = new byte[CHUNK];
                try (InputStream in = ex.getRequestBody()) {
                    while (in.read(buf) >= 0) {
                        // discard
                    }
                }
                ex.getResponseHeaders().set("ETag", ETAG);
                ex.sendResponseHeaders(200, -1);
            } else {
                ex.sendResponseHeaders(405, -1);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
