package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.hadoop.VendedAbstractFileSystem;

import io.delta.storage.S3SingleDriverLogStore;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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

/**
 * The two-driver Delta race, launcher side: two drivers ({@link DeltaAppender}, started by a
 * {@link Launcher}: child JVMs in {@link SparkRaceTest}, spark-submit to a standalone cluster in
 * {@link StandaloneRace}) append to the same tables at once; afterwards each table's log is read
 * ({@link RaceLog}) and checked against what the drivers were told. The tables ({@link Tables}):
 *
 * <ul>
 *   <li>{@code s3} and {@code azure}: {@link VendedLogStore} (counting refusals, {@link
 *       CountingLogStore}) on {@code s3a://} (local S3 endpoint) and {@code abfss://} (Azurite).
 *       No existence check before the create-only request: drivers that read the same version
 *       race for the next, one is refused and Delta retries at the following version. {@link
 *       #assertEveryAppendOnce}.
 *   <li>{@code single}: Delta's {@link S3SingleDriverLogStore} on {@code s3://}, served by {@link
 *       RacingFileSystem} creating as S3A does (its existence check, then a plain PUT), each
 *       commit held at a cross-JVM {@link Barrier} until both drivers are past the check. {@link
 *       #assertOneOfEachPairLost}.
 * </ul>
 */
final class SparkRace {

    private static final Pattern APPENDED = Pattern.compile("(?m)^APPENDED (\\S+) (\\d+) (\\d+) (\\d+)$");
    private static final Pattern CONFLICTS = Pattern.compile("(?m)^CONFLICTS (\\S+) (\\d+)$");
    private static final Pattern CPU = Pattern.compile("(?m)^CPU-MS (\\d+)$");
    private static final long TTL_MS = 60_000;

    private SparkRace() {}

    /** Starts driver {@code writer} with the Spark settings and {@link DeltaAppender}'s arguments. */
    interface Launcher {
        Driver launch(int writer, Map<String, String> sparkConf, List<String> args) throws Exception;
    }

    /** A driver that ended: its exit code, its output and how to describe it in a failure. */
    record Driver(int exitCode, String output, String describe) {}

    /**
     * A raced table: its key, the path the drivers write, the appends per driver, whether its
     * commits wait at the barrier, and the configuration and root its log is read with.
     */
    record Table(String key, String path, int appends, boolean barrier, Configuration reader, Path root) {}

    /**
     * What one table got: per driver, the rows of each append it was told committed (by index);
     * the commits its log store refused; the time the drivers spent in its appends; its log.
     */
    record Outcome(Table table, List<Map<Integer, Long>> reported, int conflicts, long appendMillis, RaceLog log) {

        /** Appends the drivers were told committed. */
        int reportedAppends() {
            return reported.stream().mapToInt(Map::size).sum();
        }

        /** Rows of the appends the drivers were told committed. */
        long reportedRows() {
            return reported.stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
        }
    }

    /**
     * A race: its tables' outcomes by key, its wall time from the launch to the drivers' ends and
     * the CPU time of the drivers' JVMs (in local mode, with their executors).
     */
    record Race(Map<String, Outcome> outcomes, long wallMillis, long driverCpuMillis) {}

    /** The tables of one race and the Spark settings serving them. */
    static final class Setup {
        final Map<String, String> spark = new LinkedHashMap<>();
        final List<Table> tables = new ArrayList<>();
        private final Configuration hadoop = Tables.base();

        {
            // Delta writes each version's checksum file (as by default) through Hadoop's
            // FileContext and reads the latest's instead of running Spark jobs over the log
            for (String scheme : List.of("s3a", "abfss", "s3")) {
                hadoop.set("fs.AbstractFileSystem." + scheme + ".impl", VendedAbstractFileSystem.class.getName());
            }
        }

        /** {@code master}: Spark's master URL, e.g. {@code local[2]}. */
        Setup(String master) {
            spark.put("spark.master", master);
            spark.put("spark.driver.host", "127.0.0.1");
            spark.put("spark.driver.bindAddress", "127.0.0.1");
        }

        /** Table {@code s3} at {@code s3a://bucket/prefix} with {@link CountingLogStore}. */
        Setup s3(String endpoint, String bucket, String prefix, int appends) {
            Tables.s3(hadoop, endpoint, "s3-" + prefix, bucket, prefix, TTL_MS);
            spark.put("spark.delta.logStore.s3a.impl", CountingLogStore.class.getName());
            return add("s3", "s3a://" + bucket + "/" + prefix, appends, false, s3Reader(endpoint, bucket, prefix),
                    "s3a://" + bucket + "/" + prefix + "/");
        }

        /** Table {@code azure} at {@code abfss://container@.../prefix} with {@link CountingLogStore}. */
        Setup azure(String endpoint, String container, String prefix, int appends) {
            Tables.azure(hadoop, endpoint, "azure-" + prefix, container, prefix, TTL_MS);
            spark.put("spark.delta.logStore.abfss.impl", CountingLogStore.class.getName());
            Configuration reader = Tables.azure(Tables.base(), endpoint, prefix + "-reader", container, prefix, TTL_MS);
            String root = Tables.abfss(container, prefix);
            return add("azure", root.substring(0, root.length() - 1), appends, false, reader, root);
        }

        /**
         * Table {@code single} at {@code s3://bucket/prefix}: {@link CountingSingleDriverLogStore}
         * on {@link RacingFileSystem} creating as S3A does, its commits held at the barrier.
         */
        Setup singleDriver(String endpoint, String bucket, String prefix, int appends) {
            Tables.s3(hadoop, endpoint, "single-" + prefix, bucket, prefix, TTL_MS);
            hadoop.set("vended.storage.table.single-" + prefix + ".location", "s3://" + bucket + "/" + prefix + "/");
            hadoop.set("fs.s3.impl", RacingFileSystem.class.getName());
            hadoop.setBoolean("fs.s3.impl.disable.cache", true);
            hadoop.setBoolean("test.delta.s3a-create", true);
            spark.put("spark.delta.logStore.s3.impl", CountingSingleDriverLogStore.class.getName());
            // read back through s3a:// (VendedFileSystem) as the others
            return add("single", "s3://" + bucket + "/" + prefix, appends, true, s3Reader(endpoint, bucket, prefix),
                    "s3a://" + bucket + "/" + prefix + "/");
        }

        private static Configuration s3Reader(String endpoint, String bucket, String prefix) {
            return Tables.s3(Tables.base(), endpoint, prefix + "-reader", bucket, prefix, TTL_MS);
        }

        private Setup add(
                String key, String path, int appends, boolean barrier, Configuration reader, String root) {
            tables.add(new Table(key, path, appends, barrier, reader, new Path(root)));
            return this;
        }

        /** The Spark settings: the masters' and the tables' ({@code spark.hadoop.*}). */
        Map<String, String> sparkConf() {
            Map<String, String> out = new LinkedHashMap<>(spark);
            for (Map.Entry<String, String> e : hadoop) {
                out.put("spark.hadoop." + e.getKey(), e.getValue());
            }
            return out;
        }
    }

    /** The class path of the test JVM's children: the module's test class path and its classes. */
    static List<java.nio.file.Path> classPath() throws IOException {
        java.nio.file.Path file = Paths.get(System.getProperty("vended.delta.fullTestClasspath"));
        List<java.nio.file.Path> cp = new ArrayList<>();
        for (String entry : Files.readString(file).trim().split(File.pathSeparator)) {
            cp.add(Paths.get(entry));
        }
        cp.add(Paths.get("target", "classes").toAbsolutePath());
        cp.add(Paths.get("target", "test-classes").toAbsolutePath());
        return cp;
    }

    /** Runs the race of {@code setup}'s tables with two drivers, waiting for each at most {@code timeout}. */
    static Race run(Launcher launcher, Setup setup, Duration timeout) throws Exception {
        List<Table> held = setup.tables.stream().filter(Table::barrier).toList();
        assertThat(held.size()).as("tables held at the barrier").isLessThanOrEqualTo(1);
        Map<String, String> conf = setup.sparkConf();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        long started = System.nanoTime();
        try (Barrier.Server barrier = held.isEmpty() ? null : new Barrier.Server()) {
            // one round per version of the held table: each append, the first creating it
            Future<?> coordinator = barrier == null ? null : pool.submit(() -> {
                barrier.run(2, held.get(0).appends());
                return null;
            });
            List<Future<Driver>> drivers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                List<String> args = new ArrayList<>(List.of(
                        Integer.toString(w), Integer.toString(barrier == null ? 0 : barrier.port())));
                for (Table t : setup.tables) {
                    // the held table is created by the first appends, both at version 0
                    args.add(t.key() + ":" + t.appends() + ":" + (t.barrier() ? "append" : "create") + ":" + t.path());
                }
                int writer = w;
                drivers.add(pool.submit(() -> launcher.launch(writer, conf, args)));
            }
            List<String> outputs = new ArrayList<>();
            long cpu = 0;
            for (Future<Driver> f : drivers) {
                Driver d = f.get(timeout.toSeconds() + 30, TimeUnit.SECONDS);
                assertThat(d.exitCode()).as(d.describe()).isZero();
                outputs.add(d.output());
                Matcher m = CPU.matcher(d.output());
                assertThat(m.find()).as(d.describe()).isTrue();
                cpu += Long.parseLong(m.group(1));
            }
            long wall = (System.nanoTime() - started) / 1_000_000;
            if (coordinator != null) {
                coordinator.get(10, TimeUnit.SECONDS);
            }
            Map<String, Outcome> outcomes = new LinkedHashMap<>();
            for (Table t : setup.tables) {
                outcomes.put(t.key(), outcome(t, outputs));
            }
            return new Race(outcomes, wall, cpu);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Outcome outcome(Table t, List<String> outputs) throws IOException {
        List<Map<Integer, Long>> reported = new ArrayList<>();
        int conflicts = 0;
        long millis = 0;
        for (String output : outputs) {
            Map<Integer, Long> rows = new LinkedHashMap<>();
            Matcher m = APPENDED.matcher(output);
            while (m.find()) {
                if (m.group(1).equals(t.key())) {
                    rows.put(Integer.parseInt(m.group(2)), Long.parseLong(m.group(3)));
                    millis += Long.parseLong(m.group(4));
                }
            }
            reported.add(rows);
            Matcher c = CONFLICTS.matcher(output);
            while (c.find()) {
                if (c.group(1).equals(t.key())) {
                    conflicts += Integer.parseInt(c.group(2));
                }
            }
        }
        return new Outcome(t, reported, conflicts, millis, RaceLog.read(t.reader(), t.root()));
    }

    /**
     * A log store whose commit is decided at the store: every append each driver was told
     * committed is in the log exactly once with its rows, the versions are contiguous (the
     * table's create and one per append), the table's rows are the sum of those appends, every
     * data file is present, and some commits were refused (the race happened).
     */
    static void assertEveryAppendOnce(Outcome o) {
        String key = o.table().key();
        int n = o.table().appends();
        for (int w = 0; w < 2; w++) {
            assertThat(o.reported().get(w).keySet()).as("%s: appends driver %d was told committed", key, w)
                    .containsExactlyElementsOf(RaceLog.upTo(n - 1).stream().map(Long::intValue).toList());
        }
        assertThat(o.conflicts()).as("%s: commits refused by the create-only request", key).isPositive();
        RaceLog log = o.log();
        assertThat(log.versions()).as("%s: the table's create and every append, one version each", key)
                .isEqualTo(RaceLog.upTo(2L * n));
        assertThat(log.commits()).as("%s: appends in the log", key).hasSize(2 * n);
        assertThat(log.commits().values()).as("%s: each append committed once", key).containsOnly(1);
        for (int w = 0; w < 2; w++) {
            for (Map.Entry<Integer, Long> e : o.reported().get(w).entrySet()) {
                assertThat(log.rows().get("w" + w + "-" + e.getKey()))
                        .as("%s: rows of append w%d-%d", key, w, e.getKey())
                        .isEqualTo(e.getValue());
            }
        }
        assertThat(log.totalRows()).as("%s: the table's rows, the sum of the appends reported committed", key)
                .isEqualTo(o.reportedRows());
        assertThat(log.missingFiles()).as("%s: data files named by the log but absent", key).isEmpty();
    }

    /**
     * {@link S3SingleDriverLogStore} with both drivers past its existence check at every version:
     * nothing refused, both drivers told every append committed (the first creating the table),
     * but each version {@code i} holds one of the two appends {@code i} written for it, the other
     * overwritten: half the appends reported committed are not in the table.
     */
    static void assertOneOfEachPairLost(Outcome o) {
        String key = o.table().key();
        int n = o.table().appends();
        for (int w = 0; w < 2; w++) {
            assertThat(o.reported().get(w)).as("%s: appends driver %d was told committed", key, w).hasSize(n);
        }
        assertThat(o.conflicts()).as("%s: commits refused by the existence check", key).isZero();
        RaceLog log = o.log();
        assertThat(log.versions()).as("%s: one version per round, not per append", key).isEqualTo(RaceLog.upTo(n - 1));
        for (int i = 0; i < n; i++) {
            assertThat(log.appendByVersion().get((long) i)).as("%s: version %d", key, i).isIn("w0-" + i, "w1-" + i);
        }
        assertThat(log.commits()).as("%s: appends in the log", key).hasSize(n);
        assertThat(log.commits().values()).as("%s: each surviving append once", key).containsOnly(1);
        assertThat(o.reportedAppends() - log.commits().size()).as("%s: appends reported committed but lost", key)
                .isEqualTo(n);
        assertThat(log.totalRows()).as("%s: the table's rows against those reported committed", key)
                .isLessThan(o.reportedRows());
        assertThat(log.missingFiles()).as("%s: data files named by the log but absent", key).isEmpty();
    }

    /**
     * The race's wall and CPU time, then one line per table: appends attempted, reported
     * committed and present, conflicts, versions, rows, the drivers' time in its appends.
     */
    static String report(Race race) {
        StringBuilder out = new StringBuilder(String.format(
                "race: wall %.1f s, drivers' CPU %.1f s%n",
                race.wallMillis() / 1000.0, race.driverCpuMillis() / 1000.0));
        for (Outcome o : race.outcomes().values()) {
            out.append(String.format(
                    "%s (%s): appends attempted %d, reported committed %d, present %d; conflicts %d;"
                            + " versions %d (last %d); rows reported %d, present %d; missing data files %d;"
                            + " time in its appends %.1f s (both drivers)%n",
                    o.table().key(), o.table().path(), 2 * o.table().appends(), o.reportedAppends(),
                    o.log().commits().size(), o.conflicts(), o.log().versions().size(),
                    o.log().versions().isEmpty() ? -1 : o.log().versions().get(o.log().versions().size() - 1),
                    o.reportedRows(), o.log().totalRows(), o.log().missingFiles().size(),
                    o.appendMillis() / 1000.0));
        }
        return out.toString();
    }
}
