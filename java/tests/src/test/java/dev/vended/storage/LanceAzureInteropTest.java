package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProxy;
import dev.vended.storage.testkit.LanceNamespaceServer;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real Lance Namespace REST server ({@code lance.namespace.RestAdapter} of PyPI {@code
 * pylance==14.0.2}, started by {@code crates/core/tests/fixtures/lance_rest_server.py
 * --azurite-endpoint}) hosting a Lance table on Azurite and vending, on every describe, {@code
 * azure_storage_account_name}, {@code azure_storage_sas_token} and {@code expires_at_millis} =
 * describe time + 3 s. The table is opened by name from Java and read and written through
 * several refresh windows; the describes are counted at the server (a counting proxy in front of
 * it) and Azurite's rejections by a proxy in front of Azurite. The server re-vends the one SAS
 * it holds (a container SAS valid for an hour); that Azurite rejects an expired SAS is proven by
 * {@link AzureEmulatorTest}.
 *
 * <p>Needs Azurite ({@code bin/install-emulators.sh}) and Python with pylance, found as by
 * {@code LanceNamespaceInteropTest}: {@code VENDED_STORAGE_PYTHON} (or {@code
 * -Dvended.storage.python}), else the repository's {@code .venv/bin/python}; skipped when
 * neither exists.
 */
class LanceAzureInteropTest {

    private static final long REFRESH_INTERVAL_MS = 3000;
    private static final String CONTAINER = "lance";
    private static final String ROOT = "ns";

    private static AzuriteServer azurite;
    private static EmulatorProxy blob;
    private static EmulatorProxy catalog;
    private static LanceNamespaceServer lance;
    private static String sas;

    @BeforeAll
    static void start() throws Exception {
        Path python = LanceNamespaceServer.python();
        Assumptions.assumeTrue(
                python != null, "SKIPPED: no Python with pylance (VENDED_STORAGE_PYTHON or .venv)");
        azurite = Emulators.startAzurite();
        azurite.createContainer(CONTAINER);
        sas = AzuriteServer.containerSas(CONTAINER, System.currentTimeMillis() + 3_600_000L);
        lance =
                LanceNamespaceServer.builder(python, "az://" + CONTAINER + "/" + ROOT)
                        .azurite(azurite.url(), AzuriteServer.ACCOUNT, sas)
                        .refreshIntervalMillis(REFRESH_INTERVAL_MS)
                        .table("db.orders")
                        .start();
        catalog = new EmulatorProxy(lance.url(), null);
        blob = new EmulatorProxy(azurite.url(), null);
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {lance, catalog, blob, azurite}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    @Timeout(120)
    void tableOnAzuriteOpenedByNameIsReadOverSeveralRefreshWindows() throws Exception {
        LanceNamespaceStorageOptionsProvider provider =
                LanceNamespaceStorageOptionsProvider.builder(catalog.url, "db", "orders").build();
        long before = System.currentTimeMillis();
        LanceNamespaceStorageOptionsProvider.TableDescription d = provider.describeTable();
        Map<String, String> vended = d.storageOptions();
        assertEquals(AzuriteServer.ACCOUNT, vended.get("azure_storage_account_name"));
        assertEquals(sas, vended.get("azure_storage_sas_token"));
        for (String key : List.of("azure_storage_endpoint", "azure_storage_use_emulator")) {
            assertFalse(vended.containsKey(key), "the server vended " + key);
        }
        long expires = Long.parseLong(vended.get("expires_at_millis"));
        assertTrue(
                expires >= before + REFRESH_INTERVAL_MS - 1000
                        && expires <= System.currentTimeMillis() + REFRESH_INTERVAL_MS + 1000,
                "expires_at_millis " + expires + " is not describe time + " + REFRESH_INTERVAL_MS);
        assertTrue(d.uri().startsWith("az://" + CONTAINER + "/" + ROOT + "/"), d.uri());
        String sig = sas.substring(sas.indexOf("sig=") + 4);
        assertFalse(d.toString().contains(sig), "SAS signature in " + d);
        assertEquals(1, catalog.requests.get());

        // The client brings Azurite's address itself (the server vends none, C10).
        Map<String, String> client = AzuriteServer.storeOptions(blob.url, Map.of());
        client.remove("azure_storage_account_name");
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long rounds;
        long elapsed;
        RefreshStats stats;
        try (ObjectStore store = provider.openTable(client, Duration.ofSeconds(1))) {
            assertEquals(2, catalog.requests.get(), "openTable: one describe");
            assertEquals(d.uri(), store.uri());
            assertFalse(store.list("_versions").isEmpty(), "no _versions/");
            ObjectMeta file =
                    store.list("data").stream()
                            .filter(m -> m.path().endsWith(".lance"))
                            .findFirst()
                            .orElseThrow();
            byte[] table = store.get(file.path());
            assertArrayEquals(
                    "LANC".getBytes(StandardCharsets.US_ASCII),
                    Arrays.copyOfRange(table, table.length - 4, table.length),
                    file.path());

            // ~9 s of reading the table file and writing beside it: 3 s credentials refreshed
            // 1 s before expiry, so one describe about every 2 s.
            long start = System.nanoTime();
            long deadline = start + TimeUnit.SECONDS.toNanos(9);
            AtomicLong done = new AtomicLong();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                Thread w =
                        new Thread(
                                () -> {
                                    for (long n = 0; System.nanoTime() < deadline; n++) {
                                        String path = "java-io/w" + id + "/" + n;
                                        byte[] body =
                                                ("worker " + id + " " + n)
                                                        .getBytes(StandardCharsets.UTF_8);
                                        try {
                                            if (!Arrays.equals(table, store.get(file.path()))) {
                                                failures.add(file.path() + ": wrong bytes");
                                            }
                                            store.put(path, body);
                                            if (!Arrays.equals(body, store.get(path))) {
                                                failures.add(path + ": wrong bytes");
                                            }
                                            done.incrementAndGet();
                                            Thread.sleep(20); // pacing only
                                        } catch (Exception e) {
                                            failures.add(path + ": " + e);
                                            return;
                                        }
                                    }
                                },
                                "lance-azure-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            elapsed = (System.nanoTime() - start) / 1_000_000;
            rounds = done.get();
            stats = store.refreshStats();
        }
        assertTrue(failures.isEmpty(), () -> failures.size() + " failures, e.g. " + failures.peek());
        assertTrue(rounds > 50, "only " + rounds + " rounds");
        long windows = elapsed / (REFRESH_INTERVAL_MS - 1000);
        long describes = catalog.requests.get() - 2;
        System.out.println(
                rounds + " rounds in " + elapsed + " ms; " + describes + " describes at the server; "
                        + blob.requests.get() + " requests to Azurite");
        assertTrue(
                describes >= windows - 2 && describes <= windows + 2,
                describes + " describes in " + elapsed + " ms, expected about " + windows);
        // The server answered exactly the refreshes the store made.
        assertEquals(describes, stats.fetches(), stats.toString());
        assertEquals(0, stats.failures(), stats.toString());
        assertEquals(0, blob.rejections(), "Azurite rejected a request");
    }
}
