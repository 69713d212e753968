package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The catalog specs against a scripted local catalog (the JDK's HTTP server), through the native
 * implementation of the protocols: wire format, key mapping, prefix choice, every failure (kind,
 * status, message), provider ids, serialization, no token in any message, {@code toString} or id,
 * and stores opened with a spec that refresh natively, with no call into the JVM.
 *
 * <p>Iceberg REST is in {@link CatalogProvidersIcebergTest}.
 */
class CatalogProvidersTest extends CatalogProvidersSupport {

    // ---------------------------------------------------------------------------------------
    // Lance Namespace

    private LanceNamespaceStorageOptionsProvider lance(String url) {
        return lance(url, GENEROUS);
    }

    private LanceNamespaceStorageOptionsProvider lance(String url, Duration timeout) {
        return LanceNamespaceStorageOptionsProvider.builder(url, "db", "orders")
                .bearerToken(TOKEN)
                .timeout(timeout)
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
            {new Reply(200, "{}", SLOW_REPLY_MILLIS), CatalogException.Kind.TIMEOUT, -1,
                "no answer within 800 ms"},
        };
        for (Object[] c : cases) {
            Reply reply = (Reply) c[0];
            requests.clear();
            String url = start(r -> reply);
            LanceNamespaceStorageOptionsProvider p =
                    lance(url, timeoutFor((CatalogException.Kind) c[1]));
            long started = System.nanoTime();
            CatalogException e = assertThrows(CatalogException.class, p::fetchStorageOptions);
            assertTrue(
                    (System.nanoTime() - started) / 1_000_000 < SLOW_REPLY_MILLIS,
                    "did not give up before the catalog answered: " + reply);
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
