package dev.vended.storage.testkit;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The local endpoint's admin API by URL only, with JDK classes only, so that code loaded by an
 * isolated class loader or running in a child JVM (where no {@link LocalS3Server} exists) can get
 * credentials from an endpoint started elsewhere.
 */
public final class AdminClient {
    /**
     * Created on first use only: an HTTP client starts a selector thread, which (created from a
     * provider call) inherits that thread's context class loader and keeps it reachable.
     */
    private static final class Http {
        static final HttpClient CLIENT =
                HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .connectTimeout(Duration.ofSeconds(10))
                        .version(HttpClient.Version.HTTP_1_1)
                        .build();
    }

    private AdminClient() {}

    /**
     * The options that address the local endpoint, without credentials.
     *
     * @param endpoint {@code http://127.0.0.1:PORT}
     * @return a new mutable map of {@code aws_endpoint} (= {@code endpoint}), {@code aws_region}
     *     ({@code us-east-1}) and {@code aws_allow_http} ({@code true})
     */
    public static Map<String, String> endpointOptions(String endpoint) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("aws_endpoint", endpoint);
        m.put("aws_region", "us-east-1");
        m.put("aws_allow_http", "true");
        return m;
    }

    /**
     * Endpoint options plus the endpoint's root credentials (which the endpoint never expires) with
     * an {@code expires_at_millis} a minute from now, plus {@code extra} non-credential entries
     * {@code x_extra_NNNNN}.
     *
     * @param endpoint {@code http://127.0.0.1:PORT}
     * @param extra how many filler entries to add (to make large maps)
     * @return a new mutable map
     */
    public static Map<String, String> rootOptions(String endpoint, int extra) {
        Map<String, String> m = endpointOptions(endpoint);
        m.put("aws_access_key_id", LocalS3Server.ROOT_ACCESS_KEY_ID);
        m.put("aws_secret_access_key", LocalS3Server.ROOT_SECRET_ACCESS_KEY);
        m.put("expires_at_millis", Long.toString(System.currentTimeMillis() + 60_000));
        for (int i = 0; i < extra; i++) {
            m.put(String.format("x_extra_%05d", i), "value-" + i);
        }
        return m;
    }

    /**
     * Issues credentials at {@code endpoint} and returns endpoint options plus the credentials and
     * their exact {@code expires_at_millis}.
     *
     * @param endpoint {@code http://127.0.0.1:PORT}
     * @param ttlMillis lifetime of the credentials
     * @param scope {@code bucket/prefix} the key may access, or {@code null}
     * @return a new mutable map
     * @throws IOException if the endpoint cannot be reached, answers other than 2xx or not with a
     *     JSON object ({@link InterruptedIOException}, with the interrupt flag set again, if the
     *     thread was interrupted while waiting)
     */
    public static Map<String, String> issue(String endpoint, long ttlMillis, String scope)
            throws IOException {
        String q = "?ttl_ms=" + ttlMillis;
        if (scope != null) {
            q += "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8);
        }
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(endpoint + "/_admin/credentials" + q))
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build();
        HttpResponse<String> response;
        try {
            response = Http.CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("issuing credentials interrupted");
        }
        if (response.statusCode() / 100 != 2) {
            throw new IOException("admin credentials answered HTTP " + response.statusCode());
        }
        Map<String, Object> m = jsonObject(response.body());
        Map<String, String> options = endpointOptions(endpoint);
        options.put("aws_access_key_id", (String) m.get("access_key_id"));
        options.put("aws_secret_access_key", (String) m.get("secret_access_key"));
        Object token = m.get("session_token");
        if (token instanceof String) {
            options.put("aws_session_token", (String) token);
        }
        options.put(
                "expires_at_millis",
                Long.toString(((Number) m.get("expires_at_millis")).longValue()));
        return options;
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Parses an admin API answer that must be a JSON array.
     *
     * @param body the answer's body
     * @return the elements
     * @throws IOException if the body is not a JSON array
     */
    static java.util.List<Object> jsonArray(String body) throws IOException {
        java.util.List<Object> l =
                JSON.readValue(body, new TypeReference<java.util.List<Object>>() {});
        if (l == null) {
            throw new IOException("the admin API answered null, expected a JSON array");
        }
        return l;
    }

    /**
     * Parses an admin API answer that must be a JSON object (Jackson: numbers become {@link
     * Number}s, objects {@link Map}s, arrays {@link java.util.List}s).
     *
     * @param body the answer's body
     * @return the object's members
     * @throws IOException if the body is not a JSON object
     */
    static Map<String, Object> jsonObject(String body) throws IOException {
        Map<String, Object> m = JSON.readValue(body, new TypeReference<Map<String, Object>>() {});
        if (m == null) {
            throw new IOException("the admin API answered null, expected a JSON object");
        }
        return m;
    }
}
