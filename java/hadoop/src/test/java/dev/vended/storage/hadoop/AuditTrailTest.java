package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The audit trail: every request of a table carries its name in the {@code User-Agent}, as the
 * local endpoint's request log shows (as S3 server access logs and CloudTrail would).
 */
@Timeout(120)
class AuditTrailTest {

    private static final String BUCKET = "audit";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static List<RequestRecord> requestsUnder(String prefix) throws IOException {
        return server.requests().stream()
                .filter(r -> r.key() != null && r.key().startsWith(prefix))
                .toList();
    }

    private static void roundTrip(FileSystem fs, String table) throws IOException {
        Path p = new Path("s3a://" + BUCKET + "/" + table + "/f.bin");
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(new byte[] {4, 5, 6});
        }
        try (FSDataInputStream in = fs.open(p)) {
            assertThat(in.read()).isEqualTo(4);
        }
    }

    @Test
    void everyRequestOfATableCarriesItsNameInTheUserAgent() throws Exception {
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "auditone", "s3a://" + BUCKET + "/auditone/", null);
        VendedFileSystemTest.table(c, server, "audittwo", "s3a://" + BUCKET + "/audittwo/", null);
        c.set("vended.storage.table.audittwo.options.user_agent", "my-app/1.0");
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            roundTrip(fs, "auditone");
            roundTrip(fs, "audittwo");
        }
        List<RequestRecord> one = requestsUnder("auditone/");
        List<RequestRecord> two = requestsUnder("audittwo/");
        assertThat(one).hasSizeGreaterThanOrEqualTo(2); // the PUT and the GET at least
        assertThat(two).hasSizeGreaterThanOrEqualTo(2);
        for (RequestRecord r : one) {
            assertThat(r.userAgent())
                    .as(r.toString())
                    .matches("vended-storage/[0-9A-Za-z._-]+ table/auditone( spark-app/\\S+)?");
        }
        for (RequestRecord r : two) {
            assertThat(r.userAgent())
                    .as(r.toString())
                    .matches("my-app/1\\.0 vended-storage/[0-9A-Za-z._-]+ table/audittwo( spark-app/\\S+)?");
        }
        // never a secret: the vended keys' ids are in the log, nothing of them in the agent
        for (String k : TestTableProvider.keys("auditone")) {
            assertThat(one).allSatisfy(r -> assertThat(r.userAgent()).doesNotContain(k));
        }
    }

    @Test
    void inSparkTheAgentAlsoNamesTheApplication() throws Exception {
        String p = "spark.hadoop.vended.storage.table.auditspark.";
        SparkSession spark =
                SparkSession.builder()
                        .appName("audit-trail")
                        .master("local[2]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config("spark.hadoop.fs.s3a.impl.disable.cache", "true")
                        .config(p + "location", "s3a://" + BUCKET + "/auditspark/")
                        .config(p + "provider.class", TestTableProvider.class.getName())
                        .config("spark.hadoop.vended.storage.options.aws_endpoint", server.endpoint())
                        .config("spark.hadoop.vended.storage.options.aws_region", "us-east-1")
                        .config("spark.hadoop.vended.storage.options.aws_allow_http", "true")
                        .getOrCreate();
        String app;
        try {
            app = spark.sparkContext().applicationId();
            spark.range(0, 1000)
                    .repartition(2)
                    .write()
                    .mode("overwrite")
                    .parquet("s3a://" + BUCKET + "/auditspark/data");
            assertThat(spark.read().parquet("s3a://" + BUCKET + "/auditspark/data").count())
                    .isEqualTo(1000);
        } finally {
            spark.stop();
        }
        List<RequestRecord> requests = requestsUnder("auditspark/");
        assertThat(requests).hasSizeGreaterThanOrEqualTo(4);
        for (RequestRecord r : requests) {
            assertThat(r.userAgent())
                    .as(r.toString())
                    .matches("vended-storage/\\S+ table/auditspark spark-app/\\S+")
                    .endsWith(" spark-app/" + AuditAgent.part(app));
        }
    }

    @Test
    void partsAreSanitizedAndBounded() {
        assertThat(AuditAgent.part("orders")).isEqualTo("orders");
        assertThat(AuditAgent.part("a b\r\nc/é")).isEqualTo("a_b__c__");
        assertThat(AuditAgent.part("x".repeat(500))).hasSize(AuditAgent.MAX_PART);
        assertThat(AuditAgent.part("")).isEqualTo("_");
        assertThat(AuditAgent.userAgent("orders", "app-2026 1\n"))
                .matches("vended-storage/\\S+ table/orders spark-app/app-2026_1_");
        assertThat(AuditAgent.userAgent("orders", null)).matches("vended-storage/\\S+ table/orders");
        Map<String, String> o =
                AuditAgent.withUserAgent(Map.of("aws_user_agent", "mine", "aws_region", "x"), "t");
        assertThat(o).doesNotContainKey("aws_user_agent").containsEntry("aws_region", "x");
        assertThat(o.get("user_agent")).startsWith("mine vended-storage/").contains(" table/t");
    }
}
