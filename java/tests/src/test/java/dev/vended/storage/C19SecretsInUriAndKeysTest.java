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

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;

/**
 * C19: secrets in the wrong place (a URI's query or user info, a misspelled or upper-case secret
 * key) are refused at open, naming the key or the URI part, and the secret never appears in a
 * message, a {@code toString()}, a stack trace or {@code Builder.toString()}.
 */
@Timeout(60)
class C19SecretsInUriAndKeysTest {

    /** The marker bin/test also greps the native log and the reports for. */
    static final String SECRET = "SECRETSECRET";

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c19");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertNoSecret(Object printed) {
        String s = String.valueOf(printed);
        assertFalse(s.contains(SECRET), () -> "the secret is printed: " + s.replace(SECRET, "<<S>>"));
    }

    private static InvalidOptionsException refused(
            String uri, Map<String, String> options, String named) {
        ObjectStore.Builder builder = ObjectStore.builder(uri).options(options);
        assertNoSecret(builder);
        InvalidOptionsException e = assertThrows(InvalidOptionsException.class, builder::open);
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        assertNoSecret(e.getMessage());
        assertNoSecret(e);
        assertNoSecret(trace);
        assertTrue(
                e.getMessage().toLowerCase().contains(named.toLowerCase()),
                () -> "'" + named + "' not named: " + e.getMessage());
        assertEquals(StorageException.Kind.INVALID_OPTIONS, e.kind());
        return e;
    }

    private static Map<String, String> rootPlus(String key, String value) {
        Map<String, String> m = new HashMap<>(server.rootOptions());
        m.put(key, value);
        return m;
    }

    @Test
    void c19_sessionTokenInTheUriQuery() {
        refused(
                "s3://c19/p/?X-Amz-Security-Token=" + SECRET + "&X-Amz-Signature=" + SECRET,
                server.rootOptions(),
                "query");
    }

    @Test
    void c19_secretInTheUriUserInfo() {
        refused("s3://AKID:" + SECRET + "@c19/p/", server.rootOptions(), "user info");
    }

    @Test
    void c19_misspelledSessionTokenKey() {
        refused(server.uri("p/"), rootPlus("aws_session_tokn", SECRET), "aws_session_tokn");
    }

    @Test
    void c19_misspelledSecretKeyKey() {
        refused(
                server.uri("p/"),
                rootPlus("aws_secret_access_keyy", SECRET),
                "aws_secret_access_keyy");
    }

    @Test
    void c19_upperCaseSecretKey() {
        Map<String, String> m = new HashMap<>(server.endpointOptions());
        m.put("aws_access_key_id", LocalS3Server.ROOT_ACCESS_KEY_ID);
        m.put("AWS_SECRET_ACCESS_KEY", SECRET);
        refused(server.uri("p/"), m, "AWS_SECRET_ACCESS_KEY");
    }

    @Test
    void c19_toStringsOfStoreAndBuilderHideSecrets() throws Exception {
        ObjectStore.Builder b =
                ObjectStore.builder("s3://u:" + SECRET + "@c19/p/?sig=" + SECRET)
                        .option("aws_secret_access_key", SECRET)
                        .option("aws_session_tokn", SECRET)
                        .option("aws_endpoint", "http://u:" + SECRET + "@127.0.0.1:1/?t=" + SECRET)
                        .option("aws_region", "us-east-1");
        String s = b.toString();
        assertNoSecret(s);
        assertTrue(s.contains("aws_region=us-east-1"), s);
        assertTrue(s.contains("aws_session_tokn=***"), s);
        assertTrue(s.contains("aws_endpoint=http://***@127.0.0.1:1/"), s);
        try (ObjectStore store = ObjectStore.open(server.uri("p/"), server.rootOptions())) {
            assertNoSecret(store);
        }
    }
}
