package dev.vended.storage.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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

    private final Process process;
    private final OutputStream stdin;
    private final String endpoint;
    private final int port;
    private final String bucket;
    private final Path log;
    private final LocalS3Admin admin;

    private LocalS3Server(LocalS3Process launched, String bucket, Path log) {
        this.process = launched.process;
        this.stdin = process.getOutputStream();
        this.endpoint = launched.endpoint;
        this.port = launched.port;
        this.bucket = bucket;
        this.log = log;
        this.admin = new LocalS3Admin(endpoint);
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
        return LocalS3Binary.find();
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
        return new LocalS3Server(LocalS3Process.start(binary, bucket, log, inMemory), bucket, log);
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
        return admin.http;
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
        return admin.assumeRole(durationSeconds, scope, KeyAccess.READ_WRITE);
    }

    /**
     * {@link #assumeRole(int, String)} for a key that may do only what {@code access} allows (the
     * endpoint's non-standard {@code Access} and {@code List} parameters), e.g. {@link
     * KeyAccess#READ_ONLY} or {@code KeyAccess.READ_ONLY.withoutList()}.
     *
     * @param durationSeconds lifetime of the credentials, seconds (at least 1)
     * @param scope {@code bucket} or {@code bucket/prefix} the key may access, or {@code null} for
     *     everything
     * @param access what the key may do there
     * @return the credentials, with {@code expiresAtMillis} from the response's {@code Expiration}
     * @throws IOException if the call fails or the response cannot be parsed
     */
    public VendedCredentials assumeRole(int durationSeconds, String scope, KeyAccess access)
            throws IOException {
        return admin.assumeRole(durationSeconds, scope, Objects.requireNonNull(access, "access"));
    }

    /**
     * Parses an STS {@code AssumeRoleResponse}.
     *
     * @param xml the response body
     * @return the credentials
     * @throws IOException if the XML lacks the credentials
     */
    public static VendedCredentials parseAssumeRoleResponse(String xml) throws IOException {
        return AssumeRoleXml.parse(xml);
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
        return admin.issueCredentials(ttlMillis, scope, KeyAccess.READ_WRITE);
    }

    /**
     * Issues temporary credentials through the admin API that may do only what {@code access}
     * allows ({@code POST /_admin/credentials?ttl_ms=N&scope=..&access=read|read-write&list=..}).
     *
     * @param ttlMillis lifetime in milliseconds
     * @param scope {@code bucket/prefix} the key may access, or {@code null} for everything
     * @param access what the key may do there, e.g. {@link KeyAccess#READ_ONLY}
     * @return the credentials, with the endpoint's exact {@code expires_at_millis}
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public VendedCredentials issueCredentials(long ttlMillis, String scope, KeyAccess access)
            throws IOException {
        return admin.issueCredentials(ttlMillis, scope, Objects.requireNonNull(access, "access"));
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
    public Map<String, KeyStats> stats() throws IOException {
        return admin.stats();
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
    public List<RequestRecord> requests() throws IOException {
        return admin.requests();
    }

    /**
     * The multipart uploads this endpoint holds that were started and neither completed nor
     * aborted, in every bucket ({@code GET /_admin/uploads}). A test asserts with it that a failed
     * upload left no parts behind.
     *
     * @return the uploads ordered by bucket, key, then start time; empty when none
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public List<IncompleteUpload> incompleteUploads() throws IOException {
        return admin.incompleteUploads(null);
    }

    /**
     * The incomplete multipart uploads in one bucket; see {@link #incompleteUploads()}.
     *
     * @param bucket the bucket
     * @return the uploads ordered by key, then start time; empty when none (also for an unknown
     *     bucket)
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public List<IncompleteUpload> incompleteUploads(String bucket) throws IOException {
        return admin.incompleteUploads(Objects.requireNonNull(bucket, "bucket"));
    }

    /**
     * Arms one bit flip in the next PutObject or UploadPart body the endpoint receives for {@code
     * bucket}/{@code key}: the lowest bit of its middle byte is flipped before the endpoint
     * verifies the body's checksums, so a request carrying a checksum gets 400 BadDigest and
     * nothing is stored. One-shot, counted in {@link #flips()}.
     *
     * @param bucket the bucket
     * @param key the object key
     * @throws IOException if the endpoint refuses
     */
    public void flipNextRequest(String bucket, String key) throws IOException {
        admin.flip(bucket, key, "request");
    }

    /**
     * Arms one bit flip in the body the next GetObject of {@code bucket}/{@code key} sends (its
     * middle byte's lowest bit); status and headers, the stored checksum among them, are
     * unchanged, so only the client can notice. One-shot, counted in {@link #flips()}.
     *
     * @param bucket the bucket
     * @param key the object key
     * @throws IOException if the endpoint refuses
     */
    public void flipNextResponse(String bucket, String key) throws IOException {
        admin.flip(bucket, key, "response");
    }

    /**
     * How many bodies had a bit flipped so far, by side, and how many flips are still armed.
     *
     * @return the counts
     * @throws IOException if the endpoint refuses or answers something unexpected
     */
    public FlipCounts flips() throws IOException {
        return admin.flips();
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
        return admin.send(method, pathAndQuery, body, contentType);
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
        LocalS3Process.destroy(process);
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
}
