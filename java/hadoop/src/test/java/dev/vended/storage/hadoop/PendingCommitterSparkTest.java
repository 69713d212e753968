package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real Spark ({@code local[2]}) writing Parquet through {@link PendingCommitter}: the rows read
 * back equal, each file is one multipart upload completed at job commit (no COPY, no rename), no
 * upload is left, and a failed job leaves no upload and no file.
 */
class PendingCommitterSparkTest {
    private static final String BUCKET = "spark-commit";
    private static LocalS3Server server;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
        String p = "spark.hadoop.vended.storage.table.sc.";
        spark =
                SparkSession.builder()
                        .appName("vended-storage-committer-test")
                        .master("local[2]")
                        .config("spark.ui.enabled", "false")
                        // The plain FileSystem: it writes the committer's work paths itself.
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config(
                                "spark.sql.parquet.output.committer.class",
                                PendingCommitter.class.getName())
                        .config(
                                "spark.sql.sources.outputCommitterClass",
                                PendingCommitter.class.getName())
                        .config(p + "location", "s3a://" + BUCKET + "/w/")
                        .config(p + "provider.class", TestTableProvider.class.getName())
                        .config(p + "options.aws_endpoint", server.endpoint())
                        .config(p + "options.aws_region", "us-east-1")
                        .config(p + "options.aws_allow_http", "true")
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

    private static FileSystem fs() throws IOException {
        return FileSystem.get(
                URI.create("s3a://" + BUCKET + "/"), spark.sparkContext().hadoopConfiguration());
    }

    private static List<String> keysUnder(String dir) throws IOException {
        List<String> out = new ArrayList<>();
        Path p = new Path("s3a://" + BUCKET + "/" + dir);
        if (!fs().exists(p)) {
            return out;
        }
        RemoteIterator<LocatedFileStatus> it = fs().listFiles(p, true);
        while (it.hasNext()) {
            out.add(it.next().getPath().toUri().getPath().substring(1));
        }
        return out;
    }

    @Test
    void parquetIsPublishedByCompletingUploadsWithoutCopies() throws Exception {
        String dir = "w/ok";
        Dataset<Row> rows =
                spark.range(0, 20_000).selectExpr("id", "id % 7 AS k", "CAST(id * 3 AS STRING) AS s");
        rows.repartition(4).write().parquet("s3a://" + BUCKET + "/" + dir);

        Dataset<Row> back = spark.read().parquet("s3a://" + BUCKET + "/" + dir);
        assertThat(back.count()).isEqualTo(20_000);
        assertThat(back.exceptAll(rows).count()).isZero();
        assertThat(rows.exceptAll(back).count()).isZero();

        List<String> files =
                keysUnder(dir).stream().filter(k -> k.endsWith(".parquet")).collect(Collectors.toList());
        assertThat(files).hasSize(4);
        assertThat(keysUnder(dir)).allMatch(k -> !k.contains("__magic") && !k.contains("_temporary"));
        assertThat(server.incompleteUploads(BUCKET)).isEmpty();

        // Every request on a data file: one POST to start the upload, one PUT per part (one
        // each here), one POST to complete it, then reads. A COPY would be another PUT.
        List<RequestRecord> log = server.requests();
        for (String f : files) {
            List<RequestRecord> on =
                    log.stream().filter(r -> f.equals(r.key())).collect(Collectors.toList());
            assertThat(on.stream().filter(r -> r.method().equals("PUT")).count()).as(f).isEqualTo(1);
            assertThat(on.stream().filter(r -> r.method().equals("POST")).count()).as(f).isEqualTo(2);
        }
        assertThat(log.stream().filter(r -> r.key() != null && r.key().contains("_temporary")))
                .isEmpty();
        String success =
                new String(fs().open(new Path("s3a://" + BUCKET + "/" + dir + "/_SUCCESS")).readAllBytes());
        assertThat(success).contains("vended-pending");
        for (String f : files) {
            assertThat(success).contains(f);
        }
    }

    @Test
    void aFailedJobLeavesNoUploadAndNoFile() throws Exception {
        String dir = "w/failed";
        MapFunction<Long, Long> failOnOne =
                v -> {
                    if (v == 15_000L) {
                        throw new IllegalStateException("planned failure");
                    }
                    return v;
                };
        Dataset<Long> ids = spark.range(0, 20_000).repartition(4).as(Encoders.LONG()).map(failOnOne, Encoders.LONG());
        assertThatThrownBy(() -> ids.write().parquet("s3a://" + BUCKET + "/" + dir))
                .hasStackTraceContaining("planned failure");
        assertThat(server.incompleteUploads(BUCKET)).isEmpty();
        assertThat(keysUnder(dir)).isEmpty();
    }
}
