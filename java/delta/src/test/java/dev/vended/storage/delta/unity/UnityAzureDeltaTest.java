package dev.vended.storage.delta.unity;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProcess;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Delta on Spark ({@code local[2]}) on {@code abfss://} with a table located by the real Unity
 * Catalog server ({@code olai-uc-server} 0.0.11, see {@link UcServer}) whose storage is Azurite:
 * the server holds Azurite's development key as a storage credential and signs a SAS per {@code
 * temporary-table-credentials} call (read-only for {@code READ}). The table is configured by
 * {@code vended.storage.table.orders.unity.*} only (the server runs without authentication, so
 * no token), plus Azurite's address for every table ({@code vended.storage.options.*}).
 *
 * <p>Spark talks to Azurite directly: behind a counting proxy ({@code EmulatorProxy}) Azurite
 * cannot verify the copy source of a rename (the source URL names the proxy), so Delta's checksum
 * files, written by a rename through {@code FileContext}, would fail (404 {@code
 * CannotVerifyCopySource}). Here they are asserted: a rename with the server's SAS works.
 *
 * <p>The server's SAS tokens live an hour, so nothing rotates here (the scripted catalog of
 * {@link UnityS3DeltaTest} shows rotations). Fails when the server or Azurite is not installed,
 * unless {@code VENDED_STORAGE_SKIP_EMULATORS=1}.
 */
@Timeout(150)
class UnityAzureDeltaTest {

    private static final String CONTAINER = "lakehouse";
    private static final String TABLE = "main.sales.orders";

    private static AzuriteServer azurite;
    private static UcServer uc;
    private static SparkSession spark;

    private static String location(String path) {
        return "abfss://" + CONTAINER + "@" + AzuriteServer.ACCOUNT + ".dfs.core.windows.net/" + path;
    }

    @BeforeAll
    static void start() throws Exception {
        Path azuriteTool = EmulatorProcess.toolsDirectory().resolve(AzuriteServer.TOOL);
        Path ucServer = UcServer.binary();
        for (Path tool : List.of(azuriteTool, ucServer)) {
            if (!Files.exists(tool)) {
                boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
                Assumptions.assumeFalse(
                        skip, tool + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
                throw new AssertionError(
                        tool + " not found: run bin/install-emulators.sh (Azurite) and"
                                + " bin/install-unity.sh (uc-server), or set "
                                + UcServer.BINARY_ENV
                                + " (or VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
            }
        }
        long t0 = System.nanoTime();
        azurite = AzuriteServer.start();
        azurite.createContainer(CONTAINER);
        long t1 = System.nanoTime();
        uc = UcServer.start(ucServer);
        // The server's storage credential (Azurite's public development key), an external
        // location over the container, a catalog, a schema and an external Delta table.
        uc.post(
                "credentials",
                Map.of(
                        "name", "azurite_key",
                        "purpose", "STORAGE",
                        "skip_validation", true,
                        "azure_storage_key",
                                Map.of(
                                        "account_name", AzuriteServer.ACCOUNT,
                                        "account_key", AzuriteServer.KEY)));
        uc.post(
                "external-locations",
                Map.of(
                        "name", "lakehouse",
                        "url", location(""),
                        "credential_name", "azurite_key",
                        "skip_validation", true));
        uc.post("catalogs", Map.of("name", "main", "storage_root", location("managed")));
        uc.post("schemas", Map.of("name", "sales", "catalog_name", "main"));
        uc.post(
                "tables",
                Map.of(
                        "name", "orders",
                        "catalog_name", "main",
                        "schema_name", "sales",
                        "table_type", "EXTERNAL",
                        "data_source_format", "DELTA",
                        "storage_location", location("sales/orders")));

        long t2 = System.nanoTime();
        String shared = "spark.hadoop." + VendedFileSystem.SHARED_OPTIONS_KEY + ".";
        String t = "spark.hadoop.vended.storage.table.orders.";
        spark =
                DeltaSessions.builder("vended-storage-delta-unity-azure-test", "abfss")
                        .config(shared + "azure_storage_use_emulator", "true")
                        .config(shared + "azure_storage_endpoint", azurite.url())
                        .config(t + "unity.uri", uc.uri())
                        .config(t + "unity.table", TABLE)
                        .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        System.out.printf(
                "unity azure: Azurite %d ms, uc-server and its setup %d ms, Spark %d ms%n",
                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (System.nanoTime() - t2) / 1_000_000);
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        if (uc != null) {
            uc.close();
        }
        if (azurite != null) {
            azurite.close();
        }
    }

    @Test
    void sparkWritesAndReadsADeltaTableLocatedByTheUnityCatalogServer() throws Exception {
        String path = location("sales/orders");
        long start = System.nanoTime();
        for (int batch = 0; batch < 2; batch++) {
            spark.range(batch * 100L, (batch + 1) * 100L)
                    .coalesce(1)
                    .write()
                    .format("delta")
                    .mode("append")
                    .save(path);
        }
        Row read = spark.read().format("delta").load(path).selectExpr("count(*)", "sum(id)").first();
        assertThat(read.getLong(0)).isEqualTo(200L);
        assertThat(read.getLong(1)).isEqualTo(199L * 200 / 2);
        System.out.printf(
                "unity azure: 2 appends and a read in %d ms%n", (System.nanoTime() - start) / 1_000_000);
        org.apache.hadoop.fs.Path log = new org.apache.hadoop.fs.Path(path + "/_delta_log");
        FileSystem fs = log.getFileSystem(spark.sparkContext().hadoopConfiguration());
        assertThat(fs).isInstanceOf(VendedFileSystem.class);
        assertThat(((VendedFileSystem) fs).tableOf(log)).isEqualTo("orders");
        List<String> names =
                Arrays.stream(fs.listStatus(log)).map(st -> st.getPath().getName()).toList();
        for (int v = 0; v < 2; v++) {
            // Each commit, and its checksum written by a rename (a server-side copy).
            assertThat(names).contains(String.format("%020d.json", v), String.format("%020d.crc", v));
        }
    }
}
