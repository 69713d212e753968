package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import io.delta.storage.LogStore;
import io.delta.storage.S3SingleDriverLogStore;

import java.io.IOException;
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
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two drivers in two JVMs ({@link RaceWriter}) commit versions 0..{@value #VERSIONS}-1 of one
 * Delta log on the local S3 endpoint, a cross-JVM {@link Barrier} forcing both past any existence
 * check before either writes each version. {@link VendedLogStore}: every version written exactly
 * once, by the writer told it won; the other told {@code FileAlreadyExistsException}. Delta's
 * {@link S3SingleDriverLogStore} on a file system that creates as S3A does (look, then a plain
 * PUT): both writers are told they won every version and one commit of each is lost. The same
 * store on {@code VendedFileSystem} (whose {@code create(overwrite=false)} is create-only) loses
 * nothing.
 */
class TwoDriverRaceTest {

    private static final String BUCKET = "delta-race";
    private static final int VERSIONS = 8;
    private static final Pattern RESULT = Pattern.compile("(?m)^RESULT (\\d+) (WON|LOST|ERROR.*)$");
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

    /** The outcome per writer: version to {@code WON}, {@code LOST} or {@code ERROR ...}. */
    private record Race(List<Map<Integer, String>> outcomes, List<String> contents) {

        long won(int writer) {
            return outcomes.get(writer).values().stream().filter("WON"::equals).count();
        }

        /** Versions both writers were told they won. */
        long bothWon() {
            long n = 0;
            for (int v = 0; v < VERSIONS; v++) {
                if ("WON".equals(outcomes.get(0).get(v)) && "WON".equals(outcomes.get(1).get(v))) {
                    n++;
                }
            }
            return n;
        }
    }

    private static Race race(String prefix, Class<? extends LogStore> store, String createMode)
            throws Exception {
        List<java.nio.file.Path> cp = SparkRace.classPath();
        List<String> jvmArgs = List.of("--enable-native-access=ALL-UNNAMED");
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (Barrier.Server barrier = new Barrier.Server()) {
            Future<?> coordinator = pool.submit(() -> {
                barrier.run(2, VERSIONS);
                return null;
            });
            List<Future<ChildJvm.Result>> children = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                List<String> args = List.of(
                        store.getName(), createMode, server.endpoint(), BUCKET, prefix,
                        prefix + "-w" + w, Integer.toString(VERSIONS), Integer.toString(barrier.port()),
                        Integer.toString(w));
                children.add(pool.submit(() -> ChildJvm.run(
                        cp, jvmArgs, RaceWriter.class.getName(), args, Duration.ofSeconds(240))));
            }
            List<Map<Integer, String>> outcomes = new ArrayList<>();
            for (Future<ChildJvm.Result> f : children) {
                ChildJvm.Result r = f.get(270, TimeUnit.SECONDS);
                assertThat(r.exitCode()).as(r.describe()).isZero();
                Map<Integer, String> byVersion = new HashMap<>();
                Matcher m = RESULT.matcher(r.output());
                while (m.find()) {
                    byVersion.put(Integer.parseInt(m.group(1)), m.group(2));
                }
                assertThat(byVersion).as(r.describe()).hasSize(VERSIONS);
                assertThat(byVersion.values()).as(r.describe()).allMatch(o -> !o.startsWith("ERROR"));
                outcomes.add(byVersion);
            }
            coordinator.get(10, TimeUnit.SECONDS);
            Configuration c = Tables.s3(Tables.base(), server.endpoint(), prefix + "-reader", BUCKET, prefix, 4_000);
            LogStore reader = new VendedLogStore(c);
            Path root = new Path("s3a://" + BUCKET + "/" + prefix + "/");
            assertThat(LogStoreContract.names(reader.listFrom(LogStoreContract.version(root, 0), c)))
                    .hasSize(VERSIONS);
            List<String> contents = new ArrayList<>();
            for (int v = 0; v < VERSIONS; v++) {
                contents.add(String.join("\n", LogStoreContract.lines(reader, LogStoreContract.version(root, v), c)));
            }
            return new Race(outcomes, contents);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void vendedLogStoreWritesEveryVersionOnceByItsWinner() throws Exception {
        Race r = race("vended", VendedLogStore.class, "create-only");
        assertThat(r.won(0) + r.won(1)).isEqualTo(VERSIONS);
        assertThat(r.bothWon()).isZero();
        for (int v = 0; v < VERSIONS; v++) {
            int winner = "WON".equals(r.outcomes().get(0).get(v)) ? 0 : 1;
            assertThat(r.outcomes().get(1 - winner).get(v)).as("version %d", v).isEqualTo("LOST");
            assertThat(r.contents().get(v)).isEqualTo("writer " + winner + " version " + v);
        }
    }

    @Test
    void s3SingleDriverLogStoreOnAnS3aStyleCreateLosesOneCommitPerVersion() throws Exception {
        Race r = race("single-s3a", S3SingleDriverLogStore.class, "s3a-create");
        assertThat(r.bothWon()).as("versions both drivers were told they committed").isEqualTo(VERSIONS);
        for (int v = 0; v < VERSIONS; v++) {
            assertThat(r.contents().get(v)).as("version %d holds one of the two commits", v)
                    .matches("writer [01] version " + v);
        }
    }

    @Test
    void s3SingleDriverLogStoreOnVendedFileSystemLosesNothing() throws Exception {
        Race r = race("single-vended", S3SingleDriverLogStore.class, "create-only");
        assertThat(r.won(0) + r.won(1)).isEqualTo(VERSIONS);
        assertThat(r.bothWon()).isZero();
    }
}
