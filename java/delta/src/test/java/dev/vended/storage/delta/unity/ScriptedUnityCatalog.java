package dev.vended.storage.delta.unity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import dev.vended.storage.testkit.KeyAccess;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted Unity Catalog (the JDK's HTTP server on 127.0.0.1, a free port) answering as the
 * Unity Catalog REST API does for the calls the provider makes: {@code GET
 * /api/2.1/unity-catalog/tables/{full_name}} ({@code table_id}, {@code storage_location}) and
 * {@code POST /api/2.1/unity-catalog/temporary-table-credentials} ({@code aws_temp_credentials},
 * {@code expiration_time} in epoch milliseconds), with keys the local S3 endpoint issues, scoped
 * to the table's prefix and living {@code ttlMillis}: read-only keys for {@code READ}, read-write
 * for {@code READ_WRITE}. Requests without the bearer token get 401, unknown tables 404, both as
 * {@code {"error_code", "message"}}. Counts every call and records the key ids it vended.
 */
final class ScriptedUnityCatalog implements AutoCloseable {

    private static final String API = "/api/2.1/unity-catalog";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One vended key: the table id it was asked for, the operation, the key id. */
    record Vended(String tableId, String operation, String accessKeyId) {}

    private final HttpServer server;
    private final ExecutorService executor;
    private final LocalS3Server s3;
    private final String token;
    private final long ttlMillis;
    /** Full name to {@code [table_id, bucket/prefix/]}. */
    private final Map<String, String[]> tables = new ConcurrentHashMap<>();

    /** {@code getTable} calls answered. */
    final AtomicInteger tableCalls = new AtomicInteger();
    /** Credentials vended, in order. */
    final List<Vended> vended = new CopyOnWriteArrayList<>();
    /** Requests refused (401, 404, bad bodies). */
    final AtomicInteger refused = new AtomicInteger();

    /**
     * Starts the catalog.
     *
     * @param s3 the endpoint whose keys it vends
     * @param token the bearer token it requires
     * @param ttlMillis the lifetime of the keys it vends
     * @throws IOException if the server cannot bind
     */
    ScriptedUnityCatalog(LocalS3Server s3, String token, long ttlMillis) throws IOException {
        this.s3 = s3;
        this.token = token;
        this.ttlMillis = ttlMillis;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        server.createContext("/", this::handle);
        executor =
                Executors.newFixedThreadPool(
                        4,
                        r -> {
                            Thread t = new Thread(r, "scripted-unity-catalog");
                            t.setDaemon(true);
                            return t;
                        });
        server.setExecutor(executor);
        server.start();
    }

    /** Adds table {@code fullName} with id {@code id} at {@code s3://{bucket}/{prefix}/}. */
    void table(String fullName, String id, String bucket, String prefix) {
        tables.put(fullName, new String[] {id, bucket + "/" + prefix + "/"});
    }

    /** The server URI, e.g. {@code http://127.0.0.1:41234}. */
    String uri() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** How many credentials were vended for table {@code id} with {@code operation}. */
    long vendedFor(String id, String operation) {
        return vended.stream()
                .filter(v -> v.tableId().equals(id) && v.operation().equals(operation))
                .count();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body;
            try (InputStream in = ex.getRequestBody()) {
                body = in.readAllBytes();
            }
            String path = ex.getRequestURI().getRawPath();
            ObjectNode answer = JSON.createObjectNode();
            int status = answer(ex.getRequestMethod(), path, ex, body, answer);
            if (status != 200) {
                refused.incrementAndGet();
            }
            byte[] out = JSON.writeValueAsBytes(answer);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, out.length);
            ex.getResponseBody().write(out);
        }
    }

    private int answer(String method, String path, HttpExchange ex, byte[] body, ObjectNode answer)
            throws IOException {
        if (!("Bearer " + token).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
            return error(answer, 401, "UNAUTHENTICATED", "no valid token");
        }
        if (method.equals("GET") && path.startsWith(API + "/tables/")) {
            String name = path.substring((API + "/tables/").length());
            String[] t = tables.get(name);
            if (t == null) {
                return error(answer, 404, "NOT_FOUND", "Table not found: " + name);
            }
            tableCalls.incrementAndGet();
            answer.put("name", name.substring(name.lastIndexOf('.') + 1));
            answer.put("table_id", t[0]);
            answer.put("storage_location", "s3://" + t[1].substring(0, t[1].length() - 1));
            return 200;
        }
        if (method.equals("POST") && path.equals(API + "/temporary-table-credentials")) {
            JsonNode request = JSON.readTree(body);
            String id = request.path("table_id").asText("");
            String operation = request.path("operation").asText("");
            String[] t =
                    tables.values().stream().filter(v -> v[0].equals(id)).findFirst().orElse(null);
            if (t == null || !(operation.equals("READ") || operation.equals("READ_WRITE"))) {
                return error(answer, 404, "NOT_FOUND", "Table not found: " + id);
            }
            KeyAccess access = operation.equals("READ") ? KeyAccess.READ_ONLY : KeyAccess.READ_WRITE;
            VendedCredentials c = s3.issueCredentials(ttlMillis, t[1], access);
            vended.add(new Vended(id, operation, c.accessKeyId()));
            ObjectNode aws = answer.putObject("aws_temp_credentials");
            aws.put("access_key_id", c.accessKeyId());
            aws.put("secret_access_key", c.secretAccessKey());
            aws.put("session_token", c.sessionToken());
            answer.put("expiration_time", c.expiresAtMillis());
            return 200;
        }
        return error(answer, 404, "NOT_FOUND", "no such API: " + method + " " + path);
    }

    private static int error(ObjectNode answer, int status, String code, String message) {
        answer.put("error_code", code);
        answer.put("message", message);
        return status;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
