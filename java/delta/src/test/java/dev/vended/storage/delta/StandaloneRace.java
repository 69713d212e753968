package dev.vended.storage.delta;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import io.delta.sql.DeltaSparkSessionExtension;
import io.delta.storage.LogStore;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The two-driver Delta race ({@link SparkRace}) as Spark applications on a standalone cluster
 * ({@code bin/delta-standalone-race} starts the master and the workers): starts the local S3
 * endpoint and Azurite, then races three times, each time two {@code spark-submit} runs of {@link
 * DeltaAppender} at once (client mode, executors on the workers), on one table: {@code s3} and
 * {@code azure} ({@link VendedLogStore}) and {@code single} (Delta's {@code S3SingleDriverLogStore}
 * over an S3A-style create, both drivers held past its existence check). Prints each race's
 * report and the shared checker's verdict; exits 1 if a check failed.
 *
 * <p>Arguments: spark-submit, master URL ({@code spark://127.0.0.1:PORT}), a work directory,
 * appends per driver to the {@link VendedLogStore} tables, appends per driver to the {@code
 * single} table.
 */
public final class StandaloneRace {

    private static final String BUCKET = "delta-standalone-race";
    private static final String CONTAINER = "delta-standalone-race";
    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    private StandaloneRace() {}

    /**
     * Runs the three races.
     *
     * @param args see the class description
     * @throws Exception on a failure to start or run (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        String submit = args[0];
        String master = args[1];
        Path work = Path.of(args[2]);
        int appends = Integer.parseInt(args[3]);
        int singleAppends = Integer.parseInt(args[4]);
        List<Path> jars = shippedJars(work);
        Path app = jar(ChildJvm.codeSource(StandaloneRace.class), work.resolve("race-app.jar"));
        boolean failed = false;
        try (LocalS3Server s3 = LocalS3Server.start(BUCKET);
                AzuriteServer azurite = AzuriteServer.start()) {
            azurite.createContainer(CONTAINER);
            SparkRace.Launcher launcher =
                    (writer, conf, appArgs) -> submit(submit, jars, app, work, writer, conf, appArgs);
            for (String store : List.of("s3", "azure", "single")) {
                SparkRace.Setup setup = new SparkRace.Setup(master);
                // one core and 512 MiB on each of the two workers per application
                setup.spark.put("spark.cores.max", "2");
                setup.spark.put("spark.executor.cores", "1");
                setup.spark.put("spark.executor.memory", "512m");
                switch (store) {
                    case "s3" -> setup.s3(s3.endpoint(), BUCKET, "vended", appends);
                    case "azure" -> setup.azure(azurite.url(), CONTAINER, "vended", appends);
                    default -> setup.singleDriver(s3.endpoint(), BUCKET, "single", singleAppends);
                }
                SparkRace.Race race = SparkRace.run(launcher, setup, TIMEOUT);
                System.out.print(SparkRace.report(race));
                SparkRace.Outcome o = race.outcomes().get(store);
                try {
                    if (store.equals("single")) {
                        SparkRace.assertOneOfEachPairLost(o);
                    } else {
                        SparkRace.assertEveryAppendOnce(o);
                    }
                    System.out.println(store + ": CHECKED (" + (store.equals("single")
                            ? "one of each version's two appends lost, as expected of this store"
                            : "every append once, versions contiguous, rows the sum of the appends") + ")");
                } catch (AssertionError e) {
                    System.out.println(store + ": CHECK FAILED: " + e.getMessage());
                    failed = true;
                }
                System.out.flush();
            }
        }
        System.exit(failed ? 1 : 0);
    }

    /**
     * The jars the applications need beyond Spark's: the library, its Hadoop and Delta modules,
     * the testkit (the tables' credential providers), delta-spark and delta-storage.
     */
    private static List<Path> shippedJars(Path work) throws IOException {
        List<Path> out = new ArrayList<>();
        int n = 0;
        for (Class<?> c : List.of(ObjectStore.class, VendedFileSystem.class, VendedLogStore.class, ChildJvm.class,
                DeltaSparkSessionExtension.class, LogStore.class)) {
            Path p = ChildJvm.codeSource(c);
            out.add(Files.isDirectory(p) ? jar(p, work.resolve("classes-" + n++ + ".jar")) : p);
        }
        return out;
    }

    /** Packs the class files of the directory {@code classes} into {@code jar}. */
    private static Path jar(Path classes, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
                Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, (OutputStream) out);
                out.closeEntry();
            }
        }
        return jar;
    }

    /** One driver: {@code spark-submit} in client mode, its stdout and stderr in the work directory. */
    private static SparkRace.Driver submit(
            String submit, List<Path> jars, Path app, Path work, int writer, Map<String, String> conf,
            List<String> args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(submit, "--master", conf.get("spark.master"),
                "--deploy-mode", "client", "--driver-memory", "768m", "--class", DeltaAppender.class.getName(),
                "--jars", String.join(",", jars.stream().map(Path::toString).toList())));
        conf.forEach((k, v) -> {
            if (!k.equals("spark.master")) {
                cmd.add("--conf");
                cmd.add(k + "=" + v);
            }
        });
        cmd.add(app.toString());
        cmd.addAll(args);
        String name = "driver-" + writer + "-" + System.nanoTime();
        Path out = work.resolve(name + ".out");
        Path err = work.resolve(name + ".log");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean exited = p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (!exited) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        return new SparkRace.Driver(exited ? p.exitValue() : -1, Files.readString(out),
                "spark-submit of driver " + writer + (exited ? " exited " + p.exitValue() : " timed out")
                        + "; stdout " + out + ", log " + err);
    }
}
