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
        String agent = "vended-storage/\\S+ table/auditspark spark-app/" + AuditAgent.part(app);
        String task = " spark-task/\\d+\\.\\d+\\.\\d+ spark-tid/\\d+";
        for (RequestRecord r : requests) {
            assertThat(r.userAgent())
                    .as(r.toString())
                    .matches(agent + "( job/\\S+)?( spark-sql/\\S+)?(" + task + ")?");
        }
        // the tasks' own requests (their data files' writes and reads) name their task; the
        // driver's (listing, job commit) name none
        assertThat(requests)
                .filteredOn(r -> r.key().contains("part-") && r.method().equals("PUT"))
                .anySatisfy(r -> assertThat(r.userAgent()).as(r.toString()).containsPattern(task));
    }

    @Test
    void aThreadInAJobCarriesItsIdAndAnotherThreadDoesNot() throws Exception {
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "auditjob", "s3a://" + BUCKET + "/auditjob/", null);
        int from;
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            for (String name : new String[] {"in-job.bin", "no-job.bin"}) {
                try (FSDataOutputStream out =
                        fs.create(new Path("s3a://" + BUCKET + "/auditjob/" + name), true)) {
                    out.write(new byte[] {1, 2, 3});
                }
            }
            from = server.requests().size(); // the writes above: this thread, no job
            java.util.concurrent.atomic.AtomicReference<Throwable> failed =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread inJob =
                    new Thread(
                            () -> {
                                // as a committer does for its job (S3A's audit calls it "ji")
                                org.apache.hadoop.fs.audit.CommonAuditContext.currentAuditContext()
                                        .put("ji", "job-4711 x");
                                read(fs, "in-job.bin", failed);
                            });
            inJob.start();
            inJob.join();
            Thread noJob = new Thread(() -> read(fs, "no-job.bin", failed));
            noJob.start();
            noJob.join();
            assertThat(failed.get()).isNull();
        }
        List<RequestRecord> all = server.requests();
        List<RequestRecord> reads =
                all.subList(from, all.size()).stream()
                        .filter(r -> r.key() != null && r.key().startsWith("auditjob/"))
                        .toList();
        assertThat(reads).filteredOn(r -> r.key().endsWith("in-job.bin")).isNotEmpty()
                .allSatisfy(r -> assertThat(r.userAgent()).as(r.toString())
                        .matches("vended-storage/\\S+ table/auditjob( spark-app/\\S+)? job/job-4711_x"));
        assertThat(reads).filteredOn(r -> r.key().endsWith("no-job.bin")).isNotEmpty()
                .allSatisfy(r -> assertThat(r.userAgent()).as(r.toString()).doesNotContain("job/"));
    }

    private static void read(
            FileSystem fs,
            String name,
            java.util.concurrent.atomic.AtomicReference<Throwable> failed) {
        try (FSDataInputStream in = fs.open(new Path("s3a://" + BUCKET + "/auditjob/" + name))) {
            assertThat(in.read()).isEqualTo(1);
        } catch (Throwable t) {
            failed.set(t);
        }
    }

    @Test
    void taskContextsAreComposedFromTheIdsThatAreSet() {
        assertThat(TaskAudit.compose(null, null, null)).isNull();
        assertThat(TaskAudit.compose(" ", "", null)).isNull();
        assertThat(TaskAudit.compose("j 1", "7", "3.12.0 spark-tid/99"))
                .isEqualTo("job/j_1 spark-sql/7 spark-task/3.12.0 spark-tid/99");
        assertThat(TaskAudit.compose(null, null, "1.2.3 spark-tid/4"))
                .isEqualTo("spark-task/1.2.3 spark-tid/4");
        // outside Spark tasks and jobs (this test thread): none
        assertThat(TaskAudit.context()).isNull();
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
