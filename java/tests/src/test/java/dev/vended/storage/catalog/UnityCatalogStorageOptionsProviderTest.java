package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.AccessMode;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * The Unity Catalog spec against a scripted catalog answering as the Unity Catalog REST API does
 * ({@code getTable}, {@code temporary-table-credentials}, {@code temporary-path-credentials},
 * {@code {"error_code", "message"}} errors), through the native implementation: open by name with
 * one lookup and native refreshes, READ versus READ_WRITE in the request, clear 404/403 errors, no
 * token in any message or {@code toString}.
 */
class UnityCatalogStorageOptionsProviderTest extends CatalogProvidersSupport {

    private static final String API = "/api/2.1/unity-catalog";
    private static final String TABLE_ID = "4b6f5d2e-0c1a-4f0e-9c3b-2f6d1b7a9e01";

    private static Reply error(int status, String code, String message) {
        return Reply.json(
                status, "{\"error_code\":\"" + code + "\",\"message\":\"" + message + "\"}");
    }

    /** Table main.sales.orders at s3://{bucket}/uc/orders, keys living ttlMillis. */
    private static Reply unity(Request r, LocalS3Server s3, String bucket, long ttlMillis) {
        if (!("Bearer " + TOKEN).equals(r.header("Authorization"))) {
            return error(401, "UNAUTHENTICATED", "no valid token");
        }
        String path = r.rawPath().startsWith(API) ? r.rawPath().substring(API.length()) : "";
        if (r.method().equals("GET") && path.equals("/tables/main.sales.orders")) {
            return Reply.json(
                    200,
                    "{\"name\":\"orders\",\"table_id\":\""
                            + TABLE_ID
                            + "\",\"storage_location\":\"s3://"
                            + bucket
                            + "/uc/orders\"}");
        }
        if (r.method().equals("GET") && path.equals("/tables/main.sales.secret")) {
            return Reply.json(200, "{\"table_id\":\"secret-id\",\"storage_location\":\"s3://b/s\"}");
        }
        if (r.method().equals("GET")) {
            return error(404, "NOT_FOUND", "Table not found: " + path.substring("/tables/".length()));
        }
        if (r.body().contains("secret-id")) {
            return error(403, "PERMISSION_DENIED", "User alice lacks EXTERNAL USE SCHEMA on main.sales");
        }
        try {
            VendedCredentials c = s3.issueCredentials(ttlMillis, null);
            return Reply.json(
                    200,
                    "{\"aws_temp_credentials\":{\"access_key_id\":\""
                            + c.accessKeyId()
                            + "\",\"secret_access_key\":\""
                            + c.secretAccessKey()
                            + "\",\"session_token\":\""
                            + c.sessionToken()
                            + "\"},\"expiration_time\":"
                            + c.expiresAtMillis()
                            + "}");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static UnityCatalogStorageOptionsProvider.Builder orders(String url) {
        return UnityCatalogStorageOptionsProvider.table(url, "main.sales.orders")
                .bearerToken(TOKEN)
                .timeout(GENEROUS);
    }

    @Test
    @Timeout(90)
    void aTableOpenedByNameIsLookedUpOnceAndRefreshesNatively() throws Exception {
        try (LocalS3Server s3 = LocalS3Server.start("unity-open")) {
            String url = start(r -> unity(r, s3, "unity-open", 1500));
            UnityCatalogStorageOptionsProvider spec =
                    orders(url).operation(UnityCatalogStorageOptionsProvider.Operation.READ_WRITE).build();
            RefreshStats stats;
            try (ObjectStore store = spec.openTable(s3.endpointOptions(), Duration.ofMillis(500))) {
                assertEquals("s3://unity-open/uc/orders", store.uri());
                stats = useUntilGeneration(store, 3);
            }
            assertEquals(0, stats.failures(), stats.toString());
            long gets = requests.stream().filter(r -> r.method().equals("GET")).count();
            long posts = requests.stream().filter(r -> r.method().equals("POST")).count();
            assertEquals(1, gets, "the table is looked up once");
            // The open's call seeds the store; every refresh is one native call.
            assertEquals(1 + stats.fetches(), posts, stats.toString());
            assertTrue(
                    requests.stream()
                            .filter(r -> r.method().equals("POST"))
                            .allMatch(
                                    r ->
                                            r.body().contains("\"operation\":\"READ_WRITE\"")
                                                    && r.body().contains(TABLE_ID)),
                    requests.toString());
        }
        server = null;
    }

    /**
     * A spec without an explicit operation asks for what the store's access mode needs: a store
     * opened {@code READ_WRITE} gets {@code READ_WRITE} credentials and writes; opened {@code READ}
     * it asks for {@code READ}; an explicit operation that disagrees fails the open naming both.
     */
    @Test
    @Timeout(90)
    void theStoresAccessModeChoosesTheOperationWhenNoneIsGiven() throws Exception {
        try (LocalS3Server s3 = LocalS3Server.start("unity-mode")) {
            String url = start(r -> unity(r, s3, "unity-mode", 60_000));
            UnityCatalogStorageOptionsProvider byId =
                    UnityCatalogStorageOptionsProvider.tableId(url, TABLE_ID)
                            .location("s3://unity-mode/uc/orders")
                            .bearerToken(TOKEN)
                            .timeout(GENEROUS)
                            .build();
            assertEquals(null, byId.operation());
            for (AccessMode mode : new AccessMode[] {AccessMode.READ_WRITE, AccessMode.READ}) {
                requests.clear();
                try (ObjectStore store =
                        ObjectStore.builder("s3://unity-mode/uc/orders")
                                .options(s3.endpointOptions())
                                .provider(byId)
                                .accessMode(mode)
                                .open()) {
                    if (mode == AccessMode.READ_WRITE) {
                        store.put("m", "mode".getBytes(StandardCharsets.UTF_8));
                    }
                    assertEquals("mode", new String(store.get("m"), StandardCharsets.UTF_8));
                }
                String expected = mode == AccessMode.READ ? "\"READ\"" : "\"READ_WRITE\"";
                assertFalse(requests.isEmpty(), "the store asked the catalog");
                assertTrue(
                        requests.stream().allMatch(r -> r.body().contains("\"operation\":" + expected)),
                        requests.toString());
            }
            UnityCatalogStorageOptionsProvider readOnly =
                    UnityCatalogStorageOptionsProvider.tableId(url, TABLE_ID)
                            .location("s3://unity-mode/uc/orders")
                            .operation(UnityCatalogStorageOptionsProvider.Operation.READ)
                            .bearerToken(TOKEN)
                            .timeout(GENEROUS)
                            .build();
            Exception disagree =
                    assertThrows(
                            Exception.class,
                            () -> {
                                try (ObjectStore store =
                                        ObjectStore.builder("s3://unity-mode/uc/orders")
                                                .options(s3.endpointOptions())
                                                .provider(readOnly)
                                                .accessMode(AccessMode.READ_WRITE)
                                                .open()) {
                                    store.get("m");
                                }
                            });
            assertTrue(
                    disagree.getMessage().contains("does not agree with access_mode"),
                    disagree.getMessage());
            assertClean(disagree.getMessage());
        }
        server = null;
    }

    /** Writes and reads until the store has installed {@code generation} credential sets. */
    private static RefreshStats useUntilGeneration(ObjectStore store, long generation)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        byte[] body = "unity".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; System.nanoTime() < deadline; i++) {
            store.put("o" + (i % 4), body);
            assertEquals("unity", new String(store.get("o" + (i % 4)), StandardCharsets.UTF_8));
            RefreshStats stats = store.refreshStats();
            if (stats.generation() >= generation) {
                return stats;
            }
            Thread.sleep(50); // pacing only: the credentials' lifetime is the scenario
        }
        throw new AssertionError("no generation " + generation + ": " + store.refreshStats());
    }

    @Test
    @Timeout(60)
    void missingAndRefusedTablesAreClearCatalogExceptions() throws Exception {
        String url = start(r -> unity(r, null, "b", 1000));
        CatalogException missing =
                assertThrows(
                        CatalogException.class,
                        () ->
                                UnityCatalogStorageOptionsProvider.table(url, "main.sales.missing")
                                        .bearerToken(TOKEN)
                                        .timeout(GENEROUS)
                                        .build()
                                        .fetchStorageOptions());
        assertEquals(CatalogException.Kind.NOT_FOUND, missing.kind());
        assertEquals(404, missing.statusCode());
        assertEquals("NOT_FOUND", missing.errorCode());
        assertTrue(missing.operation().contains("get table 'main.sales.missing'"), missing.operation());
        assertEquals("Table not found: main.sales.missing", missing.catalogMessage());
        assertFalse(missing.isRetryable());
        assertClean(missing.getMessage());

        CatalogException refused =
                assertThrows(
                        CatalogException.class,
                        () ->
                                UnityCatalogStorageOptionsProvider.table(url, "main.sales.secret")
                                        .bearerToken(TOKEN)
                                        .timeout(GENEROUS)
                                        .build()
                                        .openTable(Map.of()));
        assertEquals(CatalogException.Kind.FORBIDDEN, refused.kind());
        assertEquals(403, refused.statusCode());
        assertEquals("PERMISSION_DENIED", refused.errorCode());
        assertTrue(refused.getMessage().contains("main.sales.secret"), refused.getMessage());
        assertClean(refused.getMessage());
    }

    @Test
    void pathCredentialsAndSpecsNeverShowTheToken() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        200,
                                        "{\"gcp_oauth_token\":{\"oauth_token\":\"ya29.x\"},"
                                                + "\"expiration_time\":\"1767225600000\"}"));
        UnityCatalogStorageOptionsProvider path =
                UnityCatalogStorageOptionsProvider.path(url, "gs://bucket/landing/")
                        .bearerToken(TOKEN)
                        .timeout(GENEROUS)
                        .build();
        Map<String, String> options = path.fetchStorageOptions();
        assertEquals(
                Map.of("google_bearer_token", "ya29.x", "expires_at_millis", "1767225600000"),
                options);
        assertEquals(API + "/temporary-path-credentials", requests.get(0).rawPath());
        assertEquals(
                "{\"url\":\"gs://bucket/landing/\",\"operation\":\"PATH_READ\"}", requests.get(0).body());
        assertEquals("gs://bucket/landing/", path.storageLocation());

        UnityCatalogStorageOptionsProvider read = orders(url).build();
        UnityCatalogStorageOptionsProvider write =
                orders(url).operation(UnityCatalogStorageOptionsProvider.Operation.READ_WRITE).build();
        assertNotEquals(read.providerId(), write.providerId());
        assertTrue(read.providerId().contains(":table=main.sales.orders:READ:auth="), read.providerId());
        for (Object shown : new Object[] {read, write, read.providerId(), orders(url)}) {
            assertClean(shown.toString());
        }
        IllegalArgumentException bad =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> UnityCatalogStorageOptionsProvider.table(url, "orders").build());
        assertTrue(bad.getMessage().contains("table"), bad.getMessage());
    }
}
