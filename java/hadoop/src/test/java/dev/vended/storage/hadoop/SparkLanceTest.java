package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;
import dev.vended.storage.testkit.EmulatorProxy;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LanceNamespaceServer;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.SparkStatusTracker;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 14, test 3: tables opened <b>by name</b> through the real Lance Namespace server (pylance
 * {@code RestAdapter}, vending credentials whose {@code expires_at_millis} is 4 s after each
 * describe, and no endpoint or region: C10) inside a real Spark {@code local[4]} job, both ways:
 *
 * <ul>
 *   <li>the FileSystem configured with {@code vended.storage.table.o.lance.*} keys (no
 *       location: the catalog gives it; bearer token from {@code lance.token-file});
 *   <li>a {@link VendedTable#lance} handle built on the driver and opened in every task.
 * </ul>
 *
 * Describe requests are counted at the server, by a counting proxy in front of it that also
 * accepts only the bearer token it issued: one describe on the driver, then about one per
 * credential window in the (one) JVM, never one per task.
 */
class SparkLanceTest {

    // Short names (tables d.o and d.e at the bucket's root, no partition directories, no codec
    // suffix): the local endpoint keeps per-object metadata in a file named after the base64 of
    // bucket and key, so keys above ~160 bytes fail there with 500 (ENAMETOOLONG), and Spark's
    // task-attempt paths alone take ~150.
    private static final String BUCKET = "lnb";
    private static final long WINDOW_MS = 4_000;
    private static final long LEAD_MS = 1_000;

    private static LocalS3Server s3;
    private static LanceNamespaceServer lance;
    private static EmulatorProxy proxy;
    private static String token;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        Path python = LanceNamespaceServer.python();
        Assumptions.assumeTrue(
                python != null,
                "SKIPPED: no Python with pylance (set VENDED_STORAGE_PYTHON, or create ../.venv)");
        s3 = LocalS3Server.start(BUCKET);
        VendedCredentials vended = s3.issueCredentials(3_600_000L, BUCKET + "/");
        lance =
                LanceNamespaceServer.builder(python, "s3://" + BUCKET)
                        .s3(s3.endpoint(), vended)
                        .refreshIntervalMillis(WINDOW_MS)
                        .table("d.o")
                        .declare("d.e")
                        .start();
        EmulatorProxy.Tokens tokens = new EmulatorProxy.Tokens();
        token = tokens.issue(System.currentTimeMillis() + 600_000L);
        proxy = new EmulatorProxy(lance.url(), tokens);
        Path tokenFile = Files.createTempFile("lance-token", ".txt");
        tokenFile.toFile().deleteOnExit();
        Files.writeString(tokenFile, token + "\n");

        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        String p = "spark.hadoop.vended.storage.table.o.";
        spark =
                SparkSession.builder()
                        .appName("vended-storage-lance-test")
                        .master("local[4]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.sql.shuffle.partitions", "4")
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config(p + "lance.endpoint", proxy.url)
                        .config(p + "lance.table-id", "d$o")
                        .config(p + "lance.token-file", tokenFile.toString())
                        .config(p + "lead-time", LEAD_MS + "ms")
                        // The client's own endpoint and region: the catalog vends neither (C10).
                        .config(p + "options.aws_endpoint", s3.endpoint())
                        .config(p + "options.aws_region", "us-east-1")
                        .config(p + "options.aws_allow_http", "true")
                        .getOrCreate();
    }

    @AfterAll
    static void stop() throws IOException {
        if (spark != null) {
            spark.stop();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (lance != null) {
            lance.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    /** Describe requests for {@code table} the proxy forwarded so far. */
    private static int describes(String table) {
        synchronized (proxy.log) {
            return (int)
                    proxy.log.stream()
                            .filter(l -> l.startsWith("POST ") && l.endsWith("/describe"))
                            .filter(l -> l.replace("%24", "$").contains("/" + table + "/"))
                            .count();
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

    /** The table's location, asked of the server directly (not through the counting proxy). */
    private static String locationOf(String... id) throws Exception {
        return LanceNamespaceStorageOptionsProvider.builder(lance.url(), id)
                .build()
                .describeTable()
                .uri();
    }

    private static void assertNothingRejected() throws IOException {
        assertEquals(0, proxy.rejections(), "the catalog refused a request: " + proxy.log);
        for (Map.Entry<String, KeyStats> e : s3.stats().entrySet()) {
            assertEquals(0, e.getValue().rejected(), "key " + e.getKey() + ": " + e.getValue());
        }
    }

    /** At most one describe per credential window (lifetime minus lead), plus slack. */
    private static long perWindowBound(long elapsedMillis) {
        return 1 + elapsedMillis / (WINDOW_MS - LEAD_MS) + 3;
    }

    @Test
    @Timeout(300)
    void fileSystemTableByLanceNameDescribesOnceOnDriverThenPerWindow() throws Exception {
        String location = locationOf("d", "o").replaceFirst("^s3://", "s3a://");
        assertEquals(0, describes("d$o"));
        FileSystem fs =
                FileSystem.get(
                        URI.create("s3a://" + BUCKET + "/"),
                        spark.sparkContext().hadoopConfiguration());
        assertTrue(fs instanceof VendedFileSystem, fs.getClass().getName());
        assertEquals(0, describes("d$o"), "initialize calls no catalog");
        assertEquals(
                "o", ((VendedFileSystem) fs).tableOf(new org.apache.hadoop.fs.Path(location)));
        assertEquals(1, describes("d$o"), "one describe on the driver locates and seeds the table");

        // The catalog's own Lance files, read back by a Spark job through the FileSystem.
        long listedBytes = 0;
        int listed = 0;
        RemoteIterator<LocatedFileStatus> it =
                fs.listFiles(new org.apache.hadoop.fs.Path(location), true);
        while (it.hasNext()) {
            LocatedFileStatus f = it.next();
            if (f.getPath().getName().endsWith(".lance")) {
                listed++;
                listedBytes += f.getLen();
            }
        }
        assertTrue(listed >= 1, "the server's table has data files under " + location);

        spark.sparkContext().setJobGroup("lance-fs", "files of a Lance-catalogued table", false);
        Row files =
                spark.read()
                        .format("binaryFile")
                        .option("pathGlobFilter", "*.lance")
                        .option("recursiveFileLookup", "true")
                        .load(location)
                        .selectExpr("count(*)", "sum(length(content))")
                        .first();
        assertEquals(listed, files.getLong(0));
        assertEquals(listedBytes, files.getLong(1));

        long rows = 8_000;
        long start = System.currentTimeMillis();
        int rounds = 0;
        while (rounds < 2 || (System.currentTimeMillis() - start < 12_000 && rounds < 20)) {
            String path = location + "/" + rounds;
            spark.range(0, rows)
                    .selectExpr("id", "id % 4 AS p", "id * 3 AS v")
                    .repartition(4)
                    .write()
                    .option("compression", "none")
                    .mode(SaveMode.Overwrite)
                    .parquet(path);
            Dataset<Row> back = spark.read().parquet(path);
            Row r = back.selectExpr("count(*)", "sum(v)", "count(DISTINCT p)").first();
            assertEquals(rows, r.getLong(0), path);
            assertEquals(3 * rows * (rows - 1) / 2, r.getLong(1), path);
            assertEquals(4, r.getLong(2), path);
            rounds++;
        }
        long elapsed = System.currentTimeMillis() - start;
        spark.sparkContext().clearJobGroup();

        int describes = describes("d$o");
        int tasks = tasksOf("lance-fs");
        System.out.printf(
                "lance-fs: %d rounds in %d ms, %d tasks, %d describes (1 on the driver; %d ms"
                        + " credentials, lead %d ms)%n",
                rounds, elapsed, tasks, describes, WINDOW_MS, LEAD_MS);
        assertNothingRejected();
        assertTrue(describes >= 3, "4 s credentials over " + elapsed + " ms: " + describes);
        assertTrue(
                describes <= perWindowBound(elapsed),
                describes + " describes in " + elapsed + " ms");
        assertTrue(describes * 3 < tasks, describes + " describes for " + tasks + " tasks");
    }

    /** One task: writes a value through the table's store and reads it back. */
    private static long writeAndRead(VendedTable table, String key, long value) throws IOException {
        try (ObjectStore store = table.open()) {
            store.put(key, ByteBuffer.allocate(8).putLong(value).array());
            return ByteBuffer.wrap(store.get(key)).getLong();
        }
    }

    private static long readValue(VendedTable table, String key) throws IOException {
        try (ObjectStore store = table.open()) {
            return ByteBuffer.wrap(store.get(key)).getLong();
        }
    }

    @Test
    @Timeout(300)
    void vendedTableLanceHandleDescribesOnceOnDriverThenPerWindowNotPerTask() throws Exception {
        LanceNamespaceStorageOptionsProvider spec =
                LanceNamespaceStorageOptionsProvider.builder(proxy.url, "d", "e")
                        .bearerToken(token)
                        .build();
        assertEquals(0, describes("d$e"));
        VendedTable table =
                VendedTable.lance(spec, s3.endpointOptions(), Duration.ofMillis(LEAD_MS));
        assertEquals(1, describes("d$e"), "VendedTable.lance is one describe on the driver");
        assertTrue(table.location().endsWith("d$e"), table.location());
        assertFalse(table.toString().contains(token), "no token in toString");

        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        spark.sparkContext().setJobGroup("lance-table", "tasks opening a VendedTable", false);
        int perRound = 40;
        long expected = 0;
        long written = 0;
        long start = System.currentTimeMillis();
        int rounds = 0;
        while (rounds < 2 || (System.currentTimeMillis() - start < 10_000 && rounds < 100)) {
            final int round = rounds;
            List<Long> values =
                    IntStream.range(0, perRound).mapToObj(i -> round * 1000L + i).toList();
            written +=
                    jsc.parallelize(values, perRound)
                            .map(v -> writeAndRead(table, "r" + round + "/" + v, v))
                            .reduce(Long::sum);
            expected += values.stream().mapToLong(Long::longValue).sum();
            rounds++;
        }
        assertEquals(expected, written);
        // Everything again, read by 4 tasks.
        List<String> keys =
                IntStream.range(0, rounds)
                        .boxed()
                        .flatMap(
                                r ->
                                        IntStream.range(0, perRound)
                                                .mapToObj(i -> "r" + r + "/" + (r * 1000L + i)))
                        .toList();
        long reread = jsc.parallelize(keys, 4).map(k -> readValue(table, k)).reduce(Long::sum);
        long elapsed = System.currentTimeMillis() - start;
        spark.sparkContext().clearJobGroup();
        assertEquals(expected, reread);

        int describes = describes("d$e");
        int tasks = tasksOf("lance-table");
        System.out.printf(
                "lance-table: %d rounds in %d ms, %d tasks, %d objects, %d describes (1 on the"
                        + " driver)%n",
                rounds, elapsed, tasks, keys.size(), describes);
        assertNothingRejected();
        assertEquals(rounds * perRound + 4, tasks);
        assertTrue(describes >= 3, "4 s credentials over " + elapsed + " ms: " + describes);
        assertTrue(
                describes <= perWindowBound(elapsed),
                describes + " describes in " + elapsed + " ms");
        assertTrue(describes * 5 < tasks, describes + " describes for " + tasks + " tasks");
    }
}
