package dev.vended.storage.delta;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;

/**
 * One driver of the two-driver Delta race ({@link SparkRace}), a Spark application with
 * delta-spark: creates each of its tables that is to be created first ({@code CREATE TABLE IF NOT
 * EXISTS}; the others are created by their first append), then appends to them in turn (append
 * {@code i} of every table, then {@code i + 1}), batch {@code i} holding {@code 10 + i}
 * rows tagged with this writer and {@code i} (and {@code userMetadata} {@code w<writer>-<i>} in its
 * commit). The master, the file systems, the tables' credentials and the log store of each scheme
 * come from the Spark settings the launcher passes ({@code spark.*} system properties or
 * spark-submit's {@code --conf}). With a barrier port, commits created through {@link
 * RacingFileSystem} wait there for the other driver ({@link Barrier#current}).
 *
 * <p>Prints {@code APPENDED <table> <i> <rows> <millis>} per append Delta reported committed,
 * then {@code CONFLICTS <table> <n>} per table: the commits the log store of its scheme refused
 * (one table per scheme), and {@code CPU-MS <n>}: the CPU time of this JVM.
 *
 * <p>Arguments: writer id, barrier port ({@code 0}: none), then per table {@code
 * <key>:<appends>:create|append:<path>}.
 */
public final class DeltaAppender {

    private DeltaAppender() {}

    private record Table(String key, int appends, boolean create, String path) {}

    /**
     * Runs the driver.
     *
     * @param args see the class description
     * @throws Exception on any failure (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        int writer = Integer.parseInt(args[0]);
        int port = Integer.parseInt(args[1]);
        List<Table> tables = new ArrayList<>();
        int rounds = 0;
        for (int a = 2; a < args.length; a++) {
            String[] t = args[a].split(":", 4);
            tables.add(new Table(t[0], Integer.parseInt(t[1]), t[2].equals("create"), t[3]));
            rounds = Math.max(rounds, Integer.parseInt(t[1]));
        }
        SparkSession.Builder b = SparkSession.builder()
                .appName("delta-race-w" + writer)
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.adaptive.enabled", "false")
                // One partition for Delta's state reconstruction (default 50): tiny tables here.
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                // No checkpoints: only the commits race.
                .config("spark.databricks.delta.properties.defaults.checkpointInterval", "1000");
        try (Barrier barrier = port > 0 ? new Barrier(port) : null;
                SparkSession spark = b.getOrCreate()) {
            Barrier.current = barrier;
            spark.sparkContext().setLogLevel("WARN");
            for (Table t : tables) {
                if (t.create()) {
                    create(spark, t.path());
                }
            }
            for (int i = 0; i < rounds; i++) {
                for (Table t : tables) {
                    if (i < t.appends()) {
                        append(spark, t, writer, i);
                    }
                }
            }
            for (Table t : tables) {
                String scheme = new Path(t.path()).toUri().getScheme();
                System.out.println("CONFLICTS " + t.key() + " " + CountingLogStore.conflicts(scheme));
            }
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            System.out.println("CPU-MS " + os.getProcessCpuTime() / 1_000_000);
        }
        System.out.flush();
        System.exit(0);
    }

    private static void create(SparkSession spark, String path) {
        String create = "CREATE TABLE IF NOT EXISTS delta.`" + path + "` (writer INT, seq INT, id BIGINT)"
                + " USING delta";
        try {
            spark.sql(create);
        } catch (Exception e) {
            // the other driver created the table in the same version: it exists now
            System.out.println("CREATE-LOST " + path + " " + e.getClass().getSimpleName());
            spark.sql(create);
        }
    }

    private static void append(SparkSession spark, Table t, int writer, int i) {
        int rows = 10 + i;
        long started = System.nanoTime();
        spark.range(0, rows, 1, 1) // one partition: one data file per append
                .selectExpr("CAST(" + writer + " AS INT) AS writer", "CAST(" + i + " AS INT) AS seq", "id")
                .write()
                .format("delta")
                .mode("append")
                .option("userMetadata", "w" + writer + "-" + i)
                .save(t.path());
        long millis = (System.nanoTime() - started) / 1_000_000;
        System.out.println("APPENDED " + t.key() + " " + i + " " + rows + " " + millis);
    }
}
