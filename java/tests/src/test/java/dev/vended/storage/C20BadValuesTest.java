package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.Map;

/**
 * C20: malformed option values (an endpoint with a non-numeric port, a token with a newline or a
 * NUL, already expired static credentials, a region with spaces) are refused at open with an
 * {@link InvalidOptionsException} naming the key; nothing panics, no secret is printed.
 */
@Timeout(60)
class C20BadValuesTest {

    private static final String SECRET = C19SecretsInUriAndKeysTest.SECRET;

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c20");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertRefused(String key, String value) {
        Map<String, String> m = new HashMap<>(server.rootOptions());
        m.put("aws_session_token", SECRET);
        m.put(key, value);
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open(server.uri("p/"), m));
        String msg = e.getMessage();
        assertTrue(msg.contains(key), () -> key + " not named: " + msg);
        assertFalse(msg.contains(SECRET), msg);
        assertFalse(msg.toLowerCase().contains("panic"), msg);
        assertEquals(StorageException.Kind.INVALID_OPTIONS, e.kind());
    }

    @Test
    void c20_endpointWithANonNumericPort() {
        assertRefused("aws_endpoint", "http://127.0.0.1:notaport");
    }

    @Test
    void c20_tokenWithANewline() {
        assertRefused("aws_session_token", SECRET + "\nX-Injected: 1");
    }

    @Test
    void c20_tokenWithANul() {
        assertRefused("aws_session_token", SECRET + "\0tail");
    }

    @Test
    void c20_expiredInitialStaticOptions() {
        assertRefused("expires_at_millis", Long.toString(System.currentTimeMillis() - 60_000));
    }

    @Test
    void c20_regionWithSpaces() {
        assertRefused("aws_region", "us east 1");
    }
}
