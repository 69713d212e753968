package dev.vended.storage.delta;

import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;

/**
 * One driver of the two-driver Delta race ({@link SparkRaceTest}): a Spark session ({@code
 * local[2]}) with delta-spark, {@code s3a} served by {@code VendedFileSystem} and commits written
 * by {@link CountingLogStore}; creates the table if it does not exist, then appends {@code n}
 * batches, batch {@code i} holding {@code 10 + i} rows tagged with this writer and {@code i} (and
 * {@code userMetadata} {@code w<writer>-<i>} in its commit). Prints {@code APPENDED <i> <rows>} per
 * append Delta reported committed, then {@code CONFLICTS <n>}: the commits the store was refused.
 *
 * <p>Arguments: endpoint, bucket, prefix, table name, writer id, appends.
 */
public final class DeltaAppender {

    private DeltaAppender() {}

    /**
     * Runs the driver.
     *
     * @param args see the class description
     * @throws Exception on any failure (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        String bucket = args[1];
        String prefix = args[2];
        String table = args[3];
        int writer = Integer.parseInt(args[4]);
        int appends = Integer.parseInt(args[5]);

        SparkSession.Builder b = SparkSession.builder()
                .master("local[2]")
                .appName("delta-race-w" + writer)
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.adaptive.enabled", "false")
                // One partition for Delta's state reconstruction (default 50): tiny tables here.
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.delta.logStore.s3a.impl", CountingLogStore.class.getName())
                // No checksum files and no checkpoints: only the commits race.
                .config("spark.databricks.delta.writeChecksumFile.enabled", "false");
        Configuration c = Tables.s3(Tables.base(), endpoint, table, bucket, prefix, 60_000);
        for (Map.Entry<String, String> e : c) {
            b.config("spark.hadoop." + e.getKey(), e.getValue());
        }
        String path = "s3a://" + bucket + "/" + prefix;
        try (SparkSession spark = b.getOrCreate()) {
            spark.sparkContext().setLogLevel("WARN");
            String create = "CREATE TABLE IF NOT EXISTS delta.`" + path + "` (writer INT, seq INT, id BIGINT)"
                    + " USING delta TBLPROPERTIES ('delta.checkpointInterval' = '1000')";
            try {
                spark.sql(create);
            } catch (Exception e) {
                // the other driver created the table in the same version: it exists now
                System.out.println("CREATE-LOST " + e.getClass().getSimpleName());
                spark.sql(create);
            }
            for (int i = 0; i < appends; i++) {
                int rows = 10 + i;
                spark.range(rows)
                        .selectExpr("CAST(" + writer + " AS INT) AS writer", "CAST(" + i + " AS INT) AS seq", "id")
                        .write()
                        .format("delta")
                        .mode("append")
                        .option("userMetadata", "w" + writer + "-" + i)
                        .save(path);
                System.out.println("APPENDED " + i + " " + rows);
            }
            System.out.println("CONFLICTS " + CountingLogStore.CONFLICTS.get());
        }
        System.out.flush();
        System.exit(0);
    }
}
