package dev.vended.storage.testing;

import dev.vended.storage.demo.LocalEndpointProcess;
import dev.vended.storage.demo.VendedCredentials;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The local S3 endpoint ({@code local-s3}, from the system property {@value
 * LocalEndpointProcess#BINARY_PROPERTY}) for one test class, plus its admin API.
 *
 * <p>The endpoint's stderr goes to {@code target/local-s3-logs/} (system property {@code
 * vended.storage.testLogDir}) or a temporary directory.
 */
public final class LocalS3Server implements AutoCloseable {

    private static final AtomicInteger COUNTER = new AtomicInteger();

    private final LocalEndpointProcess process;

    private LocalS3Server(LocalEndpointProcess process) {
        this.process = process;
    }

    /**
     * Starts an endpoint that serves {@code bucket}.
     *
     * @param bucket the bucket to create at start
     * @return the running endpoint
     * @throws IOException if it does not start within 30 s
     */
    public static LocalS3Server start(String bucket) throws IOException {
        Path binary = LocalEndpointProcess.binaryFromProperty();
        String dir = System.getProperty("vended.storage.testLogDir");
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
        return new LocalS3Server(LocalEndpointProcess.start(binary, bucket, log));
    }

    /** The endpoint URL, {@code http://127.0.0.1:PORT}. */
    public String endpoint() {
        return process.endpoint();
    }

    /** The bucket created at start. */
    public String bucket() {
        return process.bucket();
    }

    /** The endpoint's stderr log. */
    public Path log() {
        return process.log();
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

    /** {@code aws_endpoint}, {@code aws_region}, {@code aws_allow_http}. */
    public Map<String, String> endpointOptions() {
        return process.endpointOptions();
    }

    /** Endpoint options plus the root credentials (no expiry). */
    public Map<String, String> rootOptions() {
        return process.rootOptions();
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

    /** Creates a bucket. */
    public void createBucket(String name) throws IOException {
        process.createBucket(name);
    }

    /**
     * Issues temporary credentials through the admin API.
     *
     * @param ttlMillis lifetime in milliseconds
     * @param scope {@code bucket/prefix} the key may access, or {@code null} for everything
     * @return the credentials, with the endpoint's exact {@code expires_at_millis}
     */
    public VendedCredentials issueCredentials(long ttlMillis, String scope) throws IOException {
        String q = "?ttl_ms=" + ttlMillis;
        if (scope != null) {
            q += "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8);
        }
        String body = process.send("POST", "/_admin/credentials" + q, null, null);
        Map<String, Object> m = MiniJson.parseObject(body);
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

    /** Gets temporary credentials from STS {@code AssumeRole}. */
    public VendedCredentials assumeRole(int durationSeconds) throws IOException {
        return process.assumeRole(durationSeconds);
    }

    /** Revokes an access key: later requests signed with it get 403 InvalidAccessKeyId. */
    public void revoke(String accessKeyId) throws IOException {
        process.send(
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
     */
    @SuppressWarnings("unchecked")
    public Map<String, KeyStats> stats() throws IOException {
        Map<String, Object> m =
                MiniJson.parseObject(process.send("GET", "/_admin/stats", null, null));
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
     */
    public KeyStats stats(String accessKeyId) throws IOException {
        return stats().getOrDefault(accessKeyId, KeyStats.NONE);
    }

    @Override
    public void close() {
        process.close();
    }

    @Override
    public String toString() {
        return "LocalS3Server{" + process + "}";
    }

    private static String str(Map<String, Object> m, String key) throws IOException {
        Object v = m.get(key);
        if (!(v instanceof String)) {
            throw new IOException("admin credentials answer lacks " + key);
        }
        return (String) v;
    }
}
