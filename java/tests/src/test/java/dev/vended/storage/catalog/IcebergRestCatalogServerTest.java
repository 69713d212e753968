package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.iceberg.Schema;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Iceberg REST spec against Iceberg's own REST catalog test server ({@code
 * org.apache.iceberg.rest.RESTCatalogServer} of {@code iceberg-open-api:1.10.0:test-fixtures}, a
 * JdbcCatalog on in-memory SQLite with in-memory metadata files), driven by Iceberg's own {@code
 * RESTCatalog} client. That server vends no credentials, so a small vending layer in front of it
 * (under the path {@code /catalog}) adds, to every {@code loadTable} and (stage-)create answer,
 * {@code storage-credentials} minted by the local S3 endpoint and a <em>relative</em> {@code
 * client.refresh-credentials-endpoint}, and serves that endpoint ({@code loadCredentials}) by
 * asking the server whether the table exists: a staged table is {@code 404} there, as in
 * apache/iceberg#13554.
 */
class IcebergRestCatalogServerTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern CREDENTIALS =
            Pattern.compile("/v1/namespaces/([^/]+)/tables/([^/]+)/credentials");
    private static final Pattern TABLE = Pattern.compile("/v1/namespaces/([^/]+)/tables(/([^/]+))?");

    /** The vending layer: forwards to Iceberg's server, adds credentials, serves refreshes. */
    private static final class VendingLayer implements AutoCloseable {
        final HttpServer server;
        final String backend;
        final LocalS3Server s3;
        final HttpClient http = HttpClient.newHttpClient();
        final List<String> credentialRequests = java.util.Collections.synchronizedList(new ArrayList<>());
        final Map<String, JsonNode> vended = new ConcurrentHashMap<>();

        VendingLayer(String backend, LocalS3Server s3) throws IOException {
            this.backend = backend;
            this.s3 = s3;
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/catalog/", this::handle);
            server.start();
        }

        String uri() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/catalog";
        }

        private ObjectNode credential(String location) throws IOException {
            String scope = location.substring("s3://".length()) + "/";
            VendedCredentials c = s3.issueCredentials(3_600_000L, scope);
            ObjectNode config = JSON.createObjectNode();
            config.put("s3.access-key-id", c.accessKeyId());
            config.put("s3.secret-access-key", c.secretAccessKey());
            config.put("s3.session-token", c.sessionToken());
            config.put("s3.session-token-expires-at-ms", Long.toString(c.expiresAtMillis()));
            ObjectNode entry = JSON.createObjectNode();
            entry.put("prefix", location);
            entry.set("config", config);
            return entry;
        }

        private void handle(HttpExchange ex) throws IOException {
            String path = ex.getRequestURI().getRawPath().substring("/catalog".length());
            String query = ex.getRequestURI().getRawQuery();
            byte[] body = ex.getRequestBody().readAllBytes();
            int status;
            String answer;
            try {
                Matcher cred = CREDENTIALS.matcher(path);
                if (cred.matches()) {
                    credentialRequests.add(path + (query == null ? "" : "?" + query));
                    HttpResponse<String> table = forward("GET", path.replace("/credentials", ""), null);
                    status = table.statusCode();
                    answer = table.body();
                    if (status == 200) {
                        String location = JSON.readTree(answer).path("metadata").path("location").asText();
                        ObjectNode r = JSON.createObjectNode();
                        r.putArray("storage-credentials").add(credential(location));
                        answer = r.toString();
                    }
                } else {
                    HttpResponse<String> r =
                            forward(ex.getRequestMethod(), path + (query == null ? "" : "?" + query), body);
                    status = r.statusCode();
                    answer = r.body();
                    Matcher table = TABLE.matcher(path);
                    boolean matches = table.matches();
                    boolean load =
                            matches && "GET".equals(ex.getRequestMethod()) && table.group(2) != null;
                    boolean create =
                            matches && "POST".equals(ex.getRequestMethod()) && table.group(2) == null;
                    if (status == 200 && (load || create)) {
                        answer = addCredentials(table.group(1), answer);
                    }
                }
            } catch (RuntimeException | InterruptedException e) {
                status = 500;
                answer = "{\"error\":{\"message\":\"vending layer: " + e + "\",\"type\":\"X\",\"code\":500}}";
            }
            byte[] out = answer.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                ex.getResponseBody().write(out);
            }
            ex.close();
        }

        private String addCredentials(String namespace, String answer) throws IOException {
            ObjectNode r = (ObjectNode) JSON.readTree(answer);
            String location = r.path("metadata").path("location").asText();
            String table = location.substring(location.lastIndexOf('/') + 1);
            ArrayNode list = r.putArray("storage-credentials");
            list.add(credential(location));
            ObjectNode config = r.has("config") ? (ObjectNode) r.get("config") : r.putObject("config");
            config.put(
                    "client.refresh-credentials-endpoint",
                    "v1/namespaces/" + namespace + "/tables/" + table + "/credentials");
            vended.put(table, r);
            return r.toString();
        }

        private HttpResponse<String> forward(String method, String pathAndQuery, byte[] body)
                throws IOException, InterruptedException {
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(URI.create(backend + pathAndQuery))
                            .header("Content-Type", "application/json")
                            .method(
                                    method,
                                    body == null || body.length == 0
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofByteArray(body));
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    private static Object startIcebergServer(int port) throws Exception {
        Class<?> type = Class.forName("org.apache.iceberg.rest.RESTCatalogServer");
        Constructor<?> ctor = type.getDeclaredConstructor(Map.class);
        ctor.setAccessible(true);
        Object server =
                ctor.newInstance(
                        Map.of(
                                "rest.port", Integer.toString(port),
                                "io-impl", "org.apache.iceberg.inmemory.InMemoryFileIO"));
        type.getMethod("start", boolean.class).invoke(server, false);
        return server;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Map<String, String> strings(JsonNode object) {
        return JSON.convertValue(object, new TypeReference<Map<String, String>>() {});
    }

    /** The spec of table {@code t}, built from what the vending layer returned with it. */
    private static IcebergRestStorageOptionsProvider.Builder fromLoadTable(
            VendingLayer layer, String location, JsonNode answer) {
        IcebergRestStorageOptionsProvider.Builder b =
                IcebergRestStorageOptionsProvider.builder(layer.uri(), List.of("db"), "t", location)
                        .loadTableConfig(strings(answer.path("config")));
        for (JsonNode c : answer.path("storage-credentials")) {
            b.storageCredential(c.path("prefix").asText(), strings(c.path("config")));
        }
        return b;
    }

    @Test
    @Timeout(120)
    void aStagedTableFromIcebergsServerWritesOnItsStageCreateCredentialsAndRefreshesAfterCommit()
            throws Exception {
        int port = freePort();
        Object iceberg = startIcebergServer(port);
        String location = "s3://iceberg-rck/wh/db/t";
        try (LocalS3Server s3 = LocalS3Server.start("iceberg-rck");
                VendingLayer layer = new VendingLayer("http://127.0.0.1:" + port, s3);
                RESTCatalog catalog = new RESTCatalog()) {
            catalog.initialize(
                    "client",
                    Map.of("uri", layer.uri(), "io-impl", "org.apache.iceberg.inmemory.InMemoryFileIO"));
            catalog.createNamespace(Namespace.of("db"));
            Transaction create =
                    catalog.buildTable(
                                    TableIdentifier.of("db", "t"),
                                    new Schema(Types.NestedField.optional(1, "x", Types.LongType.get())))
                            .withLocation(location)
                            .createTransaction();
            JsonNode staged = layer.vended.get("t");
            assertNotNull(staged, "the stage-create answer passed through the vending layer");

            // The stage-create answer is the first answer: no catalog call, and it writes.
            IcebergRestStorageOptionsProvider fromStage =
                    fromLoadTable(layer, location, staged).staged(true).build();
            Map<String, String> first = fromStage.fetchStorageOptions();
            assertEquals(0, layer.credentialRequests.size(), layer.credentialRequests.toString());
            Map<String, String> options = new HashMap<>(s3.endpointOptions());
            options.putAll(first);
            byte[] row = "row".getBytes(StandardCharsets.UTF_8);
            try (ObjectStore store = ObjectStore.open(location, options, fromStage)) {
                store.put("data/00000.parquet", row);
                assertArrayEquals(row, store.get("data/00000.parquet"));
            }

            // Before the commit, Iceberg's server does not know the table: the refresh is a 404
            // that names the staged table (apache/iceberg#13554).
            IcebergRestStorageOptionsProvider refreshOnly =
                    IcebergRestStorageOptionsProvider.builder(layer.uri(), List.of("db"), "t", location)
                            .loadTableConfig(strings(staged.path("config")))
                            .staged(true)
                            .planId("plan-1")
                            .build();
            CatalogException e = assertThrows(CatalogException.class, refreshOnly::fetchStorageOptions);
            assertEquals(CatalogException.Kind.NOT_FOUND, e.kind());
            assertTrue(e.getMessage().contains("table 'db.t' is staged"), e.getMessage());
            assertEquals(
                    List.of("/v1/namespaces/db/tables/t/credentials?planId=plan-1"),
                    layer.credentialRequests);

            // Committed: the same refresh (relative endpoint under /catalog) vends a new key.
            create.commitTransaction();
            Map<String, String> refreshed = refreshOnly.fetchStorageOptions();
            assertNotEquals(first.get("aws_access_key_id"), refreshed.get("aws_access_key_id"));
            assertEquals(2, layer.credentialRequests.size(), layer.credentialRequests.toString());

            // loadTable of the committed table: its answer is a first answer too.
            catalog.loadTable(TableIdentifier.of("db", "t"));
            IcebergRestStorageOptionsProvider loaded =
                    fromLoadTable(layer, location, layer.vended.get("t")).build();
            Map<String, String> seeded = new HashMap<>(s3.endpointOptions());
            seeded.putAll(loaded.fetchStorageOptions());
            try (ObjectStore store = ObjectStore.open(location, seeded, loaded)) {
                assertArrayEquals(row, store.get("data/00000.parquet"));
            }
            assertEquals(2, layer.credentialRequests.size(), layer.credentialRequests.toString());
        } finally {
            iceberg.getClass().getMethod("stop").invoke(iceberg);
        }
    }
}
