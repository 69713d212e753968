package dev.vended.storage.delta.unity;

import dev.vended.storage.delta.VendedLogStore;
import dev.vended.storage.hadoop.VendedAbstractFileSystem;
import dev.vended.storage.hadoop.VendedFileSystem;

import org.apache.spark.sql.SparkSession;

/** The Spark sessions of the Unity Catalog tests: small, local, Delta on {@link VendedFileSystem}. */
final class DeltaSessions {

    private DeltaSessions() {}

    /**
     * A {@code local[2]} session builder on 127.0.0.1 with delta-spark, one shuffle partition and
     * one snapshot partition (tiny tables), and {@code scheme} bound to {@link VendedFileSystem},
     * {@link VendedAbstractFileSystem} and {@link VendedLogStore}.
     *
     * @param app the application name
     * @param scheme the scheme of the tables' paths, e.g. {@code s3a}
     * @return the builder, to add table settings to
     */
    static SparkSession.Builder builder(String app, String scheme) {
        return SparkSession.builder()
                .appName(app)
                .master("local[2]")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config(
                        "spark.sql.catalog.spark_catalog",
                        "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.delta.logStore." + scheme + ".impl", VendedLogStore.class.getName())
                .config("spark.hadoop.fs." + scheme + ".impl", VendedFileSystem.class.getName())
                .config(
                        "spark.hadoop.fs.AbstractFileSystem." + scheme + ".impl",
                        VendedAbstractFileSystem.class.getName());
    }
}
