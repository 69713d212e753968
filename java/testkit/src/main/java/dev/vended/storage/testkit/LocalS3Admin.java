package dev.vended.storage.testkit;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The unsigned HTTP calls of {@link LocalS3Server}: its admin API ({@code /_admin/...}) and STS
 * {@code AssumeRole}, over one client without proxy; answers are parsed here.
 */
final class LocalS3Admin {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    /** The shared client (no proxy, HTTP/1.1). */
    final HttpClient http;

    private final String endpoint;

    LocalS3Admin(String endpoint) {
        this.endpoint = endpoint;
        this.http =
                HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .connectTimeout(Duration.ofSeconds(10))
                        .version(HttpClient.Version.HTTP_1_1)
                        .build();
    }

    /** See {@link LocalS3Server#assumeRole(int, String, KeyAccess)}. */
    VendedCredentials assumeRole(int durationSeconds, String scope, KeyAccess access)
            throws IOException {
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
                                : "&Scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8))
                        + "&Access="
                        + access.accessName()
                        + "&List="
                        + access.list();
        String xml = send("POST", "/", form, "application/x-www-form-urlencoded");
        return AssumeRoleXml.parse(xml);
    }

    /** See {@link LocalS3Server#issueCredentials(long, String, KeyAccess)}. */
    VendedCredentials issueCredentials(long ttlMillis, String scope, KeyAccess access)
            throws IOException {
        String q =
                "?ttl_ms=" + ttlMillis + "&access=" + access.accessName() + "&list=" + access.list();
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

    /** See {@link LocalS3Server#stats()}. */
    @SuppressWarnings("unchecked")
    Map<String, KeyStats> stats() throws IOException {
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

    /** See {@link LocalS3Server#requests()}. */
    @SuppressWarnings("unchecked")
    List<RequestRecord> requests() throws IOException {
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

    /** See {@link LocalS3Server#incompleteUploads(String)}. */
    @SuppressWarnings("unchecked")
    List<IncompleteUpload> incompleteUploads(String bucket) throws IOException {
        String q =
                bucket == null ? "" : "?bucket=" + URLEncoder.encode(bucket, StandardCharsets.UTF_8);
        List<Object> list = AdminClient.jsonArray(send("GET", "/_admin/uploads" + q, null, null));
        List<IncompleteUpload> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof Map)) {
                throw new IOException("the upload list holds a non-object entry");
            }
            out.add(IncompleteUpload.fromJson((Map<String, Object>) o));
        }
        return out;
    }

    /** Arms one bit flip; {@code side} is {@code request} or {@code response}. */
    void flip(String bucket, String key, String side) throws IOException {
        String target = URLEncoder.encode(bucket + "/" + key, StandardCharsets.UTF_8);
        send("POST", "/_admin/flip?key=" + target + "&where=" + side, null, null);
    }

    /** See {@link LocalS3Server#flips()}. */
    FlipCounts flips() throws IOException {
        return FlipCounts.fromJson(AdminClient.jsonObject(send("GET", "/_admin/flips", null, null)));
    }

    /** See {@link LocalS3Server#send(String, String, String, String)}. */
    String send(String method, String pathAndQuery, String body, String contentType)
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

    private static String str(Map<String, Object> m, String key) throws IOException {
        Object v = m.get(key);
        if (!(v instanceof String)) {
            throw new IOException("admin credentials answer lacks " + key);
        }
        return (String) v;
    }
}