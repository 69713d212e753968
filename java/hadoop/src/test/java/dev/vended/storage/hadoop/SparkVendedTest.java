package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import org.apache.spark.SparkStatusTracker;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real Spark ({@code spark-sql_2.13} 4.2.0, {@code local[4]}) reading and writing Parquet
 * through {@link VendedFileSystem} as {@code s3a://}, against the local endpoint that rejects
 * expired and out-of-scope credentials.
 */
class SparkVendedTest {

    // Short names, from when the local endpoint refused keys above ~165 bytes (s3s-fs named a
    // file after the key); it now stores every key S3 accepts (case C26), so they are only short.
    private static final String STS_BUCKET = "sts";
    private static final String SHARED_BUCKET = "two";

    private static LocalS3Server server;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(STS_BUCKET);
        server.createBucket(SHARED_BUCKET);
        TestTableProvider.server = server;
        SparkSession.Builder b =
                SparkSession.builder()
                        .appName("vended-storage-hadoop-test")
                        .master("local[4]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.sql.shuffle.partitions", "4")
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName());
        // t1: STS credentials of 3 s for the whole bucket.
        table(b, "t1", "s3a://" + STS_BUCKET + "/t/");
        b.config("spark.hadoop.test.vended.t1.mode", "sts");
        b.config("spark.hadoop.test.vended.t1.ttl-ms", "3000");
        // ta, tb: one bucket, keys scoped to each table's prefix (C13), 10 s.
        for (String t : List.of("a", "b")) {
            table(b, "t" + t, "s3a://" + SHARED_BUCKET + "/" + t + "/");
            b.config("spark.hadoop.test.vended.t" + t + ".scope", SHARED_BUCKET + "/" + t + "/");
            b.config("spark.hadoop.test.vended.t" + t + ".ttl-ms", "10000");
        }
        spark = b.getOrCreate();
    }

    private static void table(SparkSession.Builder b, String name, String location) {
        String p = "spark.hadoop.vended.storage.table." + name + ".";
        b.config(p + "location", location);
        b.config(p + "provider.class", TestTableProvider.class.getName());
        b.config(p + "options.aws_endpoint", server.endpoint());
        b.config(p + "options.aws_region", "us-east-1");
        b.config(p + "options.aws_allow_http", "true");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Tasks of the jobs of a job group (from Spark's status tracker). */
    private static int tasksOf(String group) {
        SparkStatusTracker tracker = spark.sparkContext().statusTracker();
        int tasks = 0;
        for (int job : tracker.getJobIdsForGroup(group)) {
            var info = tracker.getJobInfo(job);
            if (info.isDefined()) {
                for (int stage : info.get().stageIds()) {
                    var s = tracker.getStageInfo(stage);
                    if (s.isDefined()) {
                        tasks += s.get().numTasks();
                    }
                }
            }
        }
        return tasks;
    }

    private static void assertNothingRejected() throws IOException {
        for (Map.Entry<String, KeyStats> e : server.stats().entrySet()) {
            assertEquals(0, e.getValue().rejected(), "key " + e.getKey() + ": " + e.getValue());
        }
    }

    @Test
    void c14_partitionedParquetAcrossThreeSecondStsCredentials() throws Exception {
        spark.sparkContext().setJobGroup("c14", "parquet round trips", false);
        long rows = 24_000;
        long start = System.currentTimeMillis();
        for (int round = 0; round < 2; round++) {
            String path = "s3a://" + STS_BUCKET + "/t/" + round;
            spark.range(0, rows)
                    .selectExpr("id", "id % 8 AS p", "id * 2 AS v")
                    .repartition(4)
                    .write()
                    .partitionBy("p")
                    .mode(SaveMode.Overwrite)
                    .parquet(path);
            Dataset<Row> back = spark.read().parquet(path);
            Row r = back.selectExpr("count(*)", "sum(v)", "count(DISTINCT p)").first();
            assertEquals(rows, r.getLong(0), path);
            assertEquals(rows * (rows - 1), r.getLong(1), path);
            assertEquals(8, r.getLong(2), path);
            assertEquals(rows / 8, back.where("p = 3").count(), path);
        }
        long elapsed = System.currentTimeMillis() - start;
        spark.sparkContext().clearJobGroup();

        int calls = TestTableProvider.calls("t1");
        int tasks = tasksOf("c14");
        System.out.printf(
                "c14: %d ms, %d tasks, %d provider calls (3 s STS credentials), %d keys%n",
                elapsed, tasks, calls, TestTableProvider.keys("t1").size());
        assertNothingRejected();
        assertTrue(calls >= 2, "3 s credentials over " + elapsed + " ms must have rotated: " + calls);
        // A refresh per credential window (lead = half of 3 s), never one per task or request.
        assertTrue(calls <= elapsed / 1000 + 4, calls + " calls in " + elapsed + " ms");
        assertTrue(calls * 2 < tasks, calls + " calls for " + tasks + " tasks");
        for (String k : TestTableProvider.keys("t1")) {
            assertEquals(0, server.stats(k).rejected(), k);
        }
    }

    @Test
    void c13_twoTablesInOneBucketJoinedEachRequestSignedByItsTable() throws Exception {
        String a = "s3a://" + SHARED_BUCKET + "/a/d";
        String b = "s3a://" + SHARED_BUCKET + "/b/d";
        spark.range(0, 1000).selectExpr("id", "concat('a', id) AS name").repartition(2)
                .write().mode(SaveMode.Overwrite).parquet(a);
        spark.range(0, 1000, 2).selectExpr("id", "id * 3 AS val").repartition(2)
                .write().mode(SaveMode.Overwrite).parquet(b);
        Row r =
                spark.read().parquet(a).join(spark.read().parquet(b), "id")
                        .selectExpr("count(*)", "sum(val)", "count(DISTINCT name)")
                        .first();
        assertEquals(500, r.getLong(0));
        assertEquals(3L * 249_500L, r.getLong(1));
        assertEquals(500, r.getLong(2));

        Set<String> keysA = new HashSet<>(TestTableProvider.keys("ta"));
        Set<String> keysB = new HashSet<>(TestTableProvider.keys("tb"));
        assertFalse(keysA.isEmpty());
        assertFalse(keysB.isEmpty());
        List<Map<String, Object>> log =
                new ObjectMapper()
                        .readValue(
                                server.send("GET", "/_admin/requests", null, null),
                                new TypeReference<List<Map<String, Object>>>() {});
        int toA = 0;
        int toB = 0;
        List<String> wrong = new ArrayList<>();
        for (Map<String, Object> e : log) {
            if (!SHARED_BUCKET.equals(e.get("bucket"))) {
                continue;
            }
            String keyId = (String) e.get("access_key_id");
            String key = (String) e.get("key");
            if (!Boolean.TRUE.equals(e.get("accepted"))) {
                wrong.add("rejected: " + e);
            } else if (key != null && key.startsWith("a/")) {
                toA++;
                if (!keysA.contains(keyId)) {
                    wrong.add("a/ signed by a key not vended for ta: " + e);
                }
            } else if (key != null && key.startsWith("b/")) {
                toB++;
                if (!keysB.contains(keyId)) {
                    wrong.add("b/ signed by a key not vended for tb: " + e);
                }
            } else if (!keysA.contains(keyId) && !keysB.contains(keyId)) {
                wrong.add("signed by neither table's key: " + e);
            }
        }
        System.out.printf("c13: %d requests to a/, %d to b/, %d wrong%n", toA, toB, wrong.size());
        assertEquals(List.of(), wrong);
        assertTrue(toA > 10 && toB > 10, toA + " / " + toB);
        assertNothingRejected();
    }

    /** Reads the object through a deserialized handle, as an executor task does. */
    private static int readThrough(VendedTable table) throws IOException {
        try (ObjectStore store = table.open()) {
            return store.get("obj").length;
        }
    }

    @Test
    void c14_vendedTableSnapshotArrivingExpiredRefreshesOncePerJvm() throws Exception {
        String location = server.uri("v/");
        try (ObjectStore root = ObjectStore.open(location, server.rootOptions())) {
            root.put("obj", new byte[123]);
        }
        // Driver: one catalog call; the snapshot lives 1.5 s, later credentials 60 s.
        VendedTable expiring =
                VendedTable.of(
                        location,
                        new SerializableIssuer("expiring", server.endpoint(), 1_500, 60_000),
                        server.endpointOptions(),
                        null);
        assertEquals(1, SerializableIssuer.calls("expiring"));
        long wait = expiring.snapshotExpiresAtMillis() - System.currentTimeMillis() + 50;
        if (wait > 0) {
            Thread.sleep(wait); // the snapshot must really arrive expired
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Integer> tasks = IntStream.range(0, 200).boxed().toList();
        List<Integer> sizes = jsc.parallelize(tasks, 200).map(i -> readThrough(expiring)).collect();
        assertEquals(200, sizes.size());
        assertTrue(sizes.stream().allMatch(n -> n == 123), sizes.toString());
        assertEquals(2, SerializableIssuer.calls("expiring"), "one refresh in this JVM for 200 tasks");

        VendedTable fresh =
                VendedTable.of(
                        location,
                        new SerializableIssuer("fresh", server.endpoint(), 60_000, 60_000),
                        server.endpointOptions(),
                        null);
        List<Integer> again =
                jsc.parallelize(tasks.subList(0, 50), 50).map(i -> readThrough(fresh)).collect();
        assertTrue(again.stream().allMatch(n -> n == 123));
        assertEquals(1, SerializableIssuer.calls("fresh"), "a valid snapshot: no call on executors");
        assertNothingRejected();
    }
}
