package dev.vended.storage.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java twin of the proxy in crates/core/tests/it/emulators/mod.rs: a forwarding HTTP/1 proxy
 * on 127.0.0.1 that counts requests and the emulator's 401/403 answers. In GCS mode (a {@link
 * Tokens} given) it also accepts only bearer tokens it issued, answering 401 for missing,
 * unknown, expired or revoked ones as GCS does (fake-gcs-server checks none), and rewrites the
 * two requests stock fake-gcs-server does not route for object_store: a plain XML {@code PUT
 * /bucket/object} becomes its signed-URL upload ({@code ?X-Goog-Algorithm=none}, with the
 * object's JSON etag put back as the ETag header) and an XML {@code DELETE} the JSON API delete.
 */
public final class EmulatorProxy implements AutoCloseable {

    /** Bearer tokens the proxy accepts: issued here, each with an expiry; revocable. */
    public static final class Tokens {
        private final Map<String, long[]> tokens = new ConcurrentHashMap<>();
        private final AtomicInteger next = new AtomicInteger();

        /**
         * Issues a new token.
         *
         * @param expiresAtMillis when it stops being accepted, epoch milliseconds
         * @return the token, unique within this registry ({@code ya29.java-N-HEX})
         */
        public String issue(long expiresAtMillis) {
            String token =
                    "ya29.java-" + next.getAndIncrement() + "-"
                            + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
            tokens.put(token, new long[] {expiresAtMillis, 0});
            return token;
        }

        /**
         * Makes {@code token} rejected from now on (as a revoked GCS token is).
         *
         * @param token a token of {@link #issue(long)}; unknown tokens are ignored
         */
        public void revoke(String token) {
            long[] t = tokens.get(token);
            if (t != null) {
                t[1] = 1;
            }
        }

        /**
         * Whether the proxy accepts {@code token}.
         *
         * @param token the bearer token, or {@code null}
         * @return whether it was issued here, is not revoked and has not expired
         */
        public boolean accepts(String token) {
            long[] t = token == null ? null : tokens.get(token);
            return t != null && t[1] == 0 && System.currentTimeMillis() < t[0];
        }
    }

    private static final Set<String> NOT_FORWARDED =
            Set.of("host", "content-length", "connection", "expect", "upgrade", "date",
                    "transfer-encoding");
    private static final Pattern ETAG = Pattern.compile("\"etag\"\\s*:\\s*\"([^\"]*)\"");

    /** The proxy's base URL, {@code http://127.0.0.1:PORT}. */
    public final String url;
    /** Requests received. */
    public final AtomicInteger requests = new AtomicInteger();
    /** Requests the proxy answered 401 (GCS mode). */
    public final AtomicInteger rejectedByProxy = new AtomicInteger();
    /** Emulator answers 401 or 403. */
    public final AtomicInteger rejectedByUpstream = new AtomicInteger();
    /** Method and path (never the query: it may carry a SAS) of every request, in order. */
    public final List<String> log = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    private final String upstream;
    private final Tokens tokens;
    private final HttpServer server;
    private final ExecutorService pool;
    private final HttpClient client =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .build();

    /**
     * Starts the proxy on 127.0.0.1 (a free port) in front of {@code upstream}; GCS mode when
     * {@code tokens} is not null, plain counting proxy otherwise.
     *
     * @param upstream the emulator's base URL, {@code http://127.0.0.1:PORT} (trailing slashes
     *     ignored)
     * @param tokens the tokens to require as {@code Authorization: Bearer}, or {@code null} to
     *     check none
     * @throws IOException if it cannot bind
     */
    public EmulatorProxy(String upstream, Tokens tokens) throws IOException {
        this.upstream = upstream.replaceAll("/+$", "");
        this.tokens = tokens;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        this.pool =
                Executors.newFixedThreadPool(
                        16,
                        r -> {
                            Thread t = new Thread(r, "emulator-proxy");
                            t.setDaemon(true);
                            return t;
                        });
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
        this.url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /**
     * Every rejection, by the proxy or the emulator.
     *
     * @return {@link #rejectedByProxy} plus {@link #rejectedByUpstream}
     */
    public int rejections() {
        return rejectedByProxy.get() + rejectedByUpstream.get();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            requests.incrementAndGet();
            String method = ex.getRequestMethod();
            String path = ex.getRequestURI().getRawPath();
            String query = ex.getRequestURI().getRawQuery();
            log.add(method + " " + path);
            if (tokens != null) {
                String auth = ex.getRequestHeaders().getFirst("Authorization");
                String token =
                        auth != null && auth.startsWith("Bearer ") ? auth.substring(7) : null;
                if (!tokens.accepts(token)) {
                    rejectedByProxy.incrementAndGet();
                    byte[] body =
                            "{\"error\":{\"code\":401,\"message\":\"Invalid Credentials\"}}"
                                    .getBytes(StandardCharsets.UTF_8);
                    ex.getResponseHeaders().set("Content-Type", "application/json");
                    ex.sendResponseHeaders(401, body.length);
                    ex.getResponseBody().write(body);
                    return;
                }
            }
            String target = path + (query == null ? "" : "?" + query);
            boolean translatedPut = false;
            if (tokens != null && query == null) {
                if (method.equals("PUT")
                        && !ex.getRequestHeaders().containsKey("x-goog-copy-source")) {
                    target = path + "?X-Goog-Algorithm=none";
                    translatedPut = true;
                } else if (method.equals("DELETE")) {
                    String[] parts = path.replaceFirst("^/+", "").split("/", 2);
                    if (parts.length == 2) {
                        String object = URLDecoder.decode(parts[1].replace("+", "%2B"), StandardCharsets.UTF_8);
                        target =
                                "/storage/v1/b/" + parts[0] + "/o/"
                                        + URLEncoder.encode(object, StandardCharsets.UTF_8)
                                                .replace("+", "%20");
                    }
                }
            }
            byte[] requestBody;
            try (InputStream in = ex.getRequestBody()) {
                requestBody = in.readAllBytes();
            }
            HttpRequest.Builder forward =
                    HttpRequest.newBuilder(URI.create(upstream + target))
                            .method(
                                    method,
                                    requestBody.length == 0 && !method.equals("PUT") && !method.equals("POST")
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofByteArray(requestBody));
            for (Map.Entry<String, List<String>> h : ex.getRequestHeaders().entrySet()) {
                if (NOT_FORWARDED.contains(h.getKey().toLowerCase(java.util.Locale.ROOT))) {
                    continue;
                }
                for (String v : h.getValue()) {
                    try {
                        forward.header(h.getKey(), v);
                    } catch (IllegalArgumentException restricted) {
                        // a header java.net.http sets itself
                    }
                }
            }
            HttpResponse<byte[]> answer;
            try {
                answer = client.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.sendResponseHeaders(502, -1);
                return;
            } catch (IOException e) {
                ex.sendResponseHeaders(502, -1);
                return;
            }
            int status = answer.statusCode();
            if (status == 401 || status == 403) {
                rejectedByUpstream.incrementAndGet();
            }
            boolean head = method.equals("HEAD");
            for (Map.Entry<String, List<String>> h : answer.headers().map().entrySet()) {
                String name = h.getKey().toLowerCase(java.util.Locale.ROOT);
                if (name.startsWith(":")
                        || name.equals("transfer-encoding")
                        || name.equals("connection")
                        || name.equals("date")
                        || (name.equals("content-length") && !head)) {
                    continue;
                }
                for (String v : h.getValue()) {
                    ex.getResponseHeaders().add(h.getKey(), v);
                }
            }
            byte[] body = answer.body();
            if (translatedPut && status / 100 == 2 && answer.headers().firstValue("etag").isEmpty()) {
                Matcher m = ETAG.matcher(new String(body, StandardCharsets.UTF_8));
                if (m.find()) {
                    ex.getResponseHeaders().set("ETag", "\"" + m.group(1) + "\"");
                }
            }
            if (head || status == 204 || status == 304 || body.length == 0) {
                ex.sendResponseHeaders(status, -1);
            } else {
                ex.sendResponseHeaders(status, body.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    /** Stops the proxy. */
    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
