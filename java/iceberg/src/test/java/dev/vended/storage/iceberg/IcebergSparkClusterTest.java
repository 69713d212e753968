package dev.vended.storage.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The same catalog and FileIO with executors in separate JVMs ({@code local-cluster[2,1,1024]}):
 * they receive the serialized FileIO (configuration only), open their stores lazily and refresh
 * natively, about once per credential lifetime per JVM, not once per task.
 *
 * <p>Spark launches local-cluster executors with the jars of {@code $SPARK_HOME/jars}; the test
 * builds that directory (symbolic links to this module's test classpath) under {@code target/}, and
 * surefire sets {@code SPARK_HOME} to it.
 */
@Timeout(240)
class IcebergSparkClusterTest {

    private static final Duration TTL = Duration.ofSeconds(6);

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("tables");

    private static Process restServer;
    private static VendingCatalog vending;
    private static SparkSession spark;

    @BeforeAll
    static void start() throws Exception {
        sparkHomeJars();
        int port;
        try (ServerSocket s = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        restServer = RestCatalogServerMain.start(port, S3);
        vending = new VendingCatalog("http://127.0.0.1:" + port, S3, TTL);
        // Class directories (this module's, and the library's when a reactor run stops before
        // packaging) go to the executors' extra class path; the jars are in $SPARK_HOME/jars.
        List<String> dirs = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (Files.isDirectory(Paths.get(entry))) {
                dirs.add(Paths.get(entry).toAbsolutePath().toString());
            }
        }
        String classes = String.join(File.pathSeparator, dirs);
        spark =
                SparkCatalogExample.configure(
                                SparkSession.builder()
                                        .appName("vended-storage-iceberg-cluster-test")
                                        .master("local-cluster[2,1,1024]")
                                        .config("spark.ui.enabled", "false")
                                        .config("spark.driver.host", "127.0.0.1")
                                        .config("spark.driver.bindAddress", "127.0.0.1")
                                        .config("spark.executor.extraClassPath", classes)
                                        .config("spark.executor.extraJavaOptions", "--enable-native-access=ALL-UNNAMED")
                                        .config("spark.sql.shuffle.partitions", "4")
                                        .config("spark.sql.session.timeZone", "UTC"),
                                vending.uri(),
                                S3.endpoint(),
                                S3.region())
                        .getOrCreate();
    }

    /** {@code $SPARK_HOME/jars}: links to the jars of this JVM's classpath. */
    private static void sparkHomeJars() throws Exception {
        Path jars = Paths.get(System.getenv("SPARK_HOME"), "jars");
        Files.createDirectories(jars);
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Paths.get(entry);
            if (entry.endsWith(".jar") && Files.isRegularFile(p)) {
                Path link = jars.resolve(p.getFileName());
                if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(link, p.toAbsolutePath());
                }
            }
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (spark != null) {
            spark.stop();
        }
        if (vending != null) {
            vending.close();
        }
        if (restServer != null) {
            restServer.getOutputStream().close();
            if (!restServer.waitFor(20, TimeUnit.SECONDS)) {
                restServer.destroyForcibly();
            }
        }
    }

    @Test
    void executorsInOtherJvmsRefreshAboutOncePerCredentialLifetime() throws Exception {
        spark.sql("CREATE NAMESPACE IF NOT EXISTS cat.db");
        spark.sql("CREATE TABLE cat.db.c (id BIGINT, v BIGINT) USING iceberg");
        long started = System.currentTimeMillis();
        int rounds = 0;
        long tasks = 0;
        // Appends and scans for 24 s (4 credential lifetimes), 8 tasks per round.
        while (rounds < 100 && (rounds < 2 || System.currentTimeMillis() - started < 24_000)) {
            spark.range(rounds * 10_000L, (rounds + 1) * 10_000L, 1, 8)
                    .selectExpr("id", "id * 2 AS v")
                    .writeTo("cat.db.c")
                    .append();
            rounds++;
            long n = spark.sql("SELECT count(*) FROM cat.db.c").first().getLong(0);
            assertThat(n).isEqualTo(rounds * 10_000L);
            tasks += 8 + 2;
        }
        long seconds = (System.currentTimeMillis() - started) / 1000;
        long rejected = 0;
        for (VendedCredentials key : vending.allKeys()) {
            rejected += S3.stats(key.accessKeyId()).rejected();
        }
        // Three JVMs (driver, two executors), each refreshing at about half the 6 s lifetime while busy.
        long lifetimes = seconds * 1000 / TTL.toMillis() + 1;
        System.out.printf(
                "local-cluster[2,1,1024]: %d rounds, ~%d tasks in %d s (%d credential lifetimes):"
                        + " %d loadTable/create answers, %d refresh calls, %d rejected%n",
                rounds, tasks, seconds, lifetimes, vending.tableAnswers.size(), vending.refreshes.size(), rejected);
        assertThat(rejected).isZero();
        assertThat(vending.failures.get()).isZero();
        assertThat(vending.refreshes.size()).isPositive().isLessThanOrEqualTo(3 * 2 * (int) lifetimes + 3);
        assertThat((long) vending.refreshes.size()).isLessThan(tasks);
    }
}
