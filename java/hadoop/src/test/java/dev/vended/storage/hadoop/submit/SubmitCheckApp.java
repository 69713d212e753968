package dev.vended.storage.hadoop.submit;

import java.util.concurrent.TimeUnit;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * The application {@code bin/spark-submit-check} submits ({@code spark-submit --master local[4]
 * --jars <library jar>,<hadoop module jar> <this jar> s3a://bucket/table/ SECONDS}): for at least
 * {@code SECONDS} it writes Parquet through {@code VendedFileSystem} (as {@code s3a://}) and reads
 * it back, checking count and sum each round, while {@link StsCredentials} (in this jar) vends
 * credentials of a few seconds. Prints one line {@code SUBMIT-CHECK OK ...} and returns from
 * {@code main} without closing the JVM's table stores, so the driver must exit on its own; any
 * failure throws (a non-zero exit).
 */
public final class SubmitCheckApp {

    private SubmitCheckApp() {}

    /**
     * Runs the check.
     *
     * @param args the table path ({@code s3a://bucket/prefix/}) and the minimum seconds of work
     * @throws IllegalStateException if a result is wrong or the provider was not called as
     *     expected
     */
    public static void main(String[] args) {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: SubmitCheckApp s3a://bucket/table/ SECONDS");
        }
        String table = args[0].endsWith("/") ? args[0] : args[0] + "/";
        long minMillis = TimeUnit.SECONDS.toMillis(Long.parseLong(args[1]));
        SparkSession spark =
                SparkSession.builder().appName("vended-storage-submit-check").getOrCreate();
        long rows = 20_000;
        long start = System.currentTimeMillis();
        int rounds = 0;
        while (rounds < 2 || (System.currentTimeMillis() - start < minMillis && rounds < 50)) {
            String path = table + rounds;
            spark.range(0, rows)
                    .selectExpr("id", "id * 2 AS v")
                    .repartition(4)
                    .write()
                    .mode(SaveMode.Overwrite)
                    .parquet(path);
            Row r = spark.read().parquet(path).selectExpr("count(*)", "sum(v)").first();
            if (r.getLong(0) != rows || r.getLong(1) != rows * (rows - 1)) {
                throw new IllegalStateException(
                        path + ": count " + r.getLong(0) + ", sum " + r.getLong(1));
            }
            rounds++;
        }
        long elapsed = System.currentTimeMillis() - start;
        int calls = StsCredentials.calls();
        // Short credentials over the whole run: refreshed, but per window, never per task.
        if (calls < 2 || calls > elapsed / 1000 + 4) {
            throw new IllegalStateException(calls + " provider calls in " + elapsed + " ms");
        }
        spark.stop();
        System.out.printf(
                "SUBMIT-CHECK OK rounds=%d rows=%d elapsed_ms=%d provider_calls=%d done_at_ms=%d%n",
                rounds, rounds * rows, elapsed, calls, System.currentTimeMillis());
        // Returns with the table's store still open (VendedFileSystem keeps one per JVM).
    }
}
