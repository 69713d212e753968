package dev.vended.storage.delta.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static scala.jdk.javaapi.CollectionConverters.asJava;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.delta.spark.FileRecordingIssuer.Call;
import dev.vended.storage.hadoop.VendedAbstractFileSystem;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.delta.DeltaLog;
import org.apache.spark.sql.delta.DeltaLog$;
import org.apache.spark.sql.delta.Snapshot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import scala.Option;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Delta Lake ({@code delta-spark_4.1_2.13} 4.4.0) on {@link VendedFileSystem} ({@code s3a://})
 * with executors in their own JVMs ({@code local-cluster[2,1,1024]}) and 4 s vended credentials:
 * create, append, overwrite, {@code MERGE}, {@code DELETE}, {@code OPTIMIZE}, time travel ({@code
 * VERSION AS OF}, {@code TIMESTAMP AS OF}), {@code VACUUM RETAIN 0 HOURS} and checkpoints every 5
 * commits (read back through {@code _last_checkpoint}) give the right rows; the endpoint rejects
 * no request; each JVM calls the provider about once per credential lifetime (it is built from the
 * Hadoop configuration in each JVM, {@link FileRecordingIssuer}); and after more than ten rotations
 * Delta's {@code DeltaLog} cache, keyed by (path, file-system options), holds one {@code DeltaLog}
 * for the table, the same instance throughout, with no credential in its key, its options or its
 * Hadoop configuration.
 *
 * <p>Spark launches local-cluster executors with the jars of {@code $SPARK_HOME/jars}; the test
 * links this module's test class path there (under {@code target/}, as {@code
 * IcebergSparkClusterTest}), and surefire sets {@code SPARK_HOME}.
 */
@Timeout(300)
class DeltaSparkClusterTest {

    private static final String BUCKET = "deltacl";
    private static final String NAME = "dc";
    private static final String TABLE = "s3a://" + BUCKET + "/t/events";
    private static final String T = "delta.`" + TABLE + "`";
    private static final long TTL_MS = 4_000;
    private static final long LEAD_MS = 1_000;

    private static LocalS3Server server;
    private static SparkSession spark;
    private static java.nio.file.Path callsFile;
    private static long started;
    private static final AtomicLong TASKS = new AtomicLong();

    @BeforeAll
    static void start() throws Exception {
        sparkHomeJars();
        server = LocalS3Server.start(BUCKET);
        callsFile = Files.createTempFile(Paths.get("target"), "delta-cluster-calls-", ".txt");
        // Class directories go to the executors' extra class path; the jars are in $SPARK_HOME/jars.
        List<String> dirs = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (Files.isDirectory(Paths.get(entry))) {
                dirs.add(Paths.get(entry).toAbsolutePath().toString());
            }
        }
        String t = "spark.hadoop.vended.storage.table." + NAME + ".";
        started = System.currentTimeMillis();
        spark =
                SparkSession.builder()
                        .appName("vended-storage-delta-cluster-test")
                        .master("local-cluster[2,1,1024]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.driver.host", "127.0.0.1")
                        .config("spark.driver.bindAddress", "127.0.0.1")
                        .config("spark.executor.extraClassPath", String.join(File.pathSeparator, dirs))
                        .config("spark.executor.extraJavaOptions", "--enable-native-access=ALL-UNNAMED")
                        .config("spark.sql.shuffle.partitions", "4")
                        .config("spark.sql.session.timeZone", "UTC")
                        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                        .config(
                                "spark.sql.catalog.spark_catalog",
                                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                        .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
                        // Few tasks for a small table on two one-core executors: Delta's state
                        // reconstruction (default 50 partitions) and VACUUM's listing (10 000).
                        .config("spark.databricks.delta.snapshotPartitions", "2")
                        .config("spark.sql.sources.parallelPartitionDiscovery.parallelism", "2")
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config(
                                "spark.hadoop.fs.AbstractFileSystem.s3a.impl",
                                VendedAbstractFileSystem.class.getName())
                        .config(t + "location", "s3a://" + BUCKET + "/t/")
                        .config(t + "provider.class", FileRecordingIssuer.class.getName())
                        .config(t + "provider.conf.endpoint-url", server.endpoint())
                        .config(t + "provider.conf.ttl-ms", Long.toString(TTL_MS))
                        .config(t + "provider.conf.scope", BUCKET + "/t/")
                        .config(t + "provider.conf.calls-file", callsFile.toAbsolutePath().toString())
                        .config(t + "options.aws_endpoint", server.endpoint())
                        .config(t + "options.aws_region", "us-east-1")
                        .config(t + "options.aws_allow_http", "true")
                        .config(t + "lead-time", LEAD_MS + "ms")
                        .getOrCreate();
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onTaskEnd(SparkListenerTaskEnd taskEnd) {
                                TASKS.incrementAndGet();
                            }
                        });
    }

    /** {@code $SPARK_HOME/jars}: links to the jars of this JVM's class path. */
    private static void sparkHomeJars() throws IOException {
        java.nio.file.Path jars = Paths.get(System.getenv("SPARK_HOME"), "jars");
        Files.createDirectories(jars);
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            java.nio.file.Path p = Paths.get(entry);
            if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
                java.nio.file.Path link = jars.resolve(p.getFileName());
                if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(link, p.toAbsolutePath());
                }
            }
        }
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

    /** {@code count(*)} and {@code sum(v)} of a query's rows. */
    private static long[] countSum(String from) {
        Row r = spark.sql("SELECT count(*), coalesce(sum(v), 0) FROM " + from).first();
        return new long[] {r.getLong(0), r.getLong(1)};
    }

    private static long v(long id) {
        return spark.sql("SELECT v FROM " + T + " WHERE id = " + id).first().getLong(0);
    }

    /** Rows [from, to) with {@code v = id * factor}, 4 tasks. */
    private static void write(long from, long to, long factor, String mode) {
        spark.range(from, to, 1, 4)
                .selectExpr("id", "id * " + factor + " AS v")
                .write()
                .format("delta")
                .mode(mode)
                .save(TABLE);
    }

    private static long sum(long from, long to) {
        return (to - 1 + from) * (to - from) / 2;
    }

    /** Data files under the table (not its log). */
    private static int dataFiles(FileSystem fs) throws IOException {
        int n = 0;
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(new Path(TABLE), true);
        while (it.hasNext()) {
            Path p = it.next().getPath();
            if (p.getName().endsWith(".parquet") && !p.toString().contains("/_delta_log/")) {
                n++;
            }
        }
        return n;
    }

    /** Prints how long the test has run at a step (to see where time goes on a loaded machine). */
    private static void step(String name) {
        long ms = System.currentTimeMillis() - started;
        System.out.printf("delta cluster: %s at %d ms, %d tasks%n", name, ms, TASKS.get());
    }

    private static Path checkpointFile(long version) {
        return new Path(String.format("%s/_delta_log/%020d.checkpoint.parquet", TABLE, version));
    }

    /** The table's latest snapshot, read from storage. */
    private static Snapshot snapshot(DeltaLog log) {
        return log.update(false, Option.empty(), Option.empty());
    }

    private static long driverCalls() throws IOException {
        long pid = ProcessHandle.current().pid();
        return FileRecordingIssuer.read(callsFile).stream().filter(c -> c.pid() == pid).count();
    }

    @Test
    void deltaOperationsOnExecutorJvmsAcrossTenRotationsKeepOneDeltaLogAndNoCredentialInIt()
            throws Exception {
        FileSystem fs = new Path(TABLE).getFileSystem(spark.sparkContext().hadoopConfiguration());
        assertThat(fs).isInstanceOf(VendedFileSystem.class);
        Set<DeltaLog> logs = Collections.newSetFromMap(new IdentityHashMap<>());
        step("session");

        // v0 create, v1-v2 append, v3 overwrite.
        spark.sql(
                "CREATE TABLE " + T + " (id BIGINT, v BIGINT) USING delta"
                        + " TBLPROPERTIES ('delta.checkpointInterval' = '5')");
        logs.add(DeltaLog.forTable(spark, TABLE));
        write(0, 1000, 2, "append");
        write(1000, 2000, 2, "append");
        assertThat(countSum(T)).containsExactly(2000, 2 * sum(0, 2000));
        write(0, 1500, 1, "overwrite");
        assertThat(countSum(T)).containsExactly(1500, sum(0, 1500));

        step("append, overwrite");

        // v4 MERGE: ids 1000-1499 updated to -1, 1500-1999 inserted with -1.
        spark.range(1000, 2000, 1, 4).selectExpr("id", "-1L AS v").createOrReplaceTempView("src");
        spark.sql(
                "MERGE INTO " + T + " AS t USING src AS s ON t.id = s.id"
                        + " WHEN MATCHED THEN UPDATE SET v = s.v"
                        + " WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)");
        assertThat(countSum(T)).containsExactly(2000, sum(0, 1000) - 1000);
        assertThat(v(17)).isEqualTo(17);
        assertThat(v(1234)).isEqualTo(-1);
        assertThat(v(1999)).isEqualTo(-1);

        step("merge");

        // v5 DELETE (ids divisible by 10): 1800 rows left; the first checkpoint (interval 5).
        spark.sql("DELETE FROM " + T + " WHERE id % 10 = 0");
        long afterDelete = sum(0, 1000) - 10 * sum(0, 100) - 900;
        assertThat(countSum(T)).containsExactly(1800, afterDelete);
        assertThat(countSum(T + " WHERE id % 10 = 0")[0]).isZero();
        assertThat(fs.exists(checkpointFile(5))).isTrue();

        step("delete");

        // v6 OPTIMIZE: the small files become one.
        int filesBeforeOptimize = dataFiles(fs);
        Row metrics = spark.sql("OPTIMIZE " + T).first().getStruct(1);
        assertThat((long) metrics.<Long>getAs("numFilesAdded")).isEqualTo(1);
        assertThat((long) metrics.<Long>getAs("numFilesRemoved")).isGreaterThan(1);
        assertThat(spark.sql("DESCRIBE DETAIL " + T).first().<Long>getAs("numFiles")).isEqualTo(1);
        assertThat(countSum(T)).containsExactly(1800, afterDelete);

        step("optimize");

        // Time travel, by version and by the commit timestamps of DESCRIBE HISTORY.
        Map<Long, String> history = new TreeMap<>();
        DateTimeFormatter utc =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
        for (Row h : spark.sql("DESCRIBE HISTORY " + T).collectAsList()) {
            Instant at = h.<java.sql.Timestamp>getAs("timestamp").toInstant();
            history.put(h.<Long>getAs("version"), h.<String>getAs("operation") + "@" + utc.format(at));
        }
        assertThat(history.values().stream().map(s -> s.substring(0, s.indexOf('@'))))
                .containsExactly(
                        "CREATE TABLE", "WRITE", "WRITE", "WRITE", "MERGE", "DELETE", "OPTIMIZE");
        assertThat(countSum(T + " VERSION AS OF 2")).containsExactly(2000, 2 * sum(0, 2000));
        assertThat(countSum(T + " VERSION AS OF 3")).containsExactly(1500, sum(0, 1500));
        assertThat(countSum(T + " VERSION AS OF 5")).containsExactly(1800, afterDelete);
        String v3 = history.get(3L).substring(history.get(3L).indexOf('@') + 1);
        assertThat(countSum(T + " TIMESTAMP AS OF '" + v3 + "'")).containsExactly(1500, sum(0, 1500));
        String v4 = history.get(4L).substring(history.get(4L).indexOf('@') + 1);
        String atV4 = T + " TIMESTAMP AS OF '" + v4 + "'";
        assertThat(spark.sql("SELECT v FROM " + atV4 + " WHERE id = 1234").first().getLong(0))
                .isEqualTo(-1);

        step("time travel");

        // VACUUM RETAIN 0 HOURS: only the optimized file stays.
        spark.sql("VACUUM " + T + " RETAIN 0 HOURS");
        assertThat(filesBeforeOptimize).isGreaterThan(1);
        assertThat(dataFiles(fs)).isEqualTo(1);
        assertThat(countSum(T)).containsExactly(1800, afterDelete);

        step("vacuum");

        // Appends (100 rows each, read back each time) until the driver has used its eleventh
        // key (ten rotations) and the log is past version 10 (a second checkpoint).
        long rows = 1800;
        long total = afterDelete;
        long next = 2000;
        long version = snapshot(DeltaLog.forTable(spark, TABLE)).version();
        int appends = 0;
        long loop = System.currentTimeMillis();
        while ((driverCalls() < 11 || version < 12)
                && appends < 80
                && System.currentTimeMillis() - loop < 120_000) {
            write(next, next + 100, 3, "append");
            rows += 100;
            total += 3 * sum(next, next + 100);
            next += 100;
            appends++;
            assertThat(countSum(T)).as("after append %d", appends).containsExactly(rows, total);
            DeltaLog log = DeltaLog.forTable(spark, TABLE);
            logs.add(log);
            version = log.unsafeVolatileSnapshot().version();
        }
        long elapsed = System.currentTimeMillis() - started;

        step("appends");

        // _last_checkpoint names the newest checkpoint, and the snapshot is built from it.
        JsonNode last;
        try (InputStream in = fs.open(new Path(TABLE + "/_delta_log/_last_checkpoint"))) {
            last = new ObjectMapper().readTree(in);
        }
        long checkpoint = last.path("version").asLong(-1);
        assertThat(checkpoint).isEqualTo(version / 5 * 5).isGreaterThanOrEqualTo(10);
        assertThat(fs.exists(checkpointFile(checkpoint))).isTrue();
        // The newest version's checksum, written through FileContext (VendedAbstractFileSystem).
        assertThat(fs.exists(new Path(String.format("%s/_delta_log/%020d.crc", TABLE, version))))
                .isTrue();
        DeltaLog log = DeltaLog.forTable(spark, TABLE);
        assertThat(log.readLastCheckpointFile().get().version()).isEqualTo(checkpoint);
        assertThat(snapshot(log).checkpointProvider().version()).isEqualTo(checkpoint);
        assertThat(countSum(T)).containsExactly(rows, total);

        // Ten rotations later: one DeltaLog for the table, the same instance all along.
        logs.add(log);
        List<DeltaLog.DeltaLogCacheKey> keys = new ArrayList<>();
        var cache = DeltaLog$.MODULE$.getOrCreateCache(spark.sessionState().conf());
        for (Object k : cache.asMap().keySet()) {
            DeltaLog.DeltaLogCacheKey key = (DeltaLog.DeltaLogCacheKey) k;
            if (key.path().toString().startsWith(TABLE)) {
                keys.add(key);
            }
        }
        assertThat(keys).hasSize(1);
        assertThat(logs).hasSize(1);

        // No credential (key id, secret, token of any key any JVM received) in the cache key,
        // the DeltaLog's options or the Hadoop configuration it gives Delta's file operations.
        List<Call> calls = FileRecordingIssuer.read(callsFile);
        Map<String, String> seen = new TreeMap<>();
        asJava(keys.get(0).fsOptions()).forEach((k, v) -> seen.put("key:" + k, v));
        asJava(log.options()).forEach((k, v) -> seen.put("options:" + k, v));
        for (Map.Entry<String, String> e : log.newDeltaHadoopConf()) {
            seen.put("conf:" + e.getKey(), e.getValue());
        }
        assertThat(seen).hasSizeGreaterThan(100);
        assertThat(CredentialScan.hits(seen, calls)).isEmpty();
        // The scan finds a recorded secret inside a longer value (a made-up one, not vended).
        String made = "made-up-secret-of-this-test-0123456789";
        Call probe = new Call(0, 0, "AKIDMADEUP", made.length(), FileRecordingIssuer.sha256(made), 0, "");
        Map<String, String> planted = Map.of("conf:x", "{" + made + "}", "conf:y", "AKIDMADEUP");
        assertThat(CredentialScan.hits(planted, List.of(probe))).hasSize(2);

        // Provider calls: per JVM about one per lifetime, far fewer than tasks.
        Map<Long, Integer> perJvm = new TreeMap<>();
        for (Call c : calls) {
            perJvm.merge(c.pid(), 1, Integer::sum);
        }
        long lifetimes = elapsed / TTL_MS + 1;
        long tasks = TASKS.get();
        long rejected = 0;
        for (KeyStats s : server.stats().values()) {
            rejected += s.rejected();
        }
        System.out.printf(
                "delta on local-cluster[2,1,1024]: %d commits (last checkpoint %d), %d appends in the"
                        + " loop, %d s, %d credential lifetimes of %d ms; provider calls per JVM %s"
                        + " (driver %d: %d rotations), %d tasks, %d keys seen by the endpoint, %d"
                        + " rejected; %d DeltaLog cached for the table%n",
                version + 1, checkpoint, appends, elapsed / 1000, lifetimes, TTL_MS, perJvm.values(),
                driverCalls(), driverCalls() - 1, tasks, server.stats().size(), rejected, keys.size());
        assertThat(rejected).isZero();
        assertThat(driverCalls() - 1).as("rotations in the driver").isGreaterThanOrEqualTo(10);
        assertThat(perJvm).as("driver and both executors called").hasSize(3);
        assertThat(perJvm.values())
                .allSatisfy(n -> assertThat((long) n).isLessThanOrEqualTo(2 * lifetimes + 1));
        // Calls follow time, tasks follow work: on a loaded machine (load 8 on 2 cores) the same
        // work takes longer, so the margin against tasks is 2x, not more.
        assertThat((long) calls.size()).isLessThanOrEqualTo(3 * 2 * lifetimes + 3).isLessThan(tasks / 2);
        assertThat(new HashSet<>(calls.stream().map(Call::accessKeyId).toList())).hasSize(calls.size());
    }
}
