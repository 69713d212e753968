package dev.vended.storage.examples;

import dev.vended.storage.testkit.ExternalEndpoint;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * LocalStack ({@code localstack-core}, no Docker), S3 only, as a JUnit extension: started before
 * the class's tests on a free 127.0.0.1 port from the venv {@code bin/install-s3-servers.sh}
 * installs ({@code .tools/localstack-venv}; the directory from the system property {@code
 * vended.storage.tools}, the environment variable {@code VENDED_STORAGE_TOOLS} or {@code
 * ../../.tools}; or the interpreter named by {@code VENDED_STORAGE_LOCALSTACK_PYTHON}),
 * the same way the Rust conformance suite starts it; the bucket is created; stopped (with its child
 * processes) after the tests. LocalStack's free build checks neither signatures nor expiry, so the
 * credentials are LocalStack's usual {@code test}/{@code test}.
 *
 * <p>When LocalStack is not installed the class fails with "run bin/install-s3-servers.sh", or is
 * skipped when {@code VENDED_STORAGE_SKIP_S3_SERVERS=1}.
 */
final class LocalStackServer implements BeforeAllCallback, AfterAllCallback {

    /** Set to {@code 1} to skip (rather than fail) when LocalStack is not installed. */
    static final String SKIP_ENV = "VENDED_STORAGE_SKIP_S3_SERVERS";

    private static final Duration STARTUP = Duration.ofSeconds(90);

    private final String bucket;
    private Process process;
    private String endpoint;

    LocalStackServer(String bucket) {
        this.bucket = bucket;
    }

    /** The running endpoint with LocalStack's {@code test}/{@code test} keys. */
    ExternalEndpoint target() {
        if (endpoint == null) {
            throw new IllegalStateException("LocalStack is not running");
        }
        return new ExternalEndpoint(endpoint, "us-east-1", "test", "test", null);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Path python = python();
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path target = Path.of(System.getProperty("user.dir"), "target");
        Path state = Files.createDirectories(target.resolve("localstack-" + ProcessHandle.current().pid()));
        Path log = target.resolve("localstack-" + ProcessHandle.current().pid() + ".log");
        ProcessBuilder pb =
                new ProcessBuilder(python.toString(), "-m", "localstack.runtime.main")
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .redirectInput(ProcessBuilder.Redirect.PIPE);
        Map<String, String> env = pb.environment();
        env.put("GATEWAY_LISTEN", "127.0.0.1:" + port);
        env.put("SERVICES", "s3");
        env.put("LOCALSTACK_VOLUME_DIR", state.toString());
        env.put("FILESYSTEM_ROOT", state.toString());
        env.put("PERSISTENCE", "0");
        env.put("SKIP_SSL_CERT_DOWNLOAD", "1");
        env.put("DISABLE_EVENTS", "1");
        env.put("LOCALSTACK_TELEMETRY_DISABLED", "1");
        process = pb.start();
        String url = "http://127.0.0.1:" + port;
        HttpClient http =
                HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build();
        long deadline = System.nanoTime() + STARTUP.toNanos();
        boolean ready = false;
        while (!ready && System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException(
                        "LocalStack exited with " + process.exitValue() + "; log: " + log);
            }
            try {
                ready =
                        http.send(
                                                HttpRequest.newBuilder(
                                                                URI.create(
                                                                        url
                                                                                + "/_localstack/health"))
                                                        .timeout(Duration.ofSeconds(2))
                                                        .build(),
                                                HttpResponse.BodyHandlers.discarding())
                                        .statusCode()
                                == 200;
            } catch (IOException e) {
                ready = false;
            }
            if (!ready) {
                Thread.sleep(200); // readiness poll: LocalStack has no start signal
            }
        }
        if (!ready) {
            stop();
            throw new IOException("LocalStack not ready after " + STARTUP + "; log: " + log);
        }
        // LocalStack's free build accepts an unsigned CreateBucket.
        HttpResponse<String> created =
                http.send(
                        HttpRequest.newBuilder(URI.create(url + "/" + bucket))
                                .timeout(Duration.ofSeconds(30))
                                .PUT(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (created.statusCode() != 200) {
            stop();
            throw new IOException(
                    "LocalStack CreateBucket " + bucket + " answered " + created.statusCode());
        }
        endpoint = url;
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    private void stop() {
        Process p = process;
        process = null;
        endpoint = null;
        if (p == null) {
            return;
        }
        List<ProcessHandle> children = p.descendants().toList();
        p.destroy();
        children.forEach(ProcessHandle::destroy);
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        children.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }

    /** The venv's interpreter; fails (or skips, with SKIP_ENV=1) when it is not installed. */
    private static Path python() throws IOException {
        String explicit = System.getenv("VENDED_STORAGE_LOCALSTACK_PYTHON");
        String configured = System.getProperty("vended.storage.tools");
        if (configured == null || configured.isBlank()) {
            configured = System.getenv("VENDED_STORAGE_TOOLS");
        }
        if (configured == null || configured.isBlank()) {
            configured = "../../.tools"; // from the module directory
        }
        Path tools = Path.of(configured).toAbsolutePath().normalize();
        Path python =
                explicit != null && !explicit.isBlank()
                        ? Path.of(explicit)
                        : tools.resolve("localstack-venv/bin/python");
        if (Files.isExecutable(python)) {
            return python;
        }
        Path reasonFile = tools.resolve("localstack-unavailable");
        String reason =
                Files.isRegularFile(reasonFile)
                        ? " (the installer said: "
                                + Files.readString(reasonFile, StandardCharsets.UTF_8).trim()
                                + ")"
                        : "";
        String message =
                "LocalStack is not installed at "
                        + python
                        + reason
                        + ": run bin/install-s3-servers.sh, or set "
                        + SKIP_ENV
                        + "=1 to skip the LocalStack tests";
        if ("1".equals(System.getenv(SKIP_ENV))) {
            Assumptions.abort(message);
        }
        throw new IOException(message);
    }
}
