package dev.vended.storage.delta.unity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.testkit.EmulatorProcess;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real Unity Catalog server, crates.io {@code olai-uc-server} 0.0.11 ({@code uc-server serve
 * --no-ui}: in-memory SQLite, anonymous auth) on 127.0.0.1 and a free port, set up over its REST
 * API. Its stderr goes to a temporary log file, named in start errors and deleted on {@link
 * #close()}, which kills the process.
 *
 * <p>The binary: environment variable {@value #BINARY_ENV}, else {@code unity/bin/uc-server} in
 * the tools directory ({@code bin/install-unity.sh} builds it there).
 */
final class UcServer implements AutoCloseable {

    /** Environment variable naming the {@code uc-server} binary. */
    static final String BINARY_ENV = "VENDED_STORAGE_UC_SERVER";

    private static final String API = "/api/2.1/unity-catalog/";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final Path log;
    private final String uri;
    private final HttpClient http = HttpClient.newHttpClient();

    private UcServer(Process process, Path log, String uri) {
        this.process = process;
        this.log = log;
        this.uri = uri;
    }

    /**
     * The binary: {@value #BINARY_ENV}, else the tools directory's {@code unity/bin/uc-server}.
     *
     * @return the path (not checked to exist)
     */
    static Path binary() {
        String configured = System.getenv(BINARY_ENV);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        return EmulatorProcess.toolsDirectory().resolve("unity/bin/uc-server");
    }

    /**
     * Starts the server and waits (at most 60 s) until its catalogs API answers 200.
     *
     * @param binary the {@code uc-server} binary
     * @return the running server
     * @throws IOException if it exits or does not answer in time (naming its log)
     * @throws InterruptedException if interrupted while waiting
     */
    static UcServer start(Path binary) throws IOException, InterruptedException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path log = Files.createTempFile("uc-server", ".log");
        ProcessBuilder pb =
                new ProcessBuilder(
                                binary.toString(), "serve", "--host", "127.0.0.1", "--port",
                                Integer.toString(port), "--no-ui")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .redirectError(log.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().remove("UC_SERVER_CONFIG");
        UcServer server = new UcServer(pb.start(), log, "http://127.0.0.1:" + port);
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        HttpRequest probe =
                HttpRequest.newBuilder(URI.create(server.uri + API + "catalogs"))
                        .timeout(Duration.ofSeconds(2))
                        .build();
        while (true) {
            try {
                if (server.http.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode()
                        == 200) {
                    return server;
                }
            } catch (ConnectException e) {
                // not listening yet
            }
            if (!server.process.isAlive() || System.nanoTime() > deadline) {
                server.close(false);
                throw new IOException(
                        "uc-server did not answer within " + START_TIMEOUT.toSeconds()
                                + " s (alive: " + server.process.isAlive() + "); its log: " + log);
            }
            // Readiness polling of a starting process (bounded by the deadline above).
            server.process.waitFor(100, TimeUnit.MILLISECONDS);
        }
    }

    /** The server's URI, e.g. {@code http://127.0.0.1:41234}. */
    String uri() {
        return uri;
    }

    /**
     * {@code POST {API}/{path}} with {@code body} as JSON.
     *
     * @return the answer's JSON
     * @throws IOException with the server's answer unless it is a 2xx
     * @throws InterruptedException if interrupted
     */
    JsonNode post(String path, Map<String, ?> body) throws IOException, InterruptedException {
        HttpRequest r =
                HttpRequest.newBuilder(URI.create(uri + API + path))
                        .header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(20))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
                        .build();
        HttpResponse<String> a = http.send(r, HttpResponse.BodyHandlers.ofString());
        if (a.statusCode() / 100 != 2) {
            throw new IOException("POST " + path + ": " + a.statusCode() + " " + a.body());
        }
        return JSON.readTree(a.body().isEmpty() ? "null" : a.body());
    }

    @Override
    public void close() {
        close(true);
    }

    private void close(boolean deleteLog) {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            if (deleteLog) {
                Files.deleteIfExists(log);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the log stays in the temporary directory
        }
    }
}
