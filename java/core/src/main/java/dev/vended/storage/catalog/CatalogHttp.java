package dev.vended.storage.catalog;

import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The HTTP side of the catalog providers: a shared {@link HttpClient} (no redirects, so headers
 * never travel to another host), headers treated as secrets, an overall deadline per call, and
 * failures turned into {@link CatalogException}s that never contain a header value.
 */
final class CatalogHttp {

    /** Extracts {@code [message, code]} from a catalog's parsed JSON error body. */
    interface ErrorBodyParser {
        String[] parse(Object body);
    }

    private static final int MAX_QUOTED_CHARS = 500;

    /** Per-JVM random key of the header fingerprints. */
    private static final byte[] FINGERPRINT_KEY = new byte[32];

    static {
        new SecureRandom().nextBytes(FINGERPRINT_KEY);
    }

    private final String catalog;
    private final Map<String, String> headers;
    private final List<String> secrets;
    private final Duration timeout;

    /**
     * HTTP clients shared by every provider in this JVM with the same connect timeout (headers
     * are per request and redirects are never followed, so sharing is safe): deserialized copies
     * of a provider (one per Spark task) do not each start a client and its selector thread.
     */
    private static final ConcurrentHashMap<Long, HttpClient> CLIENTS = new ConcurrentHashMap<>();

    CatalogHttp(String catalog, Map<String, String> headers, Duration timeout) {
        this.catalog = catalog;
        this.headers = new LinkedHashMap<>(headers);
        this.timeout = timeout;
        List<String> s = new ArrayList<>();
        for (String value : headers.values()) {
            String v = value.trim();
            if (v.length() >= 4) {
                s.add(v);
            }
            for (String word : v.split("\\s+")) {
                if (word.length() >= 8) {
                    s.add(word);
                }
            }
        }
        s.sort(Comparator.comparingInt(String::length).reversed());
        this.secrets = s;
    }

    /** The shared client for this timeout, built on first use. */
    private HttpClient client() {
        return CLIENTS.computeIfAbsent(
                timeout.toMillis(),
                ms ->
                        HttpClient.newBuilder()
                                .connectTimeout(Duration.ofMillis(ms))
                                .followRedirects(HttpClient.Redirect.NEVER)
                                .build());
    }

    /**
     * Checks that every header can be sent.
     *
     * @throws IllegalArgumentException naming the header (never its value)
     */
    static void validateHeaders(Map<String, String> headers) {
        HttpRequest.Builder probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1/"));
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (h.getKey() == null || h.getValue() == null) {
                throw new IllegalArgumentException("header names and values must not be null");
            }
            try {
                probe.header(h.getKey(), h.getValue());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "header '"
                                + h.getKey()
                                + "' cannot be sent (restricted name, or invalid name or value)");
            }
        }
    }

    /** Sends {@code request} with the headers and returns the parsed JSON of a 2xx answer. */
    Object sendJson(HttpRequest.Builder request, String operation, ErrorBodyParser parser)
            throws CatalogException, InterruptedException {
        request.timeout(timeout).header("Accept", "application/json");
        headers.forEach(request::header);
        HttpResponse<byte[]> response;
        CompletableFuture<HttpResponse<byte[]>> future =
                client().sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        try {
            response = future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw timeoutError(operation);
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof HttpTimeoutException) {
                throw timeoutError(operation);
            }
            String what = cause instanceof ConnectException ? "cannot connect" : "request failed";
            String detail = cause.getClass().getSimpleName();
            if (cause.getMessage() != null) {
                detail += ": " + cause.getMessage();
            }
            throw error(
                    CatalogException.Kind.TRANSPORT, operation, -1, null, what + ": " + detail);
        }
        int status = response.statusCode();
        byte[] body = response.body() == null ? new byte[0] : response.body();
        String text = new String(body, StandardCharsets.UTF_8);
        if (status < 200 || status > 299) {
            throw statusError(status, text, operation, parser);
        }
        try {
            return Json.parse(text);
        } catch (Json.ParseException e) {
            // A successful answer may hold credentials: never quote it.
            String what =
                    text.isBlank()
                            ? "the answer is empty, expected a JSON object"
                            : "the answer is not valid JSON ("
                                    + e.getMessage()
                                    + "; "
                                    + body.length
                                    + " bytes)";
            throw error(CatalogException.Kind.MALFORMED_RESPONSE, operation, status, null, what);
        }
    }

    private CatalogException timeoutError(String operation) {
        return error(
                CatalogException.Kind.TIMEOUT,
                operation,
                -1,
                null,
                "no answer within " + timeout.toMillis() + " ms (timeout)");
    }

    private CatalogException statusError(
            int status, String text, String operation, ErrorBodyParser parser) {
        CatalogException.Kind kind;
        if (status == 404) {
            kind = CatalogException.Kind.NOT_FOUND;
        } else if (status == 401) {
            kind = CatalogException.Kind.UNAUTHORIZED;
        } else if (status == 403) {
            kind = CatalogException.Kind.FORBIDDEN;
        } else if (status >= 500 && status <= 599) {
            kind = CatalogException.Kind.SERVER_ERROR;
        } else {
            kind = CatalogException.Kind.CLIENT_ERROR;
        }
        String message = null;
        String code = null;
        try {
            String[] parsed = parser.parse(Json.parse(text));
            message = parsed[0];
            code = parsed[1];
        } catch (Json.ParseException | RuntimeException e) {
            // not JSON: quote the text
        }
        if (message == null || message.isBlank()) {
            message = text.isBlank() ? "(empty error body)" : text.trim();
        }
        return error(kind, operation, status, code, message);
    }

    /** Builds an exception whose texts are scrubbed of header values and truncated. */
    CatalogException error(
            CatalogException.Kind kind, String operation, int status, String code, String message) {
        return new CatalogException(
                kind,
                catalog,
                operation,
                status,
                code == null ? null : truncate(scrub(code), 100),
                truncate(scrub(message), MAX_QUOTED_CHARS),
                null);
    }

    /** Replaces every header value (and each of its words of 8+ characters) by {@code ***}. */
    String scrub(String text) {
        String out = text;
        for (String s : secrets) {
            if (out.contains(s)) {
                out = out.replace(s, "***");
            }
        }
        return out;
    }

    private static String truncate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }

    // -------------------------------------------------------------------------------------
    // Helpers shared by the providers

    /**
     * {@code none} without headers, else a keyed fingerprint (HMAC-SHA256 with a per-JVM random
     * key, first 8 bytes in hex) of the headers, names case-insensitive, order-insensitive.
     */
    static String authId(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return "none";
        }
        TreeMap<String, List<String>> sorted = new TreeMap<>();
        headers.forEach(
                (k, v) ->
                        sorted.computeIfAbsent(k.toLowerCase(Locale.ROOT), x -> new ArrayList<>())
                                .add(v));
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(FINGERPRINT_KEY, "HmacSHA256"));
            for (Map.Entry<String, List<String>> e : sorted.entrySet()) {
                List<String> values = new ArrayList<>(e.getValue());
                values.sort(null);
                for (String v : values) {
                    mac.update(e.getKey().getBytes(StandardCharsets.UTF_8));
                    mac.update((byte) 0);
                    mac.update(v.getBytes(StandardCharsets.UTF_8));
                    mac.update((byte) 0);
                }
            }
            byte[] h = mac.doFinal();
            StringBuilder b = new StringBuilder();
            for (int k = 0; k < 8; k++) {
                b.append(String.format("%02x", h[k] & 0xff));
            }
            return b.toString();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /**
     * Parses an {@code http}/{@code https} base URL.
     *
     * @throws IllegalArgumentException naming {@code what} when it is not one
     */
    static URI baseUri(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        URI u;
        try {
            u = new URI(value.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(what + " is not a URI: " + e.getReason());
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || u.getHost() == null) {
            throw new IllegalArgumentException(what + " must be an http:// or https:// URL");
        }
        return u;
    }

    /** {@code u} without user info, query, fragment or trailing slash: safe to print. */
    static String displayUrl(URI u) {
        StringBuilder b = new StringBuilder();
        b.append(u.getScheme().toLowerCase(Locale.ROOT)).append("://").append(u.getHost());
        if (u.getPort() >= 0) {
            b.append(':').append(u.getPort());
        }
        String path = u.getRawPath() == null ? "" : u.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return b.append(path).toString();
    }

    /**
     * {@code base} (user info, query and fragment dropped) with percent-encoded path segments
     * appended.
     */
    static URI withSegments(URI base, List<String> segments) {
        StringBuilder b = new StringBuilder(displayUrl(base));
        for (String s : segments) {
            b.append('/').append(encodeSegment(s));
        }
        return URI.create(b.toString());
    }

    /**
     * Percent-encodes one path segment (UTF-8): keeps RFC 3986 unreserved characters and the
     * sub-delimiters allowed in a segment ({@code $} among them), encodes everything else.
     */
    static String encodeSegment(String segment) {
        StringBuilder b = new StringBuilder();
        for (byte x : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            boolean keep =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || "-._~!$&'()*+,;=:@".indexOf(c) >= 0;
            if (keep) {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }

    /**
     * Reads a JSON object of strings into storage options: numbers and booleans become their text,
     * {@code null} values are skipped. Messages name keys, never values.
     *
     * @return the map, or {@code null} with {@code problem[0]} set
     */
    static Map<String, String> stringMap(Object value, String what, String[] problem) {
        if (!(value instanceof Map)) {
            problem[0] =
                    "'" + what + "' is a JSON " + Json.typeOf(value) + ", expected an object of strings";
            return null;
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
            Object v = e.getValue();
            if (v == null) {
                continue;
            } else if (v instanceof String) {
                out.put((String) e.getKey(), (String) v);
            } else if (v instanceof BigDecimal) {
                out.put((String) e.getKey(), ((BigDecimal) v).toPlainString());
            } else if (v instanceof Boolean) {
                out.put((String) e.getKey(), v.toString());
            } else {
                problem[0] =
                        "'"
                                + what
                                + "."
                                + e.getKey()
                                + "' is a JSON "
                                + Json.typeOf(v)
                                + ", expected a string";
                return null;
            }
        }
        return out;
    }

    /** A string, number or boolean member of a JSON object as text, else {@code null}. */
    static String text(Object object, String key) {
        if (!(object instanceof Map)) {
            return null;
        }
        Object v = ((Map<?, ?>) object).get(key);
        if (v instanceof String) {
            return (String) v;
        } else if (v instanceof BigDecimal) {
            return ((BigDecimal) v).toPlainString();
        } else if (v instanceof Boolean) {
            return v.toString();
        }
        return null;
    }
}
