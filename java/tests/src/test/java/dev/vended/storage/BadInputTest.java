package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.Map;

/**
 * Bad URIs and options give clear {@link InvalidOptionsException}s, never a crash (native library
 * needed; no endpoint is contacted).
 */
@Timeout(60)
class BadInputTest {

    private static final String SECRET = "do-not-print-this-secret";

    private static Map<String, String> s3Options() {
        Map<String, String> o = new HashMap<>();
        o.put("aws_endpoint", "http://127.0.0.1:9");
        o.put("aws_region", "us-east-1");
        o.put("aws_allow_http", "true");
        return o;
    }

    private static void assertNoSecret(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            assertFalse(m.contains(SECRET), "secret leaked in: " + m);
        }
    }

    @Test
    void unknownScheme() {
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("foo://x", null));
        assertTrue(e.getMessage().contains("foo"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"s3://", "s3:///", "s3:///prefix/"})
    void s3WithoutBucket(String uri) {
        Map<String, String> o = s3Options();
        o.put("aws_access_key_id", "AKID");
        o.put("aws_secret_access_key", SECRET);
        InvalidOptionsException e =
                assertThrows(InvalidOptionsException.class, () -> ObjectStore.open(uri, o));
        assertNoSecret(e);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "not a uri", "://nothing", "s3"})
    void unparsableUris(String uri) {
        assertThrows(InvalidOptionsException.class, () -> ObjectStore.open(uri, null));
    }

    @Test
    void accessKeyWithoutSecret() {
        Map<String, String> o = s3Options();
        o.put("aws_access_key_id", "AKID");
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket/", o));
        assertTrue(e.getMessage().contains("aws_secret_access_key"), e.getMessage());
    }

    @Test
    void secretWithoutAccessKey() {
        Map<String, String> o = s3Options();
        o.put("aws_secret_access_key", SECRET);
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket/", o));
        assertNoSecret(e);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "1767225600", // seconds, not milliseconds
                "2026-01-01T00:00:00Z",
                "abc",
                "-1",
                "9223372036854775807",
                "99999999999999999999999",
                ""
            })
    void malformedExpiresAtMillis(String value) {
        Map<String, String> o = s3Options();
        o.put("aws_access_key_id", "AKID");
        o.put("aws_secret_access_key", SECRET);
        o.put("aws_session_token", SECRET + "-token");
        o.put("expires_at_millis", value);
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket/", o));
        assertTrue(e.getMessage().contains("expires_at_millis"), e.getMessage());
        if (!value.isEmpty()) {
            assertTrue(e.getMessage().contains(value), e.getMessage());
        }
        assertNoSecret(e);
    }

    @AfterAll
    static void theJvmStillWorks() throws Exception {
        try (ObjectStore store = ObjectStore.open("memory:///after-bad-input/", null)) {
            store.put("ok", new byte[] {1, 2, 3});
            assertArrayEquals(new byte[] {1, 2, 3}, store.get("ok"));
        }
    }
}
