"""PySpark writing and reading a table whose credentials come from a Lance Namespace catalog.

Run with the library and the Hadoop module on the classpath::

    LANCE_TOKEN=... CATALOG_URL=https://lance.example TABLE_ID='db$events' \\
    TABLE_LOCATION=s3a://bucket/warehouse/events \\
    spark-submit --jars vended-storage-0.1.0.jar,vended-storage-hadoop-0.1.0.jar lance_table.py

``S3_ENDPOINT`` (optional) is for an S3-compatible endpoint other than AWS. The bearer token
stays in the environment (``lance.token-env`` names the variable): it never enters Spark's
configuration. ``bin/spark-submit-check`` runs this file against the real Lance Namespace
server and the local S3 endpoint.
"""

import os

from pyspark.sql import SparkSession

catalog_url = os.environ["CATALOG_URL"]
table_id = os.environ["TABLE_ID"]
location = os.environ["TABLE_LOCATION"].rstrip("/")
s3_endpoint = os.environ.get("S3_ENDPOINT")

# region:pyspark-lance
t = "spark.hadoop.vended.storage.table.events"
builder = (
    SparkSession.builder.appName("vended-storage-pyspark")
    .config("spark.hadoop.fs.s3a.impl", "dev.vended.storage.hadoop.VendedFileSystem")
    .config(  # FileContext: streaming checkpoints, Delta's log
        "spark.hadoop.fs.AbstractFileSystem.s3a.impl",
        "dev.vended.storage.hadoop.VendedAbstractFileSystem",
    )
    .config(f"{t}.location", location)
    .config(f"{t}.lance.endpoint", catalog_url)
    .config(f"{t}.lance.table-id", table_id)  # parts joined by "$"
    .config(f"{t}.lance.token-env", "LANCE_TOKEN")  # the variable's name, not the token
    .config(f"{t}.options.aws_region", "us-east-1")
)
if s3_endpoint:  # the catalog vends credentials only; the endpoint is the client's own
    builder = builder.config(f"{t}.options.aws_endpoint", s3_endpoint).config(
        f"{t}.options.aws_allow_http", str(s3_endpoint.startswith("http://")).lower()
    )
spark = builder.getOrCreate()

df = spark.range(0, 100_000).selectExpr("id", "id * 2 AS v")
df.write.mode("overwrite").parquet(location)
row = spark.read.parquet(location).selectExpr("count(*) AS n", "sum(v) AS total").first()
# endregion

assert row.n == 100_000 and row.total == 100_000 * 99_999, row
print(f"PYSPARK-EXAMPLE OK rows={row.n} sum={row.total}", flush=True)
spark.stop()
