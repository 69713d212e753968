package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.StorageException;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LanceNamespaceServer;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link LanceNamespaceStorageOptionsProvider} (a spec; the protocol runs natively) against a
 * <b>real</b> Lance Namespace REST server
 * ({@code lance.namespace.RestAdapter} from PyPI {@code pylance==14.0.2}, started by {@link
 * LanceNamespaceServer}) whose tables live on the local S3 endpoint.
 *
 * <p>Needs Python with pylance, found by {@link LanceNamespaceServer#python()}: {@code
 * VENDED_STORAGE_PYTHON} (or {@code -Dvended.storage.python}), else the repository's {@code
 * .venv/bin/python}. Skipped (JUnit assumption) only when neither is set and that default does
 * not exist; a configured interpreter that does not exist is a failure.
 */
class LanceNamespaceInteropTest {

    private static final long REFRESH_INTERVAL_MS = 3000;
    private static final String BUCKET = "lance-interop";
    private static final String ROOT = "ns";

    private static LocalS3Server s3;
    private static LanceNamespaceServer lance;
    private static String lanceUrl;
    private static VendedCredentials vended;

    @BeforeAll
    static void start() throws Exception {
        Path python = LanceNamespaceServer.python();
        Assumptions.assumeTrue(
                python != null,
                "SKIPPED: no Python with pylance (set VENDED_STORAGE_PYTHON, or create ../.venv:"
                        + " python3 -m venv .venv && .venv/bin/pip install pylance==14.0.2)");
        s3 = LocalS3Server.start(BUCKET);
        vended = s3.issueCredentials(3_600_000L, BUCKET + "/" + ROOT + "/");
        lance =
                LanceNamespaceServer.builder(python, "s3://" + BUCKET + "/" + ROOT)
                        .s3(s3.endpoint(), vended)
                        .refreshIntervalMillis(REFRESH_INTERVAL_MS)
                        .table("db.orders")
                        .start();
        lanceUrl = lance.url();
    }

    @AfterAll
    static void stop() throws Exception {
        if (lance != null) {
            lance.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    private static Map<String, String> clientOptions() {
        return s3.endpointOptions(); // endpoint, region, allow-http: the client's own (C10)
    }

    @Test
    @Timeout(120)
    void tableOpenedByNameIsReadAndWrittenOverSeveralRefreshWindows() throws Exception {
        LanceNamespaceStorageOptionsProvider provider =
                LanceNamespaceStorageOptionsProvider.builder(lanceUrl, "db", "orders")
                        .bearerToken("tenant-a-token-0123456789")
                        .build();

        // What the real server vends: credentials and a fresh expiry, no endpoint or region.
        long before = System.currentTimeMillis();
        LanceNamespaceStorageOptionsProvider.TableDescription d = provider.describeTable();
        Map<String, String> options = d.storageOptions();
        assertNotNull(options, "storage_options");
        assertEquals(vended.accessKeyId(), options.get("aws_access_key_id"));
        for (String key : List.of("aws_endpoint", "aws_region", "aws_allow_http")) {
            assertFalse(options.containsKey(key), "the server vended " + key + ": " + d);
        }
        long expires = Long.parseLong(options.get("expires_at_millis"));
        assertTrue(
                expires >= before + REFRESH_INTERVAL_MS - 1000
                        && expires <= System.currentTimeMillis() + REFRESH_INTERVAL_MS + 1000,
                "expires_at_millis " + expires + " is not describe time + " + REFRESH_INTERVAL_MS);
        assertFalse(d.toString().contains(vended.secretAccessKey()), d.toString());

        // A deserialized copy (as on a Spark executor) opens the table: exactly one describe.
        LanceNamespaceStorageOptionsProvider copy = roundTrip(provider);
        assertEquals(provider.providerId(), copy.providerId());
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long objects;
        long describes;
        long elapsed;
        RefreshStats stats;
        try (ObjectStore store = copy.openTable(clientOptions(), Duration.ofSeconds(1))) {
            assertEquals(1, copy.describeCalls(), "openTable describes once, no second call");
            assertEquals(0, store.refreshStats().fetches(), "the describe answer seeds the store");
            assertEquals(d.uri(), store.uri());

            // Read what the Lance server wrote: a data file ends with the Lance magic "LANC".
            assertFalse(store.list("_versions").isEmpty(), "no _versions/");
            ObjectMeta file =
                    store.list("data").stream()
                            .filter(m -> m.path().endsWith(".lance"))
                            .findFirst()
                            .orElseThrow();
            byte[] bytes = store.get(file.path());
            byte[] tail = new byte[4];
            System.arraycopy(bytes, bytes.length - 4, tail, 0, 4);
            assertArrayEquals("LANC".getBytes(StandardCharsets.US_ASCII), tail, file.path());

            // Write and read for ~9 s: 3 s credentials, refreshed 1 s before expiry.
            long start = System.nanoTime();
            long deadline = start + TimeUnit.SECONDS.toNanos(9);
            AtomicLong written = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                Thread w =
                        new Thread(
                                () -> {
                                    long n = 0;
                                    while (System.nanoTime() < deadline) {
                                        String path = "java-io/w" + id + "/" + n;
                                        byte[] body =
                                                ("worker " + id + " object " + n)
                                                        .getBytes(StandardCharsets.UTF_8);
                                        try {
                                            store.put(path, body);
                                            if (!java.util.Arrays.equals(body, store.get(path))) {
                                                failures.add(path + ": wrong bytes");
                                            }
                                            written.incrementAndGet();
                                            Thread.sleep(20);
                                        } catch (Exception e) {
                                            failures.add(path + ": " + e);
                                            return;
                                        }
                                        n++;
                                    }
                                },
                                "lance-interop-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            elapsed = (System.nanoTime() - start) / 1_000_000;
            objects = written.get();
            stats = store.refreshStats();
            describes = stats.fetches() + stats.failures();
            // Every refresh ran natively: none called this object (no upcall into the JVM).
            assertEquals(1, copy.describeCalls(), "a refresh called back into the JVM");
        }
        assertTrue(failures.isEmpty(), () -> failures.size() + " failures, e.g. " + failures.peek());
        assertTrue(objects > 50, "only " + objects + " objects");
        long windows = elapsed / (REFRESH_INTERVAL_MS - 1000);
        assertTrue(
                describes >= windows - 2 && describes <= windows + 2,
                describes + " describes in " + elapsed + " ms, expected about " + windows);
        assertEquals(0, stats.failures(), stats.toString());
        assertTrue(stats.generation() >= 3, "no rotation: " + stats);
        KeyStats k = s3.stats(vended.accessKeyId());
        assertEquals(0, k.rejected(), k.toString());
        assertTrue(k.accepted() >= 2 * objects, k.toString());
    }

    @Test
    @Timeout(60)
    void unknownTableIsAClear404() throws Exception {
        String token = "tenant-b-token-0123456789";
        LanceNamespaceStorageOptionsProvider provider =
                LanceNamespaceStorageOptionsProvider.builder(lanceUrl, "db", "missing")
                        .bearerToken(token)
                        .build();
        CatalogException e =
                assertThrows(CatalogException.class, () -> provider.openTable(clientOptions()));
        assertEquals(CatalogException.Kind.NOT_FOUND, e.kind());
        assertEquals(404, e.statusCode());
        assertEquals("4 TableNotFound", e.errorCode());
        assertTrue(e.getMessage().contains("table id 'db$missing'"), e.getMessage());
        assertFalse(e.getMessage().contains(token), e.getMessage());
        assertFalse(e.isRetryable());
    }

    @Test
    @Timeout(60)
    void aFailingRefreshIsAPermanent404ThatReachesCallersAsTheCause() throws Exception {
        // Open with the real server's answer, then let refreshes hit a table that does not exist:
        // once the credentials expire, callers get a CredentialsException whose cause is the
        // catalog's 404, and the 404 (permanent) is not retried at a transient failure's pace.
        LanceNamespaceStorageOptionsProvider good =
                LanceNamespaceStorageOptionsProvider.builder(lanceUrl, "db", "orders").build();
        LanceNamespaceStorageOptionsProvider.TableDescription d = good.describeTable();
        LanceNamespaceStorageOptionsProvider missing =
                LanceNamespaceStorageOptionsProvider.builder(lanceUrl, "db", "missing").build();
        Map<String, String> initial = new HashMap<>(clientOptions());
        initial.putAll(d.storageOptions());
        try (ObjectStore store = ObjectStore.open(d.uri(), initial, missing)) {
            store.put("probe", new byte[] {1});
            long expiresAt = Long.parseLong(initial.get("expires_at_millis"));
            Waits.sleepUntil(expiresAt + 300);
            CredentialsException e = assertThrows(CredentialsException.class, () -> store.get("probe"));
            String text = e.getMessage() + " " + e.getCause();
            assertTrue(text.contains("404") && text.contains("db$missing"), text);
            assertTrue(e.getCause() instanceof CatalogException, String.valueOf(e.getCause()));
            CatalogException cause = (CatalogException) e.getCause();
            assertEquals(CatalogException.Kind.NOT_FOUND, cause.kind());
            assertEquals("4 TableNotFound", cause.errorCode());
            assertFalse(cause.isRetryable());
            // 4 more seconds of requests: a transient failure's backoff (1 s doubling) would
            // ask the catalog at least twice more; a permanent one waits the slowest pace.
            long failures = store.refreshStats().failures();
            assertTrue(failures >= 1 && failures <= 2, store.refreshStats().toString());
            long until = System.currentTimeMillis() + 4000;
            while (System.currentTimeMillis() < until) {
                assertThrows(CredentialsException.class, () -> store.get("probe"));
                Thread.sleep(20); // pacing only
            }
            assertEquals(failures, store.refreshStats().failures(), store.refreshStats().toString());
        }
        assertEquals(0, missing.describeCalls(), "a refresh called back into the JVM");
    }

    @Test
    @Timeout(60)
    void openTableKeepsTheCallersEncryptionKeys() throws Exception {
        // The S3 store builder needs the SSE-C key once SSE-C is on ("Missing customer key"):
        // the store opens only if openTable kept the caller's key.
        LanceNamespaceStorageOptionsProvider provider =
                LanceNamespaceStorageOptionsProvider.builder(lanceUrl, "db", "orders").build();
        String customerKey =
                java.util.Base64.getEncoder().encodeToString(new byte[32]); // 32 zero bytes
        Map<String, String> ssec = new HashMap<>(clientOptions());
        ssec.put("aws_server_side_encryption", "sse-c");
        ssec.put("aws_sse_customer_key_base64", customerKey);
        try (ObjectStore store = provider.openTable(ssec)) {
            assertEquals(provider.describeTable().uri(), store.uri());
        }
        Map<String, String> keyless = new HashMap<>(ssec);
        keyless.remove("aws_sse_customer_key_base64");
        StorageException noKey =
                assertThrows(StorageException.class, () -> provider.openTable(keyless).close());
        assertTrue(noKey.getMessage().contains("customer key"), noKey.getMessage());

        // The SSE-KMS key id too: an id S3 cannot carry in a header fails the store builder,
        // which it could not if openTable had dropped the id.
        Map<String, String> kms = new HashMap<>(clientOptions());
        kms.put("aws_server_side_encryption", "aws:kms");
        kms.put("aws_sse_kms_key_id", "key\nwith-a-line-break");
        StorageException badId =
                assertThrows(StorageException.class, () -> provider.openTable(kms).close());
        assertTrue(badId.getMessage().contains("kms"), badId.getMessage());
        kms.put("aws_sse_kms_key_id", "arn:aws:kms:us-east-1:000000000000:key/interop");
        try (ObjectStore store = provider.openTable(kms)) {
            assertEquals(provider.describeTable().uri(), store.uri());
        }
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
}
