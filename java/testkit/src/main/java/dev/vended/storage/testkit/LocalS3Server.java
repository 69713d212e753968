package dev.vended.storage.testkit;

import org.w3c.dom.Document;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

/**
 * A running {@code local-s3} process: the project's local S3 endpoint that verifies SigV4
 * signatures and session tokens and rejects expired and revoked credentials.
 *
 * <p>The process is started as {@code local-s3 --port 0 --bucket NAME --exit-on-stdin-eof}; it
 * announces itself with a first stdout line {@code LISTENING http://127.0.0.1:PORT} and exits when
 * its stdin closes, so it never outlives this JVM. Only 127.0.0.1 is contacted.
 *
 * <p>Besides S3, the endpoint has an admin API (issue and revoke credentials, per-key counters)
 * and an unsigned STS {@code AssumeRole}; this class wraps both. Tests usually call {@link
 * #start(String)}, which takes the binary from the system property {@value #BINARY_PROPERTY}
 * (or, when it is unset, the path recorded when this testkit was built) and writes the endpoint's
 * stderr under the directory named by {@value #LOG_DIR_PROPERTY} (or a temporary directory).
 */
public final class LocalS3Server implements AutoCloseable {

    /** System property naming the {@code local-s3} binary. */
    public static final String BINARY_PROPERTY = "vended.storage.localS3";

    /** System property naming the directory for endpoint logs of {@link #start(String)}. */
    public static final String LOG_DIR_PROPERTY = "vended.storage.testLogDir";

    /** Access key id of the endpoint's root credentials. */
    public static final String ROOT_ACCESS_KEY_ID = "vended-root";

    /** Secret of the endpoint's root credentials. */
    public static final String ROOT_SECRET_ACCESS_KEY = "vended-root-secret";

    /** Region to sign for. */
    public static final String REGION = "us-east-1";

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern LISTENING =
            Pattern.compile("^LISTENING (http://127\\.0\\.0\\.1:(\\d+))/?\\s*$");

    private final Process process;
    private final OutputStream stdin;
    private final String endpoint;
    private final int port;
    private final String bucket;
    private final Path log;
    private final HttpClient http;

    private LocalS3Server(
            Process process, String endpoint, int port, String bucket, Path log) {
        this.process = process;
        this.stdin = process.getOutputStream();
        this.endpoint = endpoint;
        this.port = port;
        this.bucket = bucket;
        this.log = log;
        this.http =
                HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .connectTimeout(Duration.ofSeconds(10))
                        .version(HttpClient.Version.HTTP_1_1)
                        .build();
    }

    /**
     * The {@code local-s3} binary, from the first of: the system property {@value
     * #BINARY_PROPERTY}; the binary bundled in this jar for the running platform (resource {@code
     * native/<platform>/local-s3}, platform named as os-maven-plugin does, e.g. {@code
     * linux-x86_64}), extracted once per JVM to a temporary executable file; the path the testkit
     * build recorded in {@code /dev/vended/storage/testkit/testkit.properties}, if that file
     * exists.
     *
     * @return the path of an existing file
     * @throws IllegalStateException if none applies (the message says what was tried and how to
     *     build the binary)
     */
    public static Path binaryFromProperty() {
        String value = System.getProperty(BINARY_PROPERTY);
        if (value != null && !value.isBlank()) {
            Path path = Path.of(value.trim());
            if (!Files.isRegularFile(path)) {
                throw new IllegalStateException(
                        "system property "
                                + BINARY_PROPERTY
                                + " names "
                                + value
                                + ", which is not a file; build it with `cargo build --release -p"
                                + " vended-storage-local-s3 --bin local-s3`");
            }
            return path;
        }
        String platform = platform();
        Path bundled;
        try {
            bundled = bundledBinary(platform);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot extract the bundled local-s3 binary for "
                            + platform
                            + " to a temporary file (java.io.tmpdir="
                            + System.getProperty("java.io.tmpdir")
                            + "; it must allow executables): "
                            + e.getMessage(),
                    e);
        }
        if (bundled != null) {
            return bundled;
        }
        String recorded = builtBinary();
        if (recorded != null && !recorded.isBlank() && Files.isRegularFile(Path.of(recorded))) {
            return Path.of(recorded);
        }
        throw new IllegalStateException(
                "no local-s3 binary: system property "
                        + BINARY_PROPERTY
                        + " is not set, this testkit jar bundles none for platform "
                        + (platform == null
                                ? "(unsupported: os.name=" + System.getProperty("os.name")
                                        + ", os.arch=" + System.getProperty("os.arch") + ")"
                                : platform)
                        + (recorded == null || recorded.isBlank()
                                ? ""
                                : " and the recorded build path " + recorded + " does not exist")
                        + "; build it with `cargo build --release -p vended-storage-local-s3"
                        + " --bin local-s3` and pass -D"
                        + BINARY_PROPERTY
                        + "=/path/to/target/release/local-s3");
    }

    /** The extracted bundled binary of this JVM, once extracted. */
    private static Path extracted;

    /**
     * Extracts {@code native/<platform>/local-s3} from the class path to a new temporary directory
     * (once per JVM; removed at exit) and makes it executable.
     *
     * @return the executable, or {@code null} if the class path holds none for {@code platform}
     */
    private static synchronized Path bundledBinary(String platform) throws IOException {
        if (extracted != null && Files.isRegularFile(extracted)) {
            return extracted;
        }
        if (platform == null) {
            return null;
        }
        String resource = "/native/" + platform + "/local-s3";
        try (InputStream in = LocalS3Server.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Path dir = Files.createTempDirectory("vended-storage-local-s3-");
            Path file = dir.resolve("local-s3");
            Files.copy(in, file);
            if (!file.toFile().setExecutable(true, true)) {
                throw new IOException("cannot make " + file + " executable");
            }
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            extracted = file;
            return file;
        }
    }

    /**
     * The running platform as os-maven-plugin names it ({@code linux-x86_64}, {@code
     * osx-aarch_64}, ...), or {@code null} if unsupported.
     */
    static String platform() {
        String os =
                System.getProperty("os.name", "")
                        .toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^a-z0-9]+", "");
        String arch =
                System.getProperty("os.arch", "")
                        .toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^a-z0-9]+", "");
        String osPart;
        if (os.startsWith("linux")) {
            osPart = "linux";
        } else if (os.startsWith("mac") || os.startsWith("osx") || os.startsWith("darwin")) {
            osPart = "osx";
        } else if (os.startsWith("windows")) {
            osPart = "windows";
        } else {
            return null;
        }
        switch (arch) {
            case "x8664":
            case "amd64":
            case "x64":
                return osPart + "-x86_64";
            case "aarch64":
            case "arm64":
                return osPart + "-aarch_64";
            default:
                return null;
        }
    }

    private static String builtBinary() {
        try (InputStream in = LocalS3Server.class.getResourceAsStream("testkit.properties")) {
            if (in == null) {
                return null;
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("local.s3.binary");
            return v == null || v.contains("${") ? null : v.trim();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Starts an endpoint that serves {@code bucket}, from the binary of {@link
     * #binaryFromProperty()}, logging to a new file under {@value #LOG_DIR_PROPERTY}.
     *
     * @param bucket the bucket to create at start
     * @return the running endpoint
     * @throws IOException if it does not start within 30 s
     */
    public static LocalS3Server start(String bucket) throws IOException {
        Path binary = binaryFromProperty();
        String dir = System.getProperty(LOG_DIR_PROPERTY);
        Path logDir =
                dir == null || dir.isBlank()
                        ? Files.createTempDirectory("local-s3-logs")
                        : Path.of(dir);
        Files.createDirectories(logDir);
        Path log =
                logDir.resolve(
                        "local-s3-"
                                + bucket
                                + "-"
                                + ProcessHandle.current().pid()
                                + "-"
                                + COUNTER.incrementAndGet()
                                + ".log");
        return start(binary, bucket, log);
    }

    /**
     * Starts the endpoint and waits (at most 30 s) until it listens.
     *
     * @param binary the {@code local-s3} executable
     * @param bucket the bucket the endpoint creates at start
     * @param log file that receives the endpoint's stderr (appended), or {@code null} to discard it
     * @return the running endpoint
     * @throws IOException if it cannot be started or does not announce itself in time
     */
    public static LocalS3Server start(Path binary, String bucket, Path log)
            throws IOException {
        return start(binary, bucket, log, false);
    }

    /**
     * Starts {@code binary} as {@link #start(Path, String, Path)} does, optionally in throughput
     * mode ({@code --in-memory}: objects on {@code /dev/shm}, no disk; authentication checked as
     * always), which the benchmarks use so that the endpoint is not what they measure.
     *
     * @param binary the {@code local-s3} executable
     * @param bucket the bucket the endpoint creates at start
     * @param log file that receives the endpoint's stderr (appended), or {@code null} to discard it
     * @param inMemory {@code true} for throughput mode
     * @return the running endpoint
     * @throws IOException if it cannot be started or does not announce itself in time
     */
    public static LocalS3Server start(Path binary, String bucket, Path log, boolean inMemory)
            throws IOException {
        if (!Files.isRegularFile(binary)) {
            throw new IOException("local-s3 binary not found: " + binary);
        }
        List<String> command = new ArrayList<>();
        command.add(binary.toAbsolutePath().toString());
        command.add("--port");
        command.add("0");
        command.add("--bucket");
        command.add(bucket);
        command.add("--exit-on-stdin-eof");
        if (inMemory) {
            command.add("--in-memory");
        }
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        pb.redirectOutput(ProcessBuilder.Redirect.PIPE);
        if (log != null) {
            Path parent = log.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            pb.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        } else {
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        }
        Process process = startProcess(pb);

        CompletableFuture<Matcher> listening = new CompletableFuture<>();
        Thread drain =
                new Thread(
                        () -> drainStdout(process, listening), "local-s3-stdout-" + process.pid());
        drain.setDaemon(true);
        drain.start();

        String where = log == null ? "" : " (stderr: " + log + ")";
        Matcher m;
        try {
            m = listening.get(STARTUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            destroy(process);
            throw new IOException(
                    "local-s3 did not print 'LISTENING http://127.0.0.1:PORT' within "
                            + STARTUP_TIMEOUT.toSeconds()
                            + " s"
                            + where,
                    e);
        } catch (ExecutionException e) {
            destroy(process);
            throw new IOException(
                    "local-s3 failed to start: " + e.getCause().getMessage() + where, e.getCause());
        } catch (InterruptedException e) {
            destroy(process);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while starting local-s3");
        }
        return new LocalS3Server(
                process, m.group(1), Integer.parseInt(m.group(2)), bucket, log);
    }

    /**
     * Starts the process, retrying (at most 5 times) while the freshly written executable is still
     * open for writing in a child another thread forked meanwhile ("Text file busy", ETXTBSY).
     */
    private static Process startProcess(ProcessBuilder pb) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return pb.start();
            } catch (IOException e) {
                String m = String.valueOf(e.getMessage());
                if (attempt >= 5 || !(m.contains("error=26") || m.contains("Text file busy"))) {
                    throw e;
                }
                try {
                    Thread.sleep(20L * attempt); // no signal exists for "the fd was closed"
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while starting local-s3");
                }
            }
        }
    }

    private static void drainStdout(Process process, CompletableFuture<Matcher> listening) {
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!listening.isDone()) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.matches()) {
                        listening.complete(m);
                    }
                }
            }
        } catch (IOException e) {
            listening.completeExceptionally(e);
        }
        if (!listening.isDone()) {
            String status;
            try {
                status =
                        process.waitFor(5, TimeUnit.SECONDS)
                                ? "exited with code " + process.exitValue()
                                : "closed its stdout";
            } catch (InterruptedException e) {
                status = "closed its stdout";
            }
            listening.completeExceptionally(
                    new IOException("process " + status + " before announcing its port"));
        }
    }

    private static void destroy(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(3, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(3, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The endpoint URL.
     *
     * @return e.g. {@code http://127.0.0.1:41234}
     */
    public String endpoint() {
        return endpoint;
    }

    /**
     * The port the endpoint listens on.
     *
     * @return the TCP port
     */
    public int port() {
        return port;
    }

    /**
     * The bucket created at start.
     *
     * @return the bucket name
     */
    public String bucket() {
        return bucket;
    }

    /**
     * The file receiving the endpoint's stderr.
     *
     * @return the log file, or {@code null} if discarded
     */
    public Path log() {
        return log;
    }

    /**
     * Whether the process is still running.
     *
     * @return {@code true} while it runs
     */
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * An HTTP client for the endpoint's admin and STS APIs (no proxy).
     *
     * @return the shared client
     */
    public HttpClient httpClient() {
        return http;
    }

    /**
     * Options that reach this endpoint without credentials: {@code aws_endpoint}, {@code
     * aws_region}, {@code aws_allow_http}.
     *
     * @return a new mutable map
     */
    public Map<String, String> endpointOptions() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("aws_endpoint", endpoint);
        options.put("aws_region", REGION);
        options.put("aws_allow_http", "true");
        return options;
    }

    /**
     * {@link #endpointOptions()} plus the root credentials (which never expire).
     *
     * @return a new mutable map
     */
    public Map<String, String> rootOptions() {
        Map<String, String> options = endpointOptions();
        options.put("aws_access_key_id", ROOT_ACCESS_KEY_ID);
        options.put("aws_secret_access_key", ROOT_SECRET_ACCESS_KEY);
        return options;
    }

    /**
     * Creates a bucket ({@code POST /_admin/buckets/NAME}).
     *
     * @param name the bucket name
     * @throws IOException if the endpoint refuses
     */
    public void createBucket(String name) throws IOException {
        send(
                "POST",
                "/_admin/buckets/" + URLEncoder.encode(name, StandardCharsets.UTF_8),
                null,
                null);
    }

    /**
     * Gets temporary credentials from the endpoint's STS {@code AssumeRole} (unsigned).
     *
     * @param durationSeconds lifetime of the credentials
     * @return the credentials, with {@code expiresAtMillis} from the response's {@code Expiration}
     * @throws IOException if the call fails or the response cannot be parsed
     */
    public VendedCredentials assumeRole(int durationSeconds) throws IOException {
        return assumeRole(durationSeconds, null);
    }

    /**
     * Gets temporary credentials from the endpoint's STS {@code AssumeRole} (unsigned), optionally
     * scoped (the endpoint's non-standard {@code Scope} parameter) to {@code bucket/prefix}.
     *
     * @param durationSeconds lifetime of the credentials, seconds (at least 1)
     * @param scope {@code bucket} or {@code bucket/prefix} the key may access, or {@code null} for
     *     everything
     * @return the credentials, with {@code expiresAtMillis} from the response's {@code Expiration}
     * @throws IOException if the call fails or the response cannot be parsed
     */
    public VendedCredentials assumeRole(int durationSeconds, String scope) throws IOException {
        String form =
                "Action=AssumeRole&Version=2011-06-15"
                        + "&RoleArn="
                        + URLEncoder.encode(
                                "arn:aws:iam::000000000000:role/test", StandardCharsets.UTF_8)
                        + "&RoleSessionName=vended-storage"
                        + "&DurationSeconds="
                        + durationSeconds
                        + (scope == null
                                ? ""
                                : "&Scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8));
        String xml = send("POST", "/", form, "application/x-www-form-urlencoded");
        return parseAssumeRoleResponse(xml);
    }

    /**
     * Parses an STS {@code AssumeRoleResponse}.
     *
     * @param xml the response body
     * @return the credentials
     * @throws IOException if the XML lacks the credentials
     */
    public static VendedCredentials parseAssumeRoleResponse(String xml) throws IOException {
        Document doc;
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            f.setNamespaceAware(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(
                    new org.xml.sax.helpers.DefaultHandler() {
                        @Override
                        public void fatalError(org.xml.sax.SAXParseException e)
                                throws SAXException {
                            throw e;
                        }
                    });
            doc = b.parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot parse AssumeRole response: " + e.getMessage(), e);
        }
        String akid = element(doc, "AccessKeyId");
        String secret = element(doc, "SecretAccessKey");
        String token = element(doc, "SessionToken");
        String expiration = element(doc, "Expiration");
        long expiresAt;
        try {
            expiresAt = OffsetDateTime.parse(expiration).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            try {
                expiresAt = Instant.parse(expiration).toEpochMilli();
            } catch (DateTimeParseException e2) {
                throw new IOException("AssumeRole Expiration is not ISO-8601: " + expiration, e2);
            }
        }
        return new VendedCredentials(akid, secret, token, expiresAt);
    }

    private static String element(Document doc, String name) throws IOException {
        NodeList nodes = doc.getElementsByTagName(name);
        if (nodes.getLength() == 0) {
            throw new IOException("AssumeRole response has no <" + name + ">");
        }
        String text = nodes.item(0).getTextContent();
        if (text == null || text.isBlank()) {
            throw new IOException("AssumeRole response has an empty <" + name + ">");
        }
        return text.trim();
    }

    /**
     * {@code s3://BUCKET/prefix}.
     *
     * @param prefix a prefix such as {@code "c01/"}, or empty
     * @return the URI
     */
    public String uri(String prefix) {
        return "s3://" + bucket() + "/" + prefix;
    }

    /**
     * Endpoint options plus {@code creds} (with {@code expires_at_millis}).
     *
     * @param creds the credentials
     * @return a new mutable map
     */
    public Map<String, String> options(VendedCredentials creds) {
        Map<String, String> m = endpointOptions();
        m.putAll(creds.toOptions());
        return m;
    }

    /**
     * Issues temporary credentials through the admin API.
     *
     * @param ttlMillis lifetime in milliseconds
     * @param scope {@code bucket/prefix} the key may access, or {@code null} for everything
     * @return the credentials, with the endpoint's exact {@code expires_at_millis}
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public VendedCredentials issueCredentials(long ttlMillis, String scope) throws IOException {
        String q = "?ttl_ms=" + ttlMillis;
        if (scope != null) {
            q += "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8);
        }
        String body = send("POST", "/_admin/credentials" + q, null, null);
        Map<String, Object> m = AdminClient.jsonObject(body);
        Object expires = m.get("expires_at_millis");
        if (!(expires instanceof Number)) {
            throw new IOException("admin credentials answer lacks numeric expires_at_millis");
        }
        return new VendedCredentials(
                str(m, "access_key_id"),
                str(m, "secret_access_key"),
                (String) m.get("session_token"),
                ((Number) expires).longValue());
    }

    /**
     * Revokes an access key: later requests signed with it get 403 InvalidAccessKeyId.
     *
     * @param accessKeyId the key to revoke
     * @throws IOException if the endpoint refuses
     */
    public void revoke(String accessKeyId) throws IOException {
        send(
                "POST",
                "/_admin/revoke?access_key_id="
                        + URLEncoder.encode(accessKeyId, StandardCharsets.UTF_8),
                null,
                null);
    }

    /**
     * What the endpoint recorded per access key.
     *
     * @return access key id to its counters
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    @SuppressWarnings("unchecked")
    public Map<String, KeyStats> stats() throws IOException {
        Map<String, Object> m =
                AdminClient.jsonObject(send("GET", "/_admin/stats", null, null));
        Map<String, KeyStats> out = new LinkedHashMap<>();
        m.forEach(
                (k, v) -> {
                    if (v instanceof Map) {
                        out.put(k, KeyStats.fromJson((Map<String, Object>) v));
                    }
                });
        return out;
    }

    /**
     * What the endpoint recorded for one access key.
     *
     * @param accessKeyId the key
     * @return its counters, {@link KeyStats#NONE} if never seen
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public KeyStats stats(String accessKeyId) throws IOException {
        return stats().getOrDefault(accessKeyId, KeyStats.NONE);
    }

    /**
     * The endpoint's request log ({@code GET /_admin/requests}): every S3 and STS request it
     * answered, oldest first (it keeps the last 100 000).
     *
     * @return the records
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    @SuppressWarnings("unchecked")
    public List<RequestRecord> requests() throws IOException {
        List<Object> list = AdminClient.jsonArray(send("GET", "/_admin/requests", null, null));
        List<RequestRecord> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof Map)) {
                throw new IOException("the request log holds a non-object entry");
            }
            out.add(RequestRecord.fromJson((Map<String, Object>) o));
        }
        return out;
    }

    /**
     * Sends an unsigned request to the endpoint and returns the body of a 2xx answer.
     *
     * @param method HTTP method
     * @param pathAndQuery e.g. {@code /_admin/stats}
     * @param body request body, or {@code null}
     * @param contentType content type of {@code body}, or {@code null}
     * @return the response body (empty for 204)
     * @throws IOException on a transport error or a non-2xx status (the message has the status and
     *     the start of the body)
     */
    public String send(String method, String pathAndQuery, String body, String contentType)
            throws IOException {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(endpoint + pathAndQuery))
                        .timeout(REQUEST_TIMEOUT)
                        .method(
                                method,
                                body == null
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        HttpResponse<String> response;
        try {
            response = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(method + " " + pathAndQuery + " interrupted");
        }
        int status = response.statusCode();
        if (status / 100 != 2) {
            String text = response.body() == null ? "" : response.body();
            if (text.length() > 500) {
                text = text.substring(0, 500) + "...";
            }
            throw new IOException(
                    method + " " + pathAndQuery + " answered HTTP " + status + ": " + text);
        }
        return response.body() == null ? "" : response.body();
    }

    /**
     * Stops the endpoint: closes its stdin (it exits on EOF), then kills it if it is still running
     * after 3 s. Idempotent.
     */
    @Override
    public void close() {
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already closed or process gone
        }
        try {
            if (process.waitFor(3, TimeUnit.SECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        destroy(process);
    }

    @Override
    public String toString() {
        return "LocalS3Server{endpoint="
                + endpoint
                + ", bucket="
                + bucket
                + ", pid="
                + process.pid()
                + "}";
    }

    private static String str(Map<String, Object> m, String key) throws IOException {
        Object v = m.get(key);
        if (!(v instanceof String)) {
            throw new IOException("admin credentials answer lacks " + key);
        }
        return (String) v;
    }
}
