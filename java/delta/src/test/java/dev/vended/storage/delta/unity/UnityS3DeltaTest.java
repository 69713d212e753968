package dev.vended.storage.delta.unity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Delta on Spark ({@code local[2]}) with tables located by a Unity Catalog only: each table is
 * configured by {@code vended.storage.table.<name>.unity.*} (the catalog's URI, the table's full
 * name, the file holding the bearer token), plus the endpoint and region every table shares
 * ({@code vended.storage.options.*}); no location, no provider class, no credential in any
 * configuration. The catalog is scripted as the Unity Catalog REST API answers and vends 3 s keys
 * of the local S3 endpoint, read-only ones for {@code READ}.
 *
 * <p>A writing job and a reading job are two sessions of one Spark context, each with its own
 * table keys (set on the session; Hadoop's FileSystem cache is off so that each session's
 * FileSystem reads its session's keys), as two applications would have them.
 */
@Timeout(120)
class UnityS3DeltaTest {

    private static final String BUCKET = "unitydelta";
    private static final String TOKEN = "uc-bearer-token-0123456789";
    private static final long TTL_MS = 3_000;
    private static final long LEAD_MS = 1_500;
    private static final int ROWS = 50;

    private static LocalS3Server s3;
    private static ScriptedUnityCatalog catalog;
    private static Path tokenFile;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        s3 = LocalS3Server.start(BUCKET);
        catalog = new ScriptedUnityCatalog(s3, TOKEN, TTL_MS);
        catalog.table("main.sales.orders", "11111111-0000-4000-8000-000000000001", BUCKET, "uc/orders");
        catalog.table("main.sales.events", "11111111-0000-4000-8000-000000000002", BUCKET, "uc/events");
        tokenFile = Files.createTempFile("uc-token", ".txt");
        Files.writeString(tokenFile, TOKEN + "\n");
        String shared = "spark.hadoop." + VendedFileSystem.SHARED_OPTIONS_KEY + ".";
        spark =
                DeltaSessions.builder("vended-storage-delta-unity-s3-test", "s3a")
                        .config("spark.hadoop.fs.s3a.impl.disable.cache", "true")
                        // No checkpoint (by default every 10 commits, seconds each) in the loop.
                        .config(
                                "spark.databricks.delta.properties.defaults.checkpointInterval",
                                "100")
                        .config(shared + "aws_endpoint", s3.endpoint())
                        .config(shared + "aws_region", "us-east-1")
                        .config(shared + "aws_allow_http", "true")
                        .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @AfterAll
    static void stop() throws IOException {
        if (spark != null) {
            spark.stop();
        }
        if (catalog != null) {
            catalog.close();
        }
        if (s3 != null) {
            s3.close();
        }
        if (tokenFile != null) {
            Files.deleteIfExists(tokenFile);
        }
    }

    /** A session whose table {@code name} is the Unity table {@code fullName}, nothing else. */
    private static SparkSession session(String name, String fullName, String access) {
        SparkSession s = spark.newSession();
        String t = "vended.storage.table." + name + ".";
        s.conf().set(t + "unity.uri", catalog.uri());
        s.conf().set(t + "unity.table", fullName);
        s.conf().set(t + "unity.token-file", tokenFile.toString());
        s.conf().set(t + "lead-time", LEAD_MS + "ms");
        if (access != null) {
            s.conf().set(t + "access", access);
        }
        return s;
    }

    private static void append(SparkSession s, String path, int batch) {
        s.range((long) batch * ROWS, (long) (batch + 1) * ROWS)
                .selectExpr("id", "CAST(id % 7 AS INT) AS k")
                .coalesce(1)
                .write()
                .format("delta")
                .mode("append")
                .save(path);
    }

    /** The write requests (PUT, POST, DELETE) the endpoint has answered in the bucket. */
    private static long writes() throws IOException {
        Set<String> methods = Set.of("PUT", "POST", "DELETE");
        return s3.requests().stream()
                .filter(r -> BUCKET.equals(r.bucket()) && methods.contains(r.method()))
                .count();
    }

    /** Every entry of the Spark configuration, {@code s}'s session one and the Hadoop one. */
    private static String allConfiguration(SparkSession s) {
        StringBuilder b = new StringBuilder();
        for (Tuple2<String, String> e : s.sparkContext().getConf().getAll()) {
            b.append(e._1()).append('=').append(e._2()).append('\n');
        }
        CollectionConverters.asJava(s.conf().getAll())
                .forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        for (Map.Entry<String, String> e : s.sparkContext().hadoopConfiguration()) {
            b.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        }
        return b.toString();
    }

    @Test
    void aDeltaTableLocatedByUnityCatalogIsWrittenAndReadAcrossKeyRotations() throws Exception {
        String id = "11111111-0000-4000-8000-000000000001";
        String path = "s3a://" + BUCKET + "/uc/orders";
        SparkSession writer = session("orders", "main.sales.orders", null);
        long start = System.currentTimeMillis();
        append(writer, path, 0); // creates the table; warms Spark and Delta up
        int batches = 1;
        long keysAfterFirst = catalog.vendedFor(id, "READ_WRITE");
        // Appends until two more keys have served (two rotations while committing), bounded.
        while (batches < 3
                || (catalog.vendedFor(id, "READ_WRITE") < keysAfterFirst + 2
                        && batches < 40
                        && System.currentTimeMillis() - start < 30_000)) {
            append(writer, path, batches++);
        }
        long elapsed = System.currentTimeMillis() - start;
        Row read = writer.read().format("delta").load(path).selectExpr("count(*)", "sum(id)").first();
        long n = (long) batches * ROWS;
        assertThat(read.getLong(0)).isEqualTo(n);
        assertThat(read.getLong(1)).isEqualTo(n * (n - 1) / 2);
        assertThat(
                        writer.sql("DESCRIBE HISTORY delta.`" + path + "`")
                                .selectExpr("max(version)")
                                .first()
                                .getLong(0))
                .isEqualTo(batches - 1);

        long keys = catalog.vendedFor(id, "READ_WRITE");
        System.out.printf(
                "unity s3: %d commits in %d ms, %d getTable, %d READ_WRITE keys (%d ms keys)%n",
                batches, elapsed, catalog.tableCalls.get(), keys, TTL_MS);
        assertThat(keys - keysAfterFirst).as("rotations while committing").isGreaterThanOrEqualTo(2);
        // Rejections first: a rejected key is refetched at once, so they would also show as keys.
        assertThat(catalog.refused.get()).isZero();
        for (Map.Entry<String, KeyStats> e : s3.stats().entrySet()) {
            assertThat(e.getValue().rejected()).as("key %s: %s", e.getKey(), e.getValue()).isZero();
        }
        assertThat(keys)
                .as("about one key per lifetime over %d ms", elapsed)
                .isLessThanOrEqualTo(elapsed / (TTL_MS - LEAD_MS - LEAD_MS / 2) + 2);
        assertThat(catalog.vendedFor(id, "READ")).as("no READ keys for a read-write table").isZero();
        String conf = allConfiguration(writer);
        assertThat(conf).contains("unity.token-file").doesNotContain(TOKEN);
        for (ScriptedUnityCatalog.Vended v : catalog.vended) {
            assertThat(conf).doesNotContain(v.accessKeyId());
        }
    }

    @Test
    void aReadTableOnTheSameUnityTableReadsAndRefusesADeltaWriteBeforeAnyRequest()
            throws Exception {
        String id = "11111111-0000-4000-8000-000000000002";
        String path = "s3a://" + BUCKET + "/uc/events";
        append(session("events", "main.sales.events", null), path, 0);
        long readKeysBefore = catalog.vendedFor(id, "READ");

        SparkSession reader = session("eventsread", "main.sales.events", "read");
        assertThat(reader.read().format("delta").load(path).count()).isEqualTo(ROWS);
        long writesBefore = writes();
        assertThatThrownBy(() -> append(reader, path, 1))
                .hasStackTraceContaining("the table was opened for reading");
        assertThat(writes() - writesBefore).as("write requests at the endpoint").isZero();
        assertThat(reader.read().format("delta").load(path).count()).isEqualTo(ROWS);

        assertThat(catalog.vendedFor(id, "READ") - readKeysBefore)
                .as("the read table's keys are READ keys")
                .isPositive();
        List<String> readKeys =
                catalog.vended.stream()
                        .filter(v -> v.tableId().equals(id) && v.operation().equals("READ"))
                        .map(ScriptedUnityCatalog.Vended::accessKeyId)
                        .toList();
        for (String key : readKeys) {
            KeyStats k = s3.stats(key);
            assertThat(k.rejected()).as("READ key %s: %s", key, k).isZero();
        }
        assertThat(allConfiguration(reader)).doesNotContain(TOKEN);
    }
}
