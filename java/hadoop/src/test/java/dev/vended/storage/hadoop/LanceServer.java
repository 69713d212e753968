package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.VendedCredentials;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The real Lance Namespace REST server ({@code lance.namespace.RestAdapter} of PyPI {@code
 * pylance==14.0.2}), started by the repository's {@code
 * crates/core/tests/fixtures/lance_rest_server.py} with the Python of {@code
 * VENDED_STORAGE_PYTHON} (or the system property {@code vended.storage.python}, else the
 * repository's {@code .venv/bin/python}). The process exits when this JVM closes its stdin.
 */
final class LanceServer implements AutoCloseable {

    /** {@code http://127.0.0.1:PORT}. */
    final String url;

    private final Process process;
    private final Path log;

    private LanceServer(Process process, String url, Path log) {
        this.process = process;
        this.url = url;
        this.log = log;
    }

    /** The configured Python, or the repository's venv one, or {@code null} when neither exists. */
    static Path python() {
        String configured = System.getenv("VENDED_STORAGE_PYTHON");
        if (configured == null || configured.isBlank()) {
            configured = System.getProperty("vended.storage.python");
        }
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            assertTrue(Files.exists(p), "VENDED_STORAGE_PYTHON=" + configured + " does not exist");
            return p;
        }
        return inRepository(".venv/bin/python");
    }

    /** {@code relative} in the nearest directory at or above the working directory, or null. */
    static Path inRepository(String relative) {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (int up = 0; up < 4 && dir != null; up++, dir = dir.getParent()) {
            Path candidate = dir.resolve(relative);
            if (Files.exists(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * Starts the server over {@code root} ({@code s3://bucket/prefix}) of the endpoint, vending
     * {@code credentials} (access key id, secret, session token) with an expiry {@code
     * refreshIntervalMillis} after each describe.
     *
     * @param args {@code --table a.b} / {@code --declare a.b} arguments
     * @throws IOException if it does not announce itself within 120 s
     */
    static LanceServer start(
            Path python,
            String s3Endpoint,
            String root,
            long refreshIntervalMillis,
            VendedCredentials credentials,
            List<String> args)
            throws IOException {
        Path script = inRepository("crates/core/tests/fixtures/lance_rest_server.py");
        assertTrue(
                script != null,
                "lance_rest_server.py not found above " + System.getProperty("user.dir"));
        List<String> command = new ArrayList<>();
        command.add(python.toString());
        command.add(script.toString());
        command.addAll(
                List.of(
                        "--s3-endpoint", s3Endpoint,
                        "--root", root,
                        "--refresh-interval-ms", Long.toString(refreshIntervalMillis),
                        "--exit-on-stdin-eof"));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("VENDED_AWS_ACCESS_KEY_ID", credentials.accessKeyId());
        pb.environment().put("VENDED_AWS_SECRET_ACCESS_KEY", credentials.secretAccessKey());
        String token = credentials.sessionToken();
        if (token != null) {
            pb.environment().put("VENDED_AWS_SESSION_TOKEN", token);
        }
        Path log = Files.createTempFile("lance-rest-server", ".log");
        pb.redirectError(log.toFile());
        Process p = pb.start();
        BufferedReader out =
                new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> first =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                return out.readLine();
                            } catch (IOException e) {
                                return null;
                            }
                        });
        String line;
        try {
            line = first.get(120, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            p.destroyForcibly();
            throw new IOException("the Lance server did not start within 120 s; log: " + log);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the Lance server", e);
        } catch (java.util.concurrent.ExecutionException e) {
            p.destroyForcibly();
            throw new IOException("cannot read the Lance server's output", e);
        }
        if (line == null || !line.startsWith("LISTENING ")) {
            p.destroyForcibly();
            throw new IOException(
                    "the Lance server failed to start: " + line + "\n" + Files.readString(log));
        }
        return new LanceServer(p, line.substring("LISTENING ".length()).trim(), log);
    }

    @Override
    public void close() throws IOException {
        process.getOutputStream().close(); // --exit-on-stdin-eof
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(log);
    }
}
