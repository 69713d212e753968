package dev.vended.storage.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a forked benchmark JVM needs to reach the servers the driver ({@link BenchMain}) started:
 * system properties {@code bench.endpoint} (the local S3 endpoint), {@code bench.bucket} and
 * {@code bench.ceiling} (the unsigned loopback server).
 */
final class BenchEnv {
    static final String ENDPOINT = "bench.endpoint";
    static final String BUCKET = "bench.bucket";
    static final String CEILING = "bench.ceiling";
    static final String REGION = "us-east-1";
    /** File the forks append sanity-check lines to; the driver prints them. */
    static final String CHECK_FILE = "bench.checkFile";

    private BenchEnv() {}

    static String require(String property) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException(
                    "system property " + property + " is not set: run the benchmarks through"
                            + " java/benchmarks/run.sh (BenchMain starts the servers)");
        }
        return v.trim();
    }

    static String endpoint() {
        return require(ENDPOINT);
    }

    static String bucket() {
        return require(BUCKET);
    }

    static String ceiling() {
        return require(CEILING);
    }

    /** Temporary credentials from the endpoint's admin API, as in the demo and tests. */
    record Creds(String accessKeyId, String secretAccessKey, String sessionToken, long expiresAtMillis) {}

    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\"\\s*:\\s*(\"([^\"]*)\"|(-?\\d+))");

    /** {@code POST /_admin/credentials?ttl_ms=N} (unsigned, local only). */
    static Creds issueCredentials(String endpoint, long ttlMillis) throws IOException {
        HttpClient http =
                HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(10))
                        .build();
        HttpRequest req =
                HttpRequest.newBuilder(URI.create(endpoint + "/_admin/credentials?ttl_ms=" + ttlMillis))
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build();
        HttpResponse<String> resp;
        try {
            resp = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (resp.statusCode() != 200) {
            throw new IOException("admin credentials: HTTP " + resp.statusCode() + " " + resp.body());
        }
        Map<String, String> f = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(resp.body());
        while (m.find()) {
            f.put(m.group(1), m.group(3) != null ? m.group(3) : m.group(4));
        }
        return new Creds(
                f.get("access_key_id"),
                f.get("secret_access_key"),
                f.get("session_token"),
                Long.parseLong(f.get("expires_at_millis")));
    }

    /** Options reaching the endpoint without credentials (3 entries). */
    static Map<String, String> endpointOptions(String endpoint) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("aws_endpoint", endpoint);
        o.put("aws_region", REGION);
        o.put("aws_allow_http", "true");
        return o;
    }

    /** The 4 credential entries. */
    static Map<String, String> credentialOptions(Creds c) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("aws_access_key_id", c.accessKeyId());
        o.put("aws_secret_access_key", c.secretAccessKey());
        o.put("aws_session_token", c.sessionToken());
        o.put("expires_at_millis", Long.toString(c.expiresAtMillis()));
        return o;
    }

    /** Appends one line to the check file (if any). */
    static synchronized void check(String line) {
        String f = System.getProperty(CHECK_FILE);
        if (f == null) {
            return;
        }
        try {
            java.nio.file.Files.writeString(java.nio.file.Path.of(f), line + System.lineSeparator(),
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("cannot write " + f + ": " + e);
        }
    }

    static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new java.util.SplittableRandom(seed).nextBytes(b);
        return b;
    }
}
