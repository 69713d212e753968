package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Adversarial variants of the CASES reached through the Java API (no endpoint contacted). */
@Timeout(60)
class AdversarialTest {

    private static final String SECRET = "adversarial-secret-value";

    private static Map<String, String> s3Options() {
        Map<String, String> o = new HashMap<>();
        o.put("aws_endpoint", "http://127.0.0.1:9");
        o.put("aws_region", "us-east-1");
        o.put("aws_allow_http", "true");
        o.put("aws_access_key_id", "AKID");
        o.put("aws_secret_access_key", SECRET);
        return o;
    }

    private static void assertNoSecret(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            assertFalse(m.contains(SECRET), "secret leaked in: " + m);
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "+1767225600000",
                "\uff11\uff17\uff16\uff17\uff12\uff12\uff15\uff16\uff10\uff10\uff10\uff10\uff10",
                "1767225600",
                "-1",
                "9223372036854775807",
                "1767225600000.0",
                ""
            })
    void c07MalformedExpiryIsAClearError(String value) {
        Map<String, String> o = s3Options();
        o.put("expires_at_millis", value);
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket", o));
        assertTrue(e.getMessage().contains("expires_at_millis"), e.getMessage());
        assertNoSecret(e);
    }

    @Test
    void c07HugeExpiryValueGivesABoundedMessage() {
        Map<String, String> o = s3Options();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 200_000; i++) {
            sb.append('7');
        }
        o.put("expires_at_millis", sb.toString());
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket", o));
        assertTrue(e.getMessage().length() < 1_000, "message length " + e.getMessage().length());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "file://relative",
                "file:relative",
                "s3://bucket/../x",
                "s3://bucket/a/%2E%2E/b",
                "s3://bucket/a?x=1",
                "memory://a/../b"
            })
    void oddUrisAreRejected(String uri) {
        Map<String, String> o = uri.startsWith("s3") ? s3Options() : new HashMap<>();
        StorageException e = assertThrows(StorageException.class, () -> ObjectStore.open(uri, o));
        assertNoSecret(e);
    }

    @Test
    void pathsAndRangesOnAMemoryStore() throws Exception {
        try (ObjectStore s = ObjectStore.open("memory://adv-java/t\u00e4ble", null)) {
            byte[] ten = "0123456789".getBytes(StandardCharsets.UTF_8);
            s.put("obj", ten);
            // An empty range is an empty array (Arrays.copyOfRange convention), not an error.
            assertEquals(0, s.getRange("obj", 3, 3).length);
            assertThrows(IllegalArgumentException.class, () -> s.getRange("obj", -1, 3));
            assertThrows(IllegalArgumentException.class, () -> s.getRange("obj", 5, 2));
            byte[] tail = s.getRange("obj", 8, 100);
            assertArrayEquals("89".getBytes(StandardCharsets.UTF_8), tail);
            InvalidOptionsException past =
                    assertThrows(InvalidOptionsException.class, () -> s.getRange("obj", 10, 20));
            assertTrue(
                    past.getMessage().contains("past the end of the object (10 bytes)"),
                    past.getMessage());
            for (String bad : new String[] {"", "/", "a//b", "../x", "a/./b"}) {
                assertThrows(StorageException.class, () -> s.put(bad, ten), bad);
            }
            s.put("\u65e5\u672c/\u00fc.bin", ten);
            assertArrayEquals(ten, s.get("\u65e5\u672c/\u00fc.bin"));
            assertTrue(s.list("nothing-here").isEmpty());
            assertFalse(s.list("").isEmpty());
        }
        // The prefix is the decoded name, not the URL-escaped one.
        try (ObjectStore root = ObjectStore.open("memory://adv-java", null)) {
            assertEquals(10, root.get("t\u00e4ble/obj").length);
        }
    }

    @Test
    void providerIdThatThrowsOrIsHugeIsAClearErrorOrWorks() throws Exception {
        StorageOptionsProvider throwing =
                new StorageOptionsProvider() {
                    @Override
                    public Map<String, String> fetchStorageOptions() {
                        return null;
                    }

                    @Override
                    public String providerId() {
                        throw new IllegalStateException("no id today");
                    }
                };
        Exception e =
                assertThrows(
                        Exception.class,
                        () -> ObjectStore.open("s3://bucket/t", s3Options(), throwing).close());
        assertNoSecret(e);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 100_000; i++) {
            sb.append('p');
        }
        String huge = sb.toString();
        StorageOptionsProvider big =
                new StorageOptionsProvider() {
                    @Override
                    public Map<String, String> fetchStorageOptions() {
                        throw new RuntimeException("catalog down");
                    }

                    @Override
                    public String providerId() {
                        return huge;
                    }
                };
        Map<String, String> noCreds = s3Options();
        noCreds.remove("aws_access_key_id");
        noCreds.remove("aws_secret_access_key");
        try (ObjectStore s = ObjectStore.open("s3://bucket/t", noCreds, big)) {
            CredentialsException ce = assertThrows(CredentialsException.class, () -> s.get("x"));
            assertTrue(String.valueOf(ce.getCause()).contains("catalog down"), ce.toString());
        } catch (CredentialsException ce) {
            assertTrue(String.valueOf(ce.getCause()).contains("catalog down"), ce.toString());
        }
    }

    @Test
    void concurrentOpenAndCloseOfManyStores() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                final int tt = t;
                fs.add(
                        pool.submit(
                                () -> {
                                    for (int i = 0; i < 200; i++) {
                                        try (ObjectStore s =
                                                ObjectStore.open(
                                                        "memory://adv-conc" + (i % 5) + "/" + tt,
                                                        null)) {
                                            s.put("o", new byte[] {1});
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void sseCustomerKeyNeverAppearsInToStringOrErrors() throws Exception {
        Map<String, String> o = s3Options();
        o.put("aws_sse_customer_key_base64", "c2VjcmV0LWFkdmVyc2FyaWFsLWtleS0zMi1ieXRlcyE=");
        o.put("aws_unknown_option", "x");
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://bucket", o));
        assertTrue(e.getMessage().contains("aws_unknown_option"), e.getMessage());
        assertFalse(e.getMessage().contains("c2VjcmV0"), e.getMessage());
        o.remove("aws_unknown_option");
        try (ObjectStore s = ObjectStore.open("s3://bucket", o)) {
            assertFalse(s.toString().contains("c2VjcmV0"), s.toString());
            assertFalse(s.toString().contains(SECRET), s.toString());
        }
    }
}
