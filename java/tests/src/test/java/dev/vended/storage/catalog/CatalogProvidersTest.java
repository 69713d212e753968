package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The catalog specs against a scripted local catalog (the JDK's HTTP server), through the native
 * implementation of the protocols: wire format, key mapping, prefix choice, every failure (kind,
 * status, message), provider ids, serialization, no token in any message, {@code toString} or id,
 * and stores opened with a spec that refresh natively, with no call into the JVM.
 */
class CatalogProvidersTest {

    private static final String TOKEN = "tenant-a-token-0123456789";

    /** One recorded request. */
    record Request(String method, String rawPath, Map<String, List<String>> headers, String body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** A reply: status, body, delay. */
    record Reply(int status, String body, long delayMillis) {
        static Reply json(int status, String body) {
            return new Reply(status, body, 0);
        }
    }

    private HttpServer server;
    private final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

    private String start(Function<Request, Reply> handler) throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext(
                "/",
                exchange -> {
                    Request r =
                            new Request(
                                    exchange.getRequestMethod(),
                                    exchange.getRequestURI().getRawPath(),
                                    exchange.getRequestHeaders(),
                                    new String(
                                            exchange.getRequestBody().readAllBytes(),
                                            StandardCharsets.UTF_8));
                    requests.add(r);
                    Reply reply = handler.apply(r);
                    if (reply.delayMillis() > 0) {
                        try {
                            Thread.sleep(reply.delayMillis());
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    byte[] b = reply.body().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().add("Content-Type", "application/json");
                    try {
                        exchange.sendResponseHeaders(reply.status(), b.length == 0 ? -1 : b.length);
                        if (b.length > 0) {
                            exchange.getResponseBody().write(b);
                        }
                    } catch (java.io.IOException e) {
                        // client gone (timeout test)
                    }
                    exchange.close();
                });
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mock-catalog");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private static void assertClean(String text) {
        assertFalse(text.contains(TOKEN), () -> "token leaked: " + text);
        assertFalse(text.contains("secret-of-"), () -> "secret leaked: " + text);
    }

    // ---------------------------------------------------------------------------------------
    // Lance Namespace

    private LanceNamespaceStorageOptionsProvider lance(String url) {
        return LanceNamespaceStorageOptionsProvider.builder(url, "db", "orders")
                .bearerToken(TOKEN)
                .timeout(Duration.ofMillis(800))
                .build();
    }

    @Test
    void lanceDescribeSendsTheSpecRequestAndReturnsStorageOptions() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        200,
                                        "{\"location\":\"s3://b/db/orders.lance\",\"storage_options\":"
                                                + "{\"aws_access_key_id\":\"K\",\"aws_secret_access_key\":\"secret-of-K\","
                                                + "\"expires_at_millis\":\"1767225600000\",\"n\":5}}"));
        LanceNamespaceStorageOptionsProvider p = lance(url);
        Map<String, String> options = p.fetchStorageOptions();
        assertEquals("K", options.get("aws_access_key_id"));
        assertEquals("1767225600000", options.get("expires_at_millis"));
        assertEquals("5", options.get("n"));
        Request r = requests.get(0);
        assertEquals("POST", r.method());
        assertEquals("/v1/table/db$orders/describe", r.rawPath());
        assertEquals("Bearer " + TOKEN, r.header("Authorization"));
        assertEquals(
                "{\"id\":[\"db\",\"orders\"],\"vend_credentials\":true,\"with_table_uri\":true}",
                r.body());
        assertEquals(1, p.describeCalls());

        LanceNamespaceStorageOptionsProvider.TableDescription d = p.describeTable();
        assertEquals("s3://b/db/orders.lance", d.uri());
        assertFalse(d.toString().contains("secret-of-K"), d.toString());
        assertClean(p.toString());
    }

    @Test
    void lanceIdsPathsAndConfigurationErrors() throws Exception {
        LanceNamespaceStorageOptionsProvider p =
                LanceNamespaceStorageOptionsProvider.builder(
                                "http://user:pw@127.0.0.1:1/base/", "db", "my table")
                        .build();
        assertEquals("lance-namespace:http://127.0.0.1:1/base:db$my table:auth=none", p.providerId());
        assertThrows(
                IllegalArgumentException.class,
                () -> LanceNamespaceStorageOptionsProvider.builder("ftp://h", "t").build());
        assertThrows(
                IllegalArgumentException.class,
                () -> LanceNamespaceStorageOptionsProvider.builder("http://h", "a$b").build());
        assertThrows(
                IllegalArgumentException.class,
                () -> LanceNamespaceStorageOptionsProvider.builder("http://h").build());
        IllegalArgumentException bad =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                LanceNamespaceStorageOptionsProvider.builder("http://h", "t")
                                        .header("X-Key", "bad\nvalue-secret")
                                        .build());
        assertTrue(bad.getMessage().contains("X-Key"), bad.getMessage());
        assertFalse(bad.getMessage().contains("value-secret"), bad.getMessage());
    }

    @Test
    void providerIdsSeparateTenantsAndSurviveSerialization() throws Exception {
        LanceNamespaceStorageOptionsProvider a =
                LanceNamespaceStorageOptionsProvider.builder("http://127.0.0.1:1", "db", "t")
                        .bearerToken("token-of-alice")
                        .build();
        LanceNamespaceStorageOptionsProvider a2 =
                LanceNamespaceStorageOptionsProvider.builder("http://127.0.0.1:1", "db", "t")
                        .bearerToken("token-of-alice")
                        .build();
        LanceNamespaceStorageOptionsProvider b =
                LanceNamespaceStorageOptionsProvider.builder("http://127.0.0.1:1", "db", "t")
                        .bearerToken("token-of-bob")
                        .build();
        assertEquals(a.providerId(), a2.providerId());
        assertNotEquals(a.providerId(), b.providerId());
        assertFalse(a.providerId().contains("alice") || a.toString().contains("alice"));
        LanceNamespaceStorageOptionsProvider copy = roundTrip(a);
        assertEquals(a.providerId(), copy.providerId());
        assertEquals(0, copy.describeCalls());

        IcebergRestStorageOptionsProvider i =
                IcebergRestStorageOptionsProvider.builder(
                                "http://127.0.0.1:1/catalog", List.of("db"), "t", "s3://b/db/t")
                        .token("token-of-alice")
                        .build();
        IcebergRestStorageOptionsProvider j =
                IcebergRestStorageOptionsProvider.builder(
                                "http://127.0.0.1:1/catalog", List.of("db"), "t", "s3://b/db/t")
                        .token("token-of-bob")
                        .build();
        assertNotEquals(i.providerId(), j.providerId());
        assertTrue(
                i.providerId().startsWith("iceberg-rest:http://127.0.0.1:1/catalog::db.t:s3://b/db/t:auth="),
                i.providerId());
        assertEquals(i.providerId(), roundTrip(i).providerId());
        assertFalse(i.toString().contains("alice"), i.toString());
    }

    @SuppressWarnings("unchecked")
    private static <T> T roundTrip(T value) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        }
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (T) in.readObject();
        }
    }

    @Test
    @Timeout(60)
    void lanceFailuresAreClearAndNeverCarryTokens() throws Exception {
        Object[][] cases = {
            {Reply.json(404, "{\"error\":\"table id 'db$orders'\",\"code\":4}"),
                CatalogException.Kind.NOT_FOUND, 404, "table id 'db$orders'"},
            {Reply.json(401, "{\"error\":\"token Bearer " + TOKEN + " is invalid\",\"code\":16}"),
                CatalogException.Kind.UNAUTHORIZED, 401, "16 Unauthenticated"},
            {Reply.json(403, "{\"error\":\"alice may not describe db$orders\",\"code\":15}"),
                CatalogException.Kind.FORBIDDEN, 403, "alice may not describe"},
            {Reply.json(503, "{\"error\":\"backend unavailable\",\"code\":17}"),
                CatalogException.Kind.SERVER_ERROR, 503, "backend unavailable"},
            {Reply.json(200, "not json"), CatalogException.Kind.MALFORMED_RESPONSE, 200,
                "not valid JSON"},
            {Reply.json(200, "{\"location\":\"s3://b/t\"}"), CatalogException.Kind.MISSING_FIELD,
                200, "no storage_options"},
            {new Reply(200, "{}", 2500), CatalogException.Kind.TIMEOUT, -1,
                "no answer within 800 ms"},
        };
        for (Object[] c : cases) {
            Reply reply = (Reply) c[0];
            requests.clear();
            String url = start(r -> reply);
            LanceNamespaceStorageOptionsProvider p = lance(url);
            long started = System.nanoTime();
            CatalogException e = assertThrows(CatalogException.class, p::fetchStorageOptions);
            assertTrue((System.nanoTime() - started) / 1_000_000 < 2000, "took too long: " + reply);
            String label = reply.status() + " " + reply.body();
            assertEquals(c[1], e.kind(), label);
            assertEquals((int) c[2], e.statusCode(), label);
            assertTrue(e.getMessage().contains((String) c[3]), label + ": " + e.getMessage());
            assertTrue(
                    e.getMessage().startsWith("Lance Namespace describe table 'db$orders' at "),
                    e.getMessage());
            assertEquals(1, requests.size(), label + ": the provider never retries");
            assertClean(e.getMessage());
            assertClean(e.toString());
            assertEquals(
                    c[1] == CatalogException.Kind.SERVER_ERROR || c[1] == CatalogException.Kind.TIMEOUT,
                    e.isRetryable(),
                    label);
            stop();
        }
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        CatalogException e =
                assertThrows(
                        CatalogException.class,
                        () -> lance("http://127.0.0.1:" + port).fetchStorageOptions());
        assertEquals(CatalogException.Kind.TRANSPORT, e.kind());
        assertTrue(e.isRetryable());
        assertClean(e.getMessage());
        server = null;
    }

    // ---------------------------------------------------------------------------------------
    // Iceberg REST

    private IcebergRestStorageOptionsProvider iceberg(String url, String location) {
        return IcebergRestStorageOptionsProvider.builder(
                        url, List.of("db", "sales"), "orders", location)
                .prefix("wh")
                .token(TOKEN)
                .timeout(Duration.ofMillis(800))
                .build();
    }

    private static String s3Config(String key, String expires) {
        return "{\"s3.access-key-id\":\""
                + key
                + "\",\"s3.secret-access-key\":\"secret-of-"
                + key
                + "\",\"s3.session-token\":\"token-of-"
                + key
                + "\",\"s3.endpoint\":\"http://ignored\""
                + (expires == null ? "" : ",\"s3.session-token-expires-at-ms\":\"" + expires + "\"")
                + "}";
    }

    @Test
    void icebergLongestPrefixWinsAndKeysAreMapped() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        200,
                                        "{\"storage-credentials\":["
                                                + "{\"prefix\":\"s3://bucket/\",\"config\":"
                                                + s3Config("BUCKET", "1767225600000")
                                                + "},{\"prefix\":\"s3://bucket/wh/db/orders\",\"config\":"
                                                + s3Config("TABLE", "1767225600000")
                                                + "},{\"prefix\":\"s3://bucket/wh/db/orders_x\",\"config\":"
                                                + s3Config("OTHER", null)
                                                + "},{\"prefix\":\"s3://bucket/wh\",\"config\":"
                                                + s3Config("WH", null)
                                                + "}]}"));
        Map<String, String> o = iceberg(url, "s3a://bucket/wh/db/orders").fetchStorageOptions();
        assertEquals("TABLE", o.get("aws_access_key_id"));
        assertEquals("secret-of-TABLE", o.get("aws_secret_access_key"));
        assertEquals("token-of-TABLE", o.get("aws_session_token"));
        assertEquals("1767225600000", o.get("expires_at_millis"));
        assertEquals(4, o.size(), o.keySet().toString());
        Request r = requests.get(0);
        assertEquals("GET", r.method());
        assertEquals("/v1/wh/namespaces/db%1Fsales/tables/orders/credentials", r.rawPath());
        assertEquals("Bearer " + TOKEN, r.header("authorization"));

        Map<String, String> other = iceberg(url, "s3://bucket/other/t").fetchStorageOptions();
        assertEquals("BUCKET", other.get("aws_access_key_id"));
        Map<String, String> noExpiry = iceberg(url, "s3://bucket/wh/db/orders_x").fetchStorageOptions();
        assertEquals("OTHER", noExpiry.get("aws_access_key_id"));
        assertNull(noExpiry.get("expires_at_millis"), "a missing expiry stays missing");
    }

    @Test
    void icebergGcsAndAdlsKeysAreMapped() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        200,
                                        "{\"storage-credentials\":["
                                                + "{\"prefix\":\"gs://b/\",\"config\":{\"gcs.oauth2.token\":\"ya29\","
                                                + "\"gcs.oauth2.token-expires-at\":\"1767225600000\"}},"
                                                + "{\"prefix\":\"abfss://c@acct.dfs.core.windows.net/\",\"config\":{"
                                                + "\"adls.sas-token.aaa.dfs.core.windows.net\":\"sv=a\","
                                                + "\"adls.sas-token.acct.dfs.core.windows.net\":\"sv=b\","
                                                + "\"adls.sas-token-expires-at-ms.acct.dfs.core.windows.net\":\"1767225600000\"}}"
                                                + "]}"));
        Map<String, String> gcs = iceberg(url, "gs://b/t").fetchStorageOptions();
        assertEquals("ya29", gcs.get("google_bearer_token"));
        assertEquals("1767225600000", gcs.get("expires_at_millis"));
        assertEquals(2, gcs.size(), gcs.keySet().toString());
        Map<String, String> adls =
                iceberg(url, "abfss://c@acct.dfs.core.windows.net/t").fetchStorageOptions();
        assertEquals("sv=b", adls.get("azure_storage_sas_token"));
        assertEquals("acct", adls.get("azure_storage_account_name"));
        assertEquals("1767225600000", adls.get("expires_at_millis"));
    }

    @Test
    @Timeout(60)
    void icebergFailuresAreClearAndNeverCarryTokens() throws Exception {
        Object[][] cases = {
            {Reply.json(404, "{\"error\":{\"message\":\"Table does not exist: db.sales.orders\","
                        + "\"type\":\"NoSuchTableException\",\"code\":404}}"),
                CatalogException.Kind.NOT_FOUND, 404, "Table does not exist: db.sales.orders"},
            {Reply.json(401, "{\"error\":{\"message\":\"Bearer " + TOKEN + " expired\","
                        + "\"type\":\"NotAuthorizedException\",\"code\":401}}"),
                CatalogException.Kind.UNAUTHORIZED, 401, "*** expired"},
            {Reply.json(403, "{\"error\":{\"message\":\"alice may not read\","
                        + "\"type\":\"ForbiddenException\",\"code\":403}}"),
                CatalogException.Kind.FORBIDDEN, 403, "alice may not read"},
            {Reply.json(500, "{\"error\":{\"message\":\"vending failed\","
                        + "\"type\":\"InternalServerError\",\"code\":500}}"),
                CatalogException.Kind.SERVER_ERROR, 500, "vending failed"},
            {Reply.json(200, "{\"storage-credentials\": ["), CatalogException.Kind.MALFORMED_RESPONSE,
                200, "not valid JSON"},
            {Reply.json(200, "{}"), CatalogException.Kind.MISSING_FIELD, 200, "no storage-credentials"},
            {Reply.json(200, "{\"storage-credentials\":[{\"prefix\":\"s3://other/\",\"config\":{}}]}"),
                CatalogException.Kind.MISSING_FIELD, 200, "s3://other/"},
            {new Reply(200, "{}", 2500), CatalogException.Kind.TIMEOUT, -1, "no answer within 800 ms"},
        };
        for (Object[] c : cases) {
            Reply reply = (Reply) c[0];
            requests.clear();
            String url = start(r -> reply);
            IcebergRestStorageOptionsProvider p = iceberg(url, "s3://bucket/wh/db/orders");
            CatalogException e = assertThrows(CatalogException.class, p::fetchStorageOptions);
            String label = reply.status() + " " + reply.body();
            assertEquals(c[1], e.kind(), label);
            assertEquals((int) c[2], e.statusCode(), label);
            assertTrue(e.getMessage().contains((String) c[3]), label + ": " + e.getMessage());
            assertTrue(
                    e.getMessage()
                            .startsWith("Iceberg REST load credentials of table 'db.sales.orders' at "),
                    e.getMessage());
            assertEquals(1, requests.size(), label);
            assertClean(e.getMessage());
            if (e.statusCode() == 404) {
                assertEquals("NoSuchTableException", e.errorCode());
                assertFalse(e.isRetryable());
            }
            stop();
        }
        server = null;
    }

    @Test
    void icebergPathWithoutPrefixAndCustomSeparator() throws Exception {
        AtomicReference<String> path = new AtomicReference<>();
        String url =
                start(
                        r -> {
                            path.set(r.rawPath());
                            return Reply.json(
                                    200,
                                    "{\"storage-credentials\":[{\"prefix\":\"s3://b\",\"config\":"
                                            + s3Config("K", null)
                                            + "}]}");
                        });
        IcebergRestStorageOptionsProvider.builder(url + "/api/", List.of("a", "b"), "t", "s3://b/t")
                .namespaceSeparator(".")
                .build()
                .fetchStorageOptions();
        assertEquals("/api/v1/namespaces/a.b/tables/t/credentials", path.get());
    }

    // ---------------------------------------------------------------------------------------
    // Specs: headers, and stores whose refreshes run natively

    @Test
    void headersAreReplacedByNameInAnyCaseAndNeverPrinted() throws Exception {
        String url = start(r -> Reply.json(200, "{\"storage_options\":{\"k\":\"v\"}}"));
        LanceNamespaceStorageOptionsProvider p =
                LanceNamespaceStorageOptionsProvider.builder(url, "db", "orders")
                        .header("authorization", "Basic secret-of-basic")
                        .header("X-Api-Key", "secret-of-key-1")
                        .header("x-api-key", "secret-of-key-2")
                        .bearerToken(TOKEN)
                        .build();
        assertEquals(Map.of("k", "v"), p.fetchStorageOptions());
        Request r = requests.get(0);
        assertEquals("Bearer " + TOKEN, r.header("Authorization"));
        assertEquals(List.of("secret-of-key-2"), headerValues(r, "x-api-key"));
        assertEquals(List.of("Bearer " + TOKEN), headerValues(r, "authorization"));
        assertTrue(p.toString().contains("x-api-key") && p.toString().contains("Authorization"), p.toString());
        assertClean(p.toString());
        assertClean(p.providerId());
    }

    private static List<String> headerValues(Request r, String name) {
        List<String> out = new ArrayList<>();
        r.headers().forEach((k, v) -> {
            if (k.equalsIgnoreCase(name)) {
                out.addAll(v);
            }
        });
        return out;
    }

    /** A Lance reply vending {@code c} with an expiry {@code ttlMillis} from now. */
    private static Reply vend(VendedCredentials c, String location, long ttlMillis) {
        return Reply.json(
                200,
                "{\"location\":\""
                        + location
                        + "\",\"storage_options\":{\"aws_access_key_id\":\""
                        + c.accessKeyId()
                        + "\",\"aws_secret_access_key\":\""
                        + c.secretAccessKey()
                        + "\",\"aws_session_token\":\""
                        + c.sessionToken()
                        + "\",\"expires_at_millis\":\""
                        + (System.currentTimeMillis() + ttlMillis)
                        + "\"}}");
    }

    @Test
    @Timeout(90)
    void aStoreOpenedWithASpecRefreshesNativelyWithNoUpcall() throws Exception {
        try (LocalS3Server s3 = LocalS3Server.start("spec-refresh")) {
            VendedCredentials c = s3.issueCredentials(3_600_000L, null);
            String url = start(r -> vend(c, "s3://spec-refresh/t", 1500));

            // (a) openTable: one describe from Java, then every refresh natively.
            LanceNamespaceStorageOptionsProvider spec = lance(url);
            RefreshStats stats;
            try (ObjectStore store = spec.openTable(s3.endpointOptions(), Duration.ofMillis(500))) {
                assertEquals("s3://spec-refresh/t", store.uri());
                stats = useUntilGeneration(store, 4);
                assertEquals(1, spec.describeCalls(), "a refresh called back into the JVM");
            }
            assertTrue(stats.generation() >= 4, stats.toString());
            assertEquals(0, stats.failures(), stats.toString());
            assertEquals(1 + stats.fetches(), requests.size(), stats.toString());

            // (b) ObjectStore.open with the spec as provider: the same, with no describe at all.
            requests.clear();
            // Another table (another provider id): a store of its own, not (a)'s cached one.
            LanceNamespaceStorageOptionsProvider other =
                    roundTrip(
                            LanceNamespaceStorageOptionsProvider.builder(url, "db", "t2")
                                    .bearerToken(TOKEN)
                                    .timeout(Duration.ofMillis(800))
                                    .build());
            assertNotEquals(spec.providerId(), other.providerId());
            Map<String, String> seed = new java.util.HashMap<>(s3.endpointOptions());
            seed.putAll(c.toOptions());
            seed.put("expires_at_millis", Long.toString(System.currentTimeMillis() + 1500));
            try (ObjectStore store =
                    ObjectStore.open("s3://spec-refresh/t2", seed, other, Duration.ofMillis(500))) {
                stats = useUntilGeneration(store, 3);
            }
            assertEquals(0, other.describeCalls(), "a refresh called back into the JVM");
            assertTrue(stats.fetches() >= 2, stats.toString());
            assertEquals(stats.fetches(), requests.size(), stats.toString());
        }
        server = null;
    }

    /** Writes and reads until the store has installed {@code generation} credential sets. */
    private static RefreshStats useUntilGeneration(ObjectStore store, long generation)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        byte[] body = "spec".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; System.nanoTime() < deadline; i++) {
            store.put("o" + (i % 4), body);
            assertEquals("spec", new String(store.get("o" + (i % 4)), StandardCharsets.UTF_8));
            RefreshStats stats = store.refreshStats();
            if (stats.generation() >= generation) {
                return stats;
            }
            Thread.sleep(50); // pacing only: the credentials' lifetime is the scenario
        }
        throw new AssertionError("no generation " + generation + ": " + store.refreshStats());
    }

    @Test
    @Timeout(90)
    void aPermanentCatalogFailureIsRetriedAtTheSlowestPace() throws Exception {
        try (LocalS3Server s3 = LocalS3Server.start("spec-404")) {
            VendedCredentials c = s3.issueCredentials(3_600_000L, null);
            AtomicInteger n = new AtomicInteger();
            String url =
                    start(
                            r ->
                                    n.getAndIncrement() == 0
                                            ? vend(c, "s3://spec-404/t", 2000)
                                            : Reply.json(
                                                    404,
                                                    "{\"error\":\"table id 'db$orders'\",\"code\":4}"));
            LanceNamespaceStorageOptionsProvider spec = lance(url);
            try (ObjectStore store = spec.openTable(s3.endpointOptions(), Duration.ofMillis(1000))) {
                store.put("probe", new byte[] {1});
                // Requests past the expiry for 5 s: with a transient failure's backoff (1 s
                // doubling) the catalog would be asked at least 3 times; a 404 is permanent.
                long expiresAt = store.refreshStats().expiresAtMillis();
                long until = expiresAt + 5000;
                CredentialsException last = null;
                while (System.currentTimeMillis() < until) {
                    try {
                        store.get("probe");
                    } catch (CredentialsException e) {
                        last = e;
                    }
                    Thread.sleep(20); // pacing only
                }
                assertNotNull(last, "no request failed after the expiry");
                assertTrue(last.getCause() instanceof CatalogException, String.valueOf(last.getCause()));
                CatalogException cause = (CatalogException) last.getCause();
                assertEquals(CatalogException.Kind.NOT_FOUND, cause.kind());
                assertEquals(404, cause.statusCode());
                assertEquals("4 TableNotFound", cause.errorCode());
                assertFalse(cause.isRetryable());
                assertClean(last.getMessage());
                assertClean(cause.getMessage());
                RefreshStats stats = store.refreshStats();
                assertTrue(stats.failures() >= 1 && stats.failures() <= 2, stats.toString());
                assertEquals(1 + stats.failures(), requests.size(), stats.toString());
            }
            assertEquals(1, spec.describeCalls());
        }
        server = null;
    }
}
