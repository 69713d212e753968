package dev.vended.storage.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.apache.iceberg.Table;
import org.apache.iceberg.actions.DeleteOrphanFiles;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.iceberg.spark.actions.SparkActions;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Iceberg's own Spark runtime (iceberg-spark-runtime-4.1_2.13, Spark 4.1 {@code local[2]}) over
 * Iceberg's own REST catalog test server (a child JVM) with {@code io-impl} = {@link VendedFileIO}:
 * create, append, read, overwrite, expire snapshots and remove orphan files while the credentials
 * the vending layer mints live 6 s, asserting that the local S3 endpoint rejected none of the
 * requests signed with them.
 */
@Timeout(240)
class IcebergSparkRestTest {

    private static final Duration TTL = Duration.ofSeconds(6);
    private static final DateTimeFormatter SQL_TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("tables");

    private static Process restServer;
    private static VendingCatalog vending;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        restServer = RestCatalogServerMain.start(port, S3);
        vending = new VendingCatalog("http://127.0.0.1:" + port, S3, TTL);
        spark =
                SparkCatalogExample.configure(
                                SparkSession.builder()
                                        .appName("vended-storage-iceberg-test")
                                        .master("local[2]")
                                        .config("spark.ui.enabled", "false")
                                        .config("spark.driver.host", "127.0.0.1")
                                        .config("spark.driver.bindAddress", "127.0.0.1")
                                        .config("spark.sql.shuffle.partitions", "2")
                                        .config("spark.sql.session.timeZone", "UTC"),
                                vending.uri(),
                                S3.endpoint(),
                                S3.region())
                        .getOrCreate();
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) {
            spark.stop();
        }
        if (vending != null) {
            vending.close();
        }
        if (restServer != null) {
            restServer.getOutputStream().close();
            if (!restServer.waitFor(20, TimeUnit.SECONDS)) {
                restServer.destroyForcibly();
            }
        }
    }

    private static long count(String sql) {
        return spark.sql(sql).first().getLong(0);
    }

    /** Waits until the newest key the catalog vended has expired, so the next step needs a new one. */
    private static void letCredentialsExpire() throws InterruptedException {
        List<VendedCredentials> keys = vending.allKeys();
        Waits.sleepUntil(keys.get(keys.size() - 1).expiresAtMillis() + 200);
    }

    @Test
    void createAppendReadOverwriteExpireAndRemoveOrphansAcrossRotations() throws Exception {
        long started = System.currentTimeMillis();
        spark.sql("CREATE NAMESPACE IF NOT EXISTS cat.db");
        spark.sql("CREATE TABLE cat.db.t (id BIGINT, name STRING) USING iceberg");
        for (int round = 1; round <= 3; round++) {
            spark.range((round - 1) * 1000L, round * 1000L)
                    .selectExpr("id", "concat('n', CAST(id AS STRING)) AS name")
                    .repartition(2)
                    .writeTo("cat.db.t")
                    .append();
            assertThat(count("SELECT count(*) FROM cat.db.t")).isEqualTo(round * 1000L);
            letCredentialsExpire();
        }
        Row sums = spark.sql("SELECT sum(id), max(name) FROM cat.db.t WHERE id >= 2990").first();
        assertThat(sums.getLong(0)).isEqualTo(29_945L);
        assertThat(sums.getString(1)).isEqualTo("n2999");

        spark.sql("INSERT OVERWRITE cat.db.t SELECT id, name FROM cat.db.t WHERE id % 10 = 0");
        assertThat(count("SELECT count(*) FROM cat.db.t")).isEqualTo(300L);
        letCredentialsExpire();

        String now = SQL_TS.format(Instant.now().plusSeconds(1));
        Row expired =
                spark.sql("CALL cat.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '"
                                + now + "', retain_last => 1)")
                        .first();
        long deletedDataFiles = expired.getLong(expired.fieldIndex("deleted_data_files_count"));
        long deletedManifestLists = expired.getLong(expired.fieldIndex("deleted_manifest_lists_count"));
        assertThat(deletedDataFiles).isGreaterThanOrEqualTo(3);
        assertThat(deletedManifestLists).isGreaterThanOrEqualTo(3);
        assertThat(count("SELECT count(*) FROM cat.db.t")).isEqualTo(300L);
        letCredentialsExpire();

        String orphan = S3.uri("wh/db/t/data/orphan-0.parquet");
        try (VendedFileIO root = new VendedFileIO()) {
            Map<String, String> props = new HashMap<>();
            props.put("s3.endpoint", S3.endpoint());
            props.put("client.region", S3.region());
            S3.storageOptions().forEach((k, v) -> props.put(VendedFileIO.OPTION_PREFIX + k, v));
            root.initialize(props);
            try (var out = root.newOutputFile(orphan).create()) {
                out.write(new byte[] {1, 2, 3});
            }
            // The remove_orphan_files procedure refuses an interval under 24 hours; its action
            // takes any (nothing else writes to this table).
            Table table = Spark3Util.loadIcebergTable(spark, "cat.db.t");
            assertThat(table.io()).isInstanceOf(VendedFileIO.class);
            DeleteOrphanFiles.Result removed =
                    SparkActions.get(spark)
                            .deleteOrphanFiles(table)
                            .olderThan(System.currentTimeMillis() + 60_000)
                            .usePrefixListing(true)
                            .execute();
            List<String> locations = new ArrayList<>();
            removed.orphanFileLocations().forEach(locations::add);
            assertThat(locations).containsExactly(orphan);
            assertThat(root.newInputFile(orphan).exists()).isFalse();
        }
        assertThat(count("SELECT count(*) FROM cat.db.t")).isEqualTo(300L);
        assertThat(count("SELECT count(*) FROM cat.db.t WHERE name = 'n2990'")).isEqualTo(1L);

        long seconds = (System.currentTimeMillis() - started) / 1000;
        long rejected = 0;
        long accepted = 0;
        for (VendedCredentials key : vending.allKeys()) {
            KeyStats s = S3.stats(key.accessKeyId());
            rejected += s.rejected();
            accepted += s.accepted();
        }
        System.out.printf(
                "Iceberg on Spark through VendedFileIO: %d s, %d keys from loadTable/create answers,"
                        + " %d refresh calls (loadCredentials), %d requests signed with vended keys, %d rejected%n",
                seconds, vending.tableAnswers.size(), vending.refreshes.size(), accepted, rejected);
        assertThat(vending.failures.get()).isZero();
        assertThat(rejected).isZero();
        assertThat(accepted).isPositive();
        assertThat(vending.refreshes.size() + vending.tableAnswers.size()).isGreaterThanOrEqualTo(5);
    }
}
