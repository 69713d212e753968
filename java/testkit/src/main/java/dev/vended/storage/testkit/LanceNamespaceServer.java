package dev.vended.storage.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The real Lance Namespace REST server ({@code lance.namespace.RestAdapter} of PyPI {@code
 * pylance==14.0.2}), started by the repository's {@code
 * crates/core/tests/fixtures/lance_rest_server.py} on 127.0.0.1 (a free port it picks) over a
 * table root on a local S3 endpoint or on Azurite. It vends the credentials given here (passed in
 * its environment, never on its command line) with {@code expires_at_millis} = describe time +
 * the refresh interval. Its stderr goes to a temporary log file, named in start errors and
 * deleted on {@link #close()}; the process exits when its stdin closes ({@code
 * --exit-on-stdin-eof}).
 *
 * <p>The Python: environment variable {@value #PYTHON_ENV}, else system property {@value
 * #PYTHON_PROPERTY}, else the repository's {@code .venv/bin/python} (see {@link #python()}).
 */
public final class LanceNamespaceServer implements AutoCloseable {

    /** Environment variable naming the Python interpreter that has pylance. */
    public static final String PYTHON_ENV = "VENDED_STORAGE_PYTHON";

    /** System property naming the Python interpreter (when {@value #PYTHON_ENV} is unset). */
    public static final String PYTHON_PROPERTY = "vended.storage.python";

    /** System property naming the launcher script (else found in the repository). */
    public static final String SCRIPT_PROPERTY = "vended.storage.lanceServerScript";

    /** The launcher script, relative to the repository root. */
    public static final String SCRIPT = "crates/core/tests/fixtures/lance_rest_server.py";

    /** Longest wait for the server to print {@code LISTENING http://127.0.0.1:PORT}. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    /** Longest wait for the server to exit after its stdin is closed, then it is killed. */
    public static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private final Process process;
    private final String url;
    private final Path log;

    private LanceNamespaceServer(Process process, String url, Path log) {
        this.process = process;
        this.url = url;
        this.log = log;
    }

    /**
     * The Python to run the server with: {@value #PYTHON_ENV}, else {@value #PYTHON_PROPERTY},
     * else the repository's {@code .venv/bin/python} found at or above the working directory (at
     * most 3 parents up).
     *
     * @return the interpreter, or {@code null} when nothing is configured and there is no venv
     *     (callers skip their tests then)
     * @throws IllegalStateException if a configured interpreter does not exist
     */
    public static Path python() {
        String configured = System.getenv(PYTHON_ENV);
        if (configured == null || configured.isBlank()) {
            configured = System.getProperty(PYTHON_PROPERTY);
        }
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured);
            if (!Files.exists(p)) {
                throw new IllegalStateException(
                        PYTHON_ENV + " (or -D" + PYTHON_PROPERTY + ") = " + configured
                                + " does not exist");
            }
            return p;
        }
        return inRepository(".venv/bin/python");
    }

    /**
     * {@code relative} in the nearest directory at or above the working directory (the Maven
     * module; at most 3 parents up) that has it, or {@code null}.
     */
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
     * A builder for a server over {@code root}: {@code s3://bucket/prefix} (then call {@link
     * Builder#s3}) or {@code az://container/prefix} (then {@link Builder#azurite}).
     *
     * @param python the interpreter with pylance, e.g. {@link #python()}
     * @param root the table root the server's directory namespace lives under
     * @return a builder; nothing runs before {@link Builder#start()}
     */
    public static Builder builder(Path python, String root) {
        return new Builder(python, root);
    }

    /** Options of a {@link LanceNamespaceServer}; {@link #start()} launches it. */
    public static final class Builder {
        private final Path python;
        private final String root;
        private final List<String> where = new ArrayList<>();
        private final Map<String, String> env = new HashMap<>();
        private final List<String> tables = new ArrayList<>();
        private long refreshIntervalMillis = -1;

        private Builder(Path python, String root) {
            this.python = python;
            this.root = root;
        }

        /**
         * Tables live on the S3 endpoint {@code endpoint} ({@code http://127.0.0.1:PORT}, which
         * the server uses itself and does not vend); every describe vends {@code credentials}
         * (access key id, secret, and session token when not {@code null}).
         *
         * @param endpoint the S3 endpoint URL
         * @param credentials what every describe vends
         * @return this builder
         */
        public Builder s3(String endpoint, VendedCredentials credentials) {
            where.clear();
            where.addAll(List.of("--s3-endpoint", endpoint));
            env.put("VENDED_AWS_ACCESS_KEY_ID", credentials.accessKeyId());
            env.put("VENDED_AWS_SECRET_ACCESS_KEY", credentials.secretAccessKey());
            if (credentials.sessionToken() != null) {
                env.put("VENDED_AWS_SESSION_TOKEN", credentials.sessionToken());
            }
            return this;
        }

        /**
         * Tables live on Azurite's blob service at {@code endpoint} ({@code
         * http://127.0.0.1:PORT}, used by the server and not vended); every describe vends {@code
         * account} as {@code azure_storage_account_name} and {@code sasToken} as {@code
         * azure_storage_sas_token}.
         *
         * @param endpoint Azurite's blob service URL
         * @param account the storage account name to vend
         * @param sasToken the SAS token (query string without {@code ?}) to vend
         * @return this builder
         */
        public Builder azurite(String endpoint, String account, String sasToken) {
            where.clear();
            where.addAll(List.of("--azurite-endpoint", endpoint));
            env.put("VENDED_AZURE_STORAGE_ACCOUNT_NAME", account);
            env.put("VENDED_AZURE_STORAGE_SAS_TOKEN", sasToken);
            return this;
        }

        /**
         * Every describe vends {@code expires_at_millis} = describe time + {@code millis}
         * (milliseconds, required, &gt; 0).
         *
         * @param millis the vended lifetime in milliseconds
         * @return this builder
         */
        public Builder refreshIntervalMillis(long millis) {
            this.refreshIntervalMillis = millis;
            return this;
        }

        /**
         * Creates a Lance table (a few rows) with the dotted id {@code id}, e.g. {@code
         * db.orders}; may be called several times.
         *
         * @param id the dotted table id
         * @return this builder
         */
        public Builder table(String id) {
            tables.addAll(List.of("--table", id));
            return this;
        }

        /**
         * Declares (without data) a table with the dotted id {@code id}; may be called several
         * times.
         *
         * @param id the dotted table id
         * @return this builder
         */
        public Builder declare(String id) {
            tables.addAll(List.of("--declare", id));
            return this;
        }

        /**
         * Starts the server and waits (at most {@link #START_TIMEOUT}) until it listens.
         *
         * @throws IllegalStateException if neither {@link #s3} nor {@link #azurite} was called,
         *     the refresh interval is not positive, or the launcher script is not found (system
         *     property {@value #SCRIPT_PROPERTY}, else {@value #SCRIPT} above the working
         *     directory)
         * @throws IOException if Python cannot be run, the server exits or prints something else
         *     first (the message has its log), or it does not listen in time
         * @return the running server
         */
        public LanceNamespaceServer start() throws IOException {
            if (where.isEmpty()) {
                throw new IllegalStateException("call s3(...) or azurite(...) before start()");
            }
            if (refreshIntervalMillis <= 0) {
                throw new IllegalStateException(
                        "refreshIntervalMillis must be > 0, was " + refreshIntervalMillis);
            }
            String property = System.getProperty(SCRIPT_PROPERTY);
            Path script =
                    property != null && !property.isBlank()
                            ? Path.of(property)
                            : inRepository(SCRIPT);
            if (script == null || !Files.exists(script)) {
                throw new IllegalStateException(
                        "Lance server launcher not found: "
                                + (script != null ? script : SCRIPT + " above "
                                        + System.getProperty("user.dir"))
                                + " (set -D" + SCRIPT_PROPERTY + ")");
            }
            List<String> command = new ArrayList<>();
            command.add(python.toString());
            command.add(script.toString());
            command.addAll(where);
            command.addAll(
                    List.of(
                            "--root", root,
                            "--refresh-interval-ms", Long.toString(refreshIntervalMillis)));
            command.addAll(tables);
            command.add("--exit-on-stdin-eof");
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().putAll(env);
            Path log = Files.createTempFile("lance-rest-server", ".log");
            pb.redirectError(log.toFile());
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                Files.deleteIfExists(log);
                throw new IOException(
                        "cannot run " + python + " (set " + PYTHON_ENV + " to a Python with"
                                + " pylance==14.0.2)",
                        e);
            }
            return new LanceNamespaceServer(p, awaitListening(p, log), log);
        }
    }

    /** The URL from the first stdout line, or kills {@code p} and throws. */
    private static String awaitListening(Process p, Path log) throws IOException {
        BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
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
            line = first.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            p.destroyForcibly();
            throw new IOException(
                    "the Lance server did not start within " + START_TIMEOUT.toSeconds()
                            + " s; log: " + log);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the Lance server", e);
        } catch (ExecutionException e) {
            p.destroyForcibly();
            throw new IOException("cannot read the Lance server's output", e);
        }
        if (line == null || !line.startsWith("LISTENING ")) {
            p.destroyForcibly();
            throw new IOException(
                    "the Lance server failed to start (is pylance==14.0.2 installed for the"
                            + " Python of " + PYTHON_ENV + "?): " + line + "\nlog " + log + ":\n"
                            + Files.readString(log));
        }
        return line.substring("LISTENING ".length()).trim();
    }

    /**
     * The server's address.
     *
     * @return base URL of the namespace REST API, {@code http://127.0.0.1:PORT}
     */
    public String url() {
        return url;
    }

    /**
     * The server's log.
     *
     * @return the file the server's stderr goes to (deleted on {@link #close()})
     */
    public Path log() {
        return log;
    }

    /**
     * Closes the server's stdin so that it exits, kills it if it has not after {@link
     * #STOP_TIMEOUT}, and deletes the log.
     *
     * @throws IOException if the log cannot be deleted
     */
    @Override
    public void close() throws IOException {
        try {
            process.getOutputStream().close(); // --exit-on-stdin-eof
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(log);
    }

    @Override
    public String toString() {
        return "LanceNamespaceServer{" + url + "}";
    }
}
