package dev.vended.storage.delta;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.EmulatorProcess;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two Spark drivers in two JVMs ({@link DeltaAppender}, {@code local[2]} each, delta-spark) append
 * at once to three Delta tables in turn ({@link SparkRace}): {@value #APPENDS} batches each to a
 * table on the local S3 endpoint and one on Azurite, both through {@link VendedLogStore}, and
 * {@value #SINGLE_APPENDS} each to a table whose log store is Delta's {@code
 * S3SingleDriverLogStore} on a file system that creates as S3A does, both drivers held past its
 * existence check at every version. {@link VendedLogStore}: every append once, versions
 * contiguous, rows the sum of the appends, on both clouds. {@code S3SingleDriverLogStore}: both
 * drivers told every append committed, one of each version's two commits lost. Fails when
 * Azurite is not installed, unless {@code VENDED_STORAGE_SKIP_EMULATORS=1} (then without the
 * Azure table).
 */
class SparkRaceTest {

    private static final String BUCKET = "delta-spark-race";
    private static final String CONTAINER = "delta-race";
    private static final int APPENDS = 20;
    private static final int SINGLE_APPENDS = 8;
    private static LocalS3Server server;
    private static AzuriteServer azurite;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        java.nio.file.Path tool = EmulatorProcess.toolsDirectory().resolve(AzuriteServer.TOOL);
        if (!Files.exists(tool)) {
            if (!"1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"))) {
                throw new AssertionError(tool + " not found: run bin/install-emulators.sh (or set"
                        + " VENDED_STORAGE_SKIP_EMULATORS=1 to race without the Azure table)");
            }
            return;
        }
        azurite = AzuriteServer.start();
        azurite.createContainer(CONTAINER);
    }

    @AfterAll
    static void stop() {
        if (azurite != null) {
            azurite.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** A driver in a child JVM, the Spark settings as {@code -Dspark.*} (SparkConf reads them). */
    private static SparkRace.Driver launch(int writer, Map<String, String> conf, List<String> args)
            throws Exception {
        List<String> jvmArgs = new ArrayList<>(List.of(
                // C1 only: short-lived drivers on few cores start and finish sooner.
                "-Xmx768m", "-XX:TieredStopAtLevel=1", "--enable-native-access=ALL-UNNAMED",
                "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED",
                "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
                "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"));
        conf.forEach((k, v) -> jvmArgs.add("-D" + k + "=" + v));
        ChildJvm.Result r = ChildJvm.run(
                SparkRace.classPath(), jvmArgs, DeltaAppender.class.getName(), args, Duration.ofSeconds(300));
        return new SparkRace.Driver(r.exitCode(), r.output(), r.describe());
    }

    @Test
    void vendedLogStoreLosesNoAppendOnEitherCloudAndS3SingleDriverLogStoreLosesOneOfEachPair() throws Exception {
        SparkRace.Setup setup = new SparkRace.Setup("local[2]").s3(server.endpoint(), BUCKET, "appends", APPENDS);
        if (azurite != null) {
            // Azurite directly: through the testkit's counting proxy, the copy that renames
            // Delta's checksum files into place is answered 404 CannotVerifyCopySource
            setup.azure(azurite.url(), CONTAINER, "appends", APPENDS);
        }
        setup.singleDriver(server.endpoint(), BUCKET, "single", SINGLE_APPENDS);

        SparkRace.Race race = SparkRace.run(SparkRaceTest::launch, setup, Duration.ofSeconds(300));
        System.out.print(SparkRace.report(race));

        SparkRace.assertEveryAppendOnce(race.outcomes().get("s3"));
        if (azurite != null) {
            SparkRace.assertEveryAppendOnce(race.outcomes().get("azure"));
        }
        SparkRace.assertOneOfEachPairLost(race.outcomes().get("single"));
    }
}
