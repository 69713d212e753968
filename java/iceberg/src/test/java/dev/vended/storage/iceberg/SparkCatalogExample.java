package dev.vended.storage.iceberg;

import org.apache.spark.sql.SparkSession;

/** The Spark configuration the README shows (region iceberg-spark-catalog), used by the test. */
final class SparkCatalogExample {

    private SparkCatalogExample() {}

    static SparkSession.Builder configure(
            SparkSession.Builder builder, String catalogUri, String s3Endpoint, String region) {
        // region:iceberg-spark-catalog
        return builder
                .config("spark.sql.extensions",
                        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
                .config("spark.sql.catalog.cat", "org.apache.iceberg.spark.SparkCatalog")
                .config("spark.sql.catalog.cat.type", "rest")
                .config("spark.sql.catalog.cat.uri", catalogUri)
                // Iceberg's FileIO on vended-storage: S3, Azure and GCS, credentials refreshed natively
                .config("spark.sql.catalog.cat.io-impl", "dev.vended.storage.iceberg.VendedFileIO")
                // your endpoint and region when the catalog vends credentials only
                .config("spark.sql.catalog.cat.s3.endpoint", s3Endpoint)
                .config("spark.sql.catalog.cat.client.region", region);
        // endregion
    }
}
