package dev.vended.storage.hadoop;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A Spark Structured Streaming query ({@code spark-sql_2.13} 4.2.0, {@code local[2]}) whose
 * checkpoint is on an {@code s3a://} path served by {@link VendedFileSystem} and, through
 * Hadoop's {@code FileContext}, {@link VendedAbstractFileSystem}: a stateful aggregation
 * (offsets, commits, state store files renamed over their targets) across credential rotations,
 * stopped and restarted from its checkpoint.
 */
class StreamingCheckpointTest {

    private static final String BUCKET = "stream";
    private static final String TABLE = "strm";
    private static final long TTL_MS = 4_000;
    private static final long LEAD_MS = 1_000;
    private static final int VALUES_PER_BATCH = 12;

    /** Rows each micro-batch handed to {@code foreachBatch}, by batch id. */
    private static final Map<Long, List<String>> BATCHES = new ConcurrentSkipListMap<>();
    /** Batch ids handed to {@code foreachBatch} more than once. */
    private static final List<Long> REPEATED = new CopyOnWriteArrayList<>();

    private static LocalS3Server server;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
        String t = "spark.hadoop.vended.storage.table." + TABLE + ".";
        spark =
                SparkSession.builder()
                        .appName("vended-storage-streaming-test")
                        .master("local[2]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.sql.shuffle.partitions", "2")
                        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
                        // What a user sets: the FileSystem and its FileContext binding.
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config(
                                "spark.hadoop.fs.AbstractFileSystem.s3a.impl",
                                VendedAbstractFileSystem.class.getName())
                        .config(t + "location", "s3a://" + BUCKET + "/q/")
                        .config(t + "provider.class", TestTableProvider.class.getName())
                        .config(t + "options.aws_endpoint", server.endpoint())
                        .config(t + "options.aws_region", "us-east-1")
                        .config(t + "options.aws_allow_http", "true")
                        .config(t + "lead-time", LEAD_MS + "ms")
                        .config("spark.hadoop.test.vended." + TABLE + ".ttl-ms", TTL_MS)
                        .config("spark.hadoop.test.vended." + TABLE + ".scope", BUCKET + "/q/")
                        .getOrCreate();
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

    /** The values of micro-batch {@code i}: every residue modulo 3, distinct across batches. */
    private static List<Integer> values(int i) {
        return IntStream.range(i * VALUES_PER_BATCH, (i + 1) * VALUES_PER_BATCH).boxed().toList();
    }

    /** What batch {@code b} must report: per key (value mod 3), the count and sum so far. */
    private static List<String> expected(int b) {
        Map<Integer, long[]> acc = new TreeMap<>();
        for (int i = 0; i <= b; i++) {
            for (int v : values(i)) {
                long[] a = acc.computeIfAbsent(v % 3, k -> new long[2]);
                a[0]++;
                a[1] += v;
            }
        }
        List<String> out = new ArrayList<>();
        acc.forEach((k, a) -> out.add(k + ":" + a[0] + ":" + a[1]));
        return out;
    }

    private static StreamingQuery startQuery(MemoryStream<Integer> input, String checkpoint)
            throws Exception {
        Dataset<Row> counts =
                input.toDF()
                        .groupBy(col("value").mod(3).as("k"))
                        .agg(count("*").as("n"), sum("value").as("s"));
        VoidFunction2<Dataset<Row>, Long> sink =
                (df, id) -> {
                    List<String> rows = new ArrayList<>();
                    for (Row r : df.collectAsList()) {
                        rows.add(r.getInt(0) + ":" + r.getLong(1) + ":" + r.getLong(2));
                    }
                    rows.sort(null);
                    if (BATCHES.putIfAbsent(id, rows) != null) {
                        REPEATED.add(id);
                    }
                };
        return counts.writeStream()
                .outputMode("update")
                .option("checkpointLocation", checkpoint)
                .foreachBatch(sink)
                .start();
    }

    private static void addBatch(MemoryStream<Integer> input, StreamingQuery q, int i) {
        input.addData(CollectionConverters.asScala(values(i)).toSeq());
        q.processAllAvailable();
    }

    @Test
    void checkpointAcrossCredentialRotationsAndRestart() throws Exception {
        String checkpoint = "s3a://" + BUCKET + "/q/checkpoints/counts";
        URI bucket = URI.create("s3a://" + BUCKET + "/");
        int fileContextWrites = FileContext.getStatistics(bucket).getWriteOps();
        MemoryStream<Integer> input = MemoryStream.apply(Encoders.INT(), spark);
        long start = System.currentTimeMillis();

        StreamingQuery q = startQuery(input, checkpoint);
        int batches = 0;
        // Micro-batches until the third credential has served (two rotations), bounded.
        while (batches < 3
                || (TestTableProvider.calls(TABLE) < 3
                        && batches < 30
                        && System.currentTimeMillis() - start < 40_000)) {
            addBatch(input, q, batches++);
        }
        int firstRun = batches;
        int callsFirstRun = TestTableProvider.calls(TABLE);
        q.stop();
        assertThat(q.exception().isEmpty()).isTrue();

        // Restarted from the checkpoint: data added while stopped, then two more batches.
        input.addData(CollectionConverters.asScala(values(batches)).toSeq());
        StreamingQuery restarted = startQuery(input, checkpoint);
        restarted.processAllAvailable();
        batches++;
        addBatch(input, restarted, batches++);
        addBatch(input, restarted, batches++);
        restarted.stop();
        assertThat(restarted.exception().isEmpty()).isTrue();
        long elapsed = System.currentTimeMillis() - start;
        int calls = TestTableProvider.calls(TABLE);
        System.out.printf(
                "streaming: %d micro-batches (%d before the restart) in %d ms, %d provider calls"
                        + " (%d before the restart; %d ms credentials)%n",
                batches, firstRun, elapsed, calls, callsFirstRun, TTL_MS);

        // Each batch once, in order, none missing, each with the totals so far: the state and
        // the offsets were restored from the checkpoint, nothing reprocessed or lost.
        assertThat(REPEATED).isEmpty();
        assertThat(BATCHES.keySet())
                .containsExactlyElementsOf(
                        IntStream.range(0, batches).mapToObj(Long::valueOf).toList());
        for (int b = 0; b < batches; b++) {
            assertThat(BATCHES.get((long) b)).as("batch %d", b).isEqualTo(expected(b));
        }

        // The checkpoint is under the vended path, written through FileContext.
        FileSystem fs =
                new Path(checkpoint).getFileSystem(spark.sparkContext().hadoopConfiguration());
        assertThat(fs).isInstanceOf(VendedFileSystem.class);
        TreeSet<String> batchFiles = new TreeSet<>();
        IntStream.range(0, batches).forEach(b -> batchFiles.add(Integer.toString(b)));
        assertThat(namesIn(fs, checkpoint + "/offsets")).containsExactlyElementsOf(batchFiles);
        assertThat(namesIn(fs, checkpoint + "/commits")).containsExactlyElementsOf(batchFiles);
        assertThat(fs.getFileStatus(new Path(checkpoint, "metadata")).isFile()).isTrue();
        for (String partition : List.of("0", "1")) {
            assertThat(namesIn(fs, checkpoint + "/state/0/" + partition))
                    .as("state store files of partition %s", partition)
                    .contains(batches + ".delta");
        }
        assertThat(FileContext.getStatistics(bucket).getWriteOps())
                .as("checkpoint writes through the AbstractFileSystem")
                .isGreaterThan(fileContextWrites);

        assertThat(callsFirstRun)
                .as("two rotations before the restart")
                .isGreaterThanOrEqualTo(3);
        assertThat(calls)
                .as("about one call per credential lifetime over %d ms", elapsed)
                .isLessThanOrEqualTo((int) (elapsed / (TTL_MS - LEAD_MS - LEAD_MS / 2)) + 2);
        for (Map.Entry<String, KeyStats> e : server.stats().entrySet()) {
            assertThat(e.getValue().rejected())
                    .as("key %s: %s", e.getKey(), e.getValue())
                    .isZero();
        }
    }

    /** Every name in a directory (a temporary file left by a failed rename would show). */
    private static List<String> namesIn(FileSystem fs, String dir) throws IOException {
        List<String> out = new ArrayList<>();
        for (FileStatus s : fs.listStatus(new Path(dir))) {
            out.add(s.getPath().getName());
        }
        out.sort(null);
        return out;
    }
}
