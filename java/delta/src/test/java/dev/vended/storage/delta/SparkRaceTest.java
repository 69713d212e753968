package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two Spark drivers in two JVMs ({@link DeltaAppender}, {@code local[2]} each, delta-spark)
 * append {@value #APPENDS} batches each to one Delta table on the local S3 endpoint through {@link
 * VendedLogStore} (counting refusals, {@link CountingLogStore}). Each append reads the latest
 * version and commits the next one with one create-only PUT, with no existence check before it:
 * when both drivers read the same version they race for the next, one PUT is refused and Delta
 * retries at the following version. Afterwards every append is in the log exactly once, the
 * versions are contiguous, and the table's files hold the rows of every append (numRecords of the
 * log's add actions; each data file present).
 */
class SparkRaceTest {

    private static final String BUCKET = "delta-spark-race";
    private static final int APPENDS = 20;
    private static final Pattern APPENDED = Pattern.compile("(?m)^APPENDED (\\d+) (\\d+)$");
    private static final Pattern CONFLICTS = Pattern.compile("(?m)^CONFLICTS (\\d+)$");
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static List<java.nio.file.Path> classPath() throws IOException {
        java.nio.file.Path file = Paths.get(System.getProperty("vended.delta.fullTestClasspath"));
        List<java.nio.file.Path> cp = new ArrayList<>();
        for (String entry : Files.readString(file).trim().split(File.pathSeparator)) {
            cp.add(Paths.get(entry));
        }
        cp.add(Paths.get("target", "classes").toAbsolutePath());
        cp.add(Paths.get("target", "test-classes").toAbsolutePath());
        return cp;
    }

    @Test
    void twoDriversAppendingConcurrentlyLoseNoAppend() throws Exception {
        String prefix = "appends";
        List<String> jvmArgs = List.of(
                // C1 only: short-lived drivers on few cores start and finish sooner.
                "-Xmx768m", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
                "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
                "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
                "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED");
        ExecutorService pool = Executors.newFixedThreadPool(3);
        int conflicts = 0;
        long expectedRows = 0;
        try {
            List<Future<ChildJvm.Result>> children = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                List<String> args = List.of(server.endpoint(), BUCKET, prefix, prefix + "-w" + w,
                        Integer.toString(w), Integer.toString(APPENDS));
                children.add(pool.submit(() -> ChildJvm.run(
                        classPath(), jvmArgs, DeltaAppender.class.getName(), args, Duration.ofSeconds(240))));
            }
            for (Future<ChildJvm.Result> f : children) {
                ChildJvm.Result r = f.get(270, TimeUnit.SECONDS);
                assertThat(r.exitCode()).as(r.describe()).isZero();
                Matcher m = APPENDED.matcher(r.output());
                int n = 0;
                while (m.find()) {
                    assertThat(Integer.parseInt(m.group(1))).isEqualTo(n);
                    expectedRows += Long.parseLong(m.group(2));
                    n++;
                }
                assertThat(n).as(r.describe()).isEqualTo(APPENDS);
                Matcher c = CONFLICTS.matcher(r.output());
                assertThat(c.find()).as(r.describe()).isTrue();
                conflicts += Integer.parseInt(c.group(1));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(conflicts).as("commits refused by the create-only PUT").isPositive();

        Configuration c = Tables.s3(Tables.base(), server.endpoint(), prefix + "-reader", BUCKET, prefix, 60_000);
        Path root = new Path("s3a://" + BUCKET + "/" + prefix + "/");
        VendedLogStore store = new VendedLogStore(c);
        List<Long> versions = new ArrayList<>();
        Map<String, Integer> appendsInLog = new HashMap<>();
        Map<String, Long> rowsInLog = new HashMap<>();
        List<String> dataFiles = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        for (var it = store.listFrom(LogStoreContract.version(root, 0), c); it.hasNext(); ) {
            FileStatus s = it.next();
            String name = s.getPath().getName();
            if (!name.matches("\\d{20}\\.json")) {
                continue;
            }
            versions.add(Long.parseLong(name.substring(0, 20)));
            String tag = null;
            long rows = 0;
            for (String line : LogStoreContract.lines(store, s.getPath(), c)) {
                JsonNode action = json.readTree(line);
                JsonNode info = action.path("commitInfo");
                if (info.has("userMetadata")) {
                    tag = info.get("userMetadata").asText();
                }
                JsonNode add = action.path("add");
                if (add.has("path")) {
                    rows += json.readTree(add.get("stats").asText()).get("numRecords").asLong();
                    dataFiles.add(add.get("path").asText());
                }
            }
            if (tag != null) {
                appendsInLog.merge(tag, 1, Integer::sum);
                rowsInLog.merge(tag, rows, Long::sum);
            }
        }
        List<Long> contiguous = new ArrayList<>();
        for (long v = 0; v <= 2 * APPENDS; v++) {
            contiguous.add(v);
        }
        assertThat(versions).as("the table's create and every append, one version each").isEqualTo(contiguous);
        assertThat(appendsInLog).hasSize(2 * APPENDS);
        assertThat(appendsInLog.values()).as("each append committed once").containsOnly(1);
        for (int w = 0; w < 2; w++) {
            for (int i = 0; i < APPENDS; i++) {
                assertThat(rowsInLog.get("w" + w + "-" + i)).as("rows of append w%d-%d", w, i).isEqualTo(10L + i);
            }
        }
        assertThat(rowsInLog.values().stream().mapToLong(Long::longValue).sum())
                .as("the table's rows: the sum of the appends the drivers were told committed")
                .isEqualTo(expectedRows);
        VendedFileSystem fs = (VendedFileSystem) root.getFileSystem(c);
        for (String f : dataFiles) {
            assertThat(fs.getFileStatus(new Path(root, f)).getLen()).as(f).isPositive();
        }
    }
}
