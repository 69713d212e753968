package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One Spark driver appending to a Delta table when the answer to its commit's PUT is lost after
 * the object was stored (local S3 endpoint's lose-answer fault; {@code object_store} retries the
 * PUT and the endpoint refuses the retry), for an append and then a DELETE. {@link VendedLogStore}
 * ({@code s3a://}) recognises its own commits: one version per operation. Delta's {@code
 * S3SingleDriverLogStore} on the same file system ({@code s3://}, whose create is create-only)
 * reports each as a conflict with itself: Delta commits the append again at the next version, and
 * the DELETE fails with {@code ConcurrentAppendException} although its commit is in the table.
 */
class SparkLostAnswerTest {

    private static final String BUCKET = "delta-lost-answer";
    private static LocalS3Server server;
    private static SparkSession spark;
    private static Configuration conf;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        conf = Tables.base();
        conf.set("fs.s3.impl", conf.get("fs.s3a.impl"));
        conf.setBoolean("fs.s3.impl.disable.cache", true);
        Tables.s3(conf, server.endpoint(), "vended", BUCKET, "vended", 60_000);
        Tables.s3(conf, server.endpoint(), "single", BUCKET, "single", 60_000);
        conf.set("vended.storage.table.single.location", "s3://" + BUCKET + "/single/");
        SparkSession.Builder b = SparkSession.builder()
                .master("local[1]")
                .appName("delta-lost-answer")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.databricks.delta.snapshotPartitions", "1")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.delta.logStore.s3a.impl", VendedLogStore.class.getName())
                .config("spark.delta.logStore.s3.impl", "io.delta.storage.S3SingleDriverLogStore")
                .config("spark.databricks.delta.writeChecksumFile.enabled", "false");
        for (Map.Entry<String, String> e : conf) {
            b.config("spark.hadoop." + e.getKey(), e.getValue());
        }
        spark = b.getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
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

    private static String table(String scheme, String prefix) {
        return "delta.`" + scheme + "://" + BUCKET + "/" + prefix + "`";
    }

    /** Loses the answer to the next PUT of {@code prefix}'s commit {@code version}. */
    private static void loseAnswer(String prefix, long version) throws IOException {
        String key = prefix + "/_delta_log/" + String.format("%020d.json", version);
        server.send("POST", "/_admin/lose-answer?key=" + BUCKET + "/" + key, null, null);
    }

    private static long rows(String scheme, String prefix) {
        return spark.table(table(scheme, prefix)).count();
    }

    private static List<String> commits(String prefix) throws IOException {
        Path root = new Path("s3a://" + BUCKET + "/" + prefix + "/");
        Configuration c = Tables.s3(Tables.base(), server.endpoint(), prefix + "-reader", BUCKET, prefix, 60_000);
        List<String> out = new ArrayList<>();
        for (var it = new VendedLogStore(c).listFrom(LogStoreContract.version(root, 0), c); it.hasNext(); ) {
            FileStatus s = it.next();
            if (s.getPath().getName().endsWith(".json")) {
                out.add(s.getPath().getName());
            }
        }
        return out;
    }

    @Test
    void vendedLogStoreRecognisesItsOwnCommits() throws Exception {
        spark.sql("CREATE TABLE " + table("s3a", "vended") + " (id BIGINT) USING delta");
        loseAnswer("vended", 1);
        spark.range(10).write().format("delta").mode("append").save("s3a://" + BUCKET + "/vended");
        assertThat(rows("s3a", "vended")).isEqualTo(10);
        loseAnswer("vended", 2);
        spark.sql("DELETE FROM " + table("s3a", "vended") + " WHERE id < 5");
        assertThat(rows("s3a", "vended")).isEqualTo(5);
        assertThat(server.send("GET", "/_admin/lost-answers", null, null)).contains("\"armed\":0");
        assertThat(commits("vended")).as("one version per operation")
                .containsExactly("00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json");
    }

    /**
     * {@code S3SingleDriverLogStore}: the append is committed twice (versions 1 and 2 add the same
     * file, so the rows are counted once), and a DELETE whose answer was lost fails with Delta's
     * conflict error although its commit is in the table.
     */
    @Test
    void s3SingleDriverLogStoreCommitsAnAppendTwiceAndFailsADeleteItCommitted() throws Exception {
        spark.sql("CREATE TABLE " + table("s3", "single") + " (id BIGINT) USING delta");
        loseAnswer("single", 1);
        spark.range(10).write().format("delta").mode("append").save("s3://" + BUCKET + "/single");
        assertThat(rows("s3", "single")).isEqualTo(10);
        assertThat(commits("single")).as("the append at version 1 and again at version 2")
                .containsExactly("00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json");
        loseAnswer("single", 3);
        assertThatThrownBy(() -> spark.sql("DELETE FROM " + table("s3", "single") + " WHERE id < 5"))
                .isInstanceOf(io.delta.exceptions.ConcurrentAppendException.class)
                .hasMessageContaining("a concurrent DELETE added data");
        assertThat(rows("s3", "single")).as("the failed DELETE's commit is in the table").isEqualTo(5);
        assertThat(commits("single")).hasSize(4);
    }
}
