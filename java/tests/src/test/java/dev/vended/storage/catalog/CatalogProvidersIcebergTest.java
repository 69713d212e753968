package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Iceberg REST catalog spec against a scripted local catalog (see {@link
 * CatalogProvidersSupport}), through the native implementation of the protocol: key mapping for
 * S3, GCS and ADLS, longest-prefix choice of the storage credential, path prefix and namespace
 * separator, and every failure (kind, status, message) with no token in any message.
 */
class CatalogProvidersIcebergTest extends CatalogProvidersSupport {

    private IcebergRestStorageOptionsProvider iceberg(String url, String location) {
        return iceberg(url, location, GENEROUS);
    }

    private IcebergRestStorageOptionsProvider iceberg(String url, String location, Duration timeout) {
        return IcebergRestStorageOptionsProvider.builder(
                        url, List.of("db", "sales"), "orders", location)
                .prefix("wh")
                .token(TOKEN)
                .timeout(timeout)
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
            {new Reply(200, "{}", SLOW_REPLY_MILLIS), CatalogException.Kind.TIMEOUT, -1,
                "no answer within 800 ms"},
        };
        for (Object[] c : cases) {
            Reply reply = (Reply) c[0];
            requests.clear();
            String url = start(r -> reply);
            IcebergRestStorageOptionsProvider p =
                    iceberg(url, "s3://bucket/wh/db/orders", timeoutFor((CatalogException.Kind) c[1]));
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

    @Test
    void icebergStartsFromLoadTableAndRefreshesThroughTheRelativeEndpoint() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        200,
                                        "{\"storage-credentials\":[{\"prefix\":\"s3://b/wh/t\",\"config\":"
                                                + s3Config("REFRESHED", null)
                                                + "}]}"));
        String expires = Long.toString(System.currentTimeMillis() + 3_600_000L);
        IcebergRestStorageOptionsProvider.Builder b =
                IcebergRestStorageOptionsProvider.builder(
                                url + "/api/catalog", List.of("db"), "t", "s3://b/wh/t")
                        .token(TOKEN)
                        .loadTableConfig(
                                Map.of(
                                        "client.refresh-credentials-endpoint", "/v1/wh/refresh",
                                        "s3.endpoint", "http://ignored"))
                        .planId("p1");
        IcebergRestStorageOptionsProvider seeded =
                b.storageCredential(
                                "s3://b/wh/t",
                                Map.of(
                                        "s3.access-key-id", "LOAD-TABLE",
                                        "s3.secret-access-key", "secret-of-load-table",
                                        "s3.session-token-expires-at-ms", expires))
                        .build();
        Map<String, String> first = seeded.fetchStorageOptions();
        assertEquals("LOAD-TABLE", first.get("aws_access_key_id"));
        assertEquals(expires, first.get("expires_at_millis"));
        assertEquals(0, requests.size(), "the first answer needs no call");
        assertTrue(seeded.providerId().endsWith(":plan=p1"), seeded.providerId());
        assertClean(seeded.toString() + seeded.providerId());
        assertTrue(seeded.toString().contains("client.refresh-credentials-endpoint"), seeded.toString());

        IcebergRestStorageOptionsProvider refreshing =
                IcebergRestStorageOptionsProvider.builder(
                                url + "/api/catalog", List.of("db"), "t", "s3://b/wh/t")
                        .token(TOKEN)
                        .loadTableConfig(Map.of("client.refresh-credentials-endpoint", "/v1/wh/refresh"))
                        .build();
        assertEquals("REFRESHED", refreshing.fetchStorageOptions().get("aws_access_key_id"));
        assertEquals(1, requests.size());
        assertEquals("/api/catalog/v1/wh/refresh", requests.get(0).rawPath());
        assertEquals("Bearer " + TOKEN, requests.get(0).header("authorization"));
    }

    @Test
    void icebergStagedTableAndMalformedExpiryAreNamed() throws Exception {
        String url =
                start(
                        r ->
                                Reply.json(
                                        404,
                                        "{\"error\":{\"message\":\"Table does not exist: db.new_t\","
                                                + "\"type\":\"NoSuchTableException\",\"code\":404}}"));
        IcebergRestStorageOptionsProvider staged =
                IcebergRestStorageOptionsProvider.builder(url, List.of("db"), "new_t", "s3://b/new_t")
                        .staged(true)
                        .build();
        assertTrue(staged.providerId().endsWith(":staged"), staged.providerId());
        CatalogException e = assertThrows(CatalogException.class, staged::fetchStorageOptions);
        assertEquals(CatalogException.Kind.NOT_FOUND, e.kind());
        assertTrue(
                e.getMessage().contains("table 'db.new_t' is staged")
                        && e.getMessage().contains("Table does not exist: db.new_t"),
                e.getMessage());
        assertEquals(1, requests.size());

        IllegalArgumentException bad =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                IcebergRestStorageOptionsProvider.builder(
                                                url, List.of("db"), "t", "gs://b/t")
                                        .loadTableConfig(
                                                Map.of(
                                                        "gcs.oauth2.token", "ya29",
                                                        "gcs.oauth2.token-expires-at", "secret-of-x"))
                                        .build());
        assertTrue(bad.getMessage().contains("'gcs.oauth2.token-expires-at'"), bad.getMessage());
        assertClean(bad.getMessage());
        assertEquals(1, requests.size(), "building sends nothing");
    }
}
