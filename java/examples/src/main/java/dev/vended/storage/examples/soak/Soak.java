package dev.vended.storage.examples.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.StorageException;
import dev.vended.storage.examples.CredentialSource;
import dev.vended.storage.examples.RotatingProvider;
import dev.vended.storage.examples.soak.SoakArgs.UsageException;
import dev.vended.storage.examples.soak.SoakReport.Sample;
import dev.vended.storage.examples.soak.SoakStats.Op;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The soak ({@code bin/soak}): {@code --threads} workers ({@link SoakWorker}) run a verified mix of
 * synchronous, stream, multipart and async calls for {@code --minutes} against the local enforcing
 * endpoint (local-s3) through a {@link FaultProxy} (503s, resets, latency), with credentials that
 * live {@code --ttl-seconds} vended by a provider whose catalog is down for {@code
 * --outage-seconds} once, optionally while {@code --cpu-hog} busy threads in another process
 * compete for the CPU. Prints progress every 30 s, then a markdown block for BENCHMARKS.md and a
 * summary line; {@link SoakArgs#USAGE} lists the options.
 *
 * <p>Exit status: 0 when no call failed outside the outage window (the outage plus {@code
 * --recovery-grace-seconds}), no read differed from what was written and no worker hung; 1
 * otherwise; 2 for a bad command line.
 */
public final class Soak {

    private static final String BUCKET = "soak-bucket";
    private static final long PROGRESS_NANOS = 30_000_000_000L;
    private static final long SAMPLE_MILLIS = 5_000;

    /** How long past the deadline workers may take to finish their last call. */
    private static final long OVERRUN_NANOS = 300_000_000_000L;

    private Soak() {}

    /**
     * Runs the soak and exits with its status.
     *
     * @param args see {@link SoakArgs#USAGE}
     */
    public static void main(String[] args) {
        int code;
        try {
            code = run(args, System.out, System.err);
        } catch (UsageException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(SoakArgs.USAGE);
            code = 2;
        } catch (Exception e) {
            System.err.println("soak failed: " + e);
            e.printStackTrace();
            code = 1;
        }
        System.exit(code);
    }

    static int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        SoakArgs a = SoakArgs.parse(argv);
        if (a == null) {
            out.println(SoakArgs.USAGE);
            return 0;
        }
        String workProperty = System.getProperty("soak.workDir");
        Path work =
                a.workDir() != null
                        ? Files.createDirectories(a.workDir())
                        : workProperty != null
                                ? Files.createDirectories(Path.of(workProperty))
                                : Files.createTempDirectory("vended-storage-soak-");
        List<AutoCloseable> started = new ArrayList<>();
        try {
            return soak(a, argv, work, started, out, err);
        } finally {
            Collections.reverse(started);
            for (AutoCloseable c : started) {
                c.close();
            }
        }
    }

    private static int soak(
            SoakArgs a,
            String[] argv,
            Path work,
            List<AutoCloseable> started,
            PrintStream out,
            PrintStream err)
            throws Exception {
        double loadAtStart = load();
        if (a.cpuHog() > 0) {
            long maxSeconds = (long) (a.minutes() * 60) + 900;
            ChildProcess hog =
                    ChildProcess.start(
                            CpuHog.class,
                            work.resolve("cpu-hog.log"),
                            Integer.toString(a.cpuHog()),
                            Long.toString(maxSeconds));
            started.add(hog);
            out.println("cpu hog: " + a.cpuHog() + " busy threads in process " + hog.pid());
        }
        Path binary = a.localS3() != null ? a.localS3() : LocalS3Server.binaryFromProperty();
        LocalS3Server local = LocalS3Server.start(binary, BUCKET, work.resolve("local-s3.log"));
        started.add(local);
        ChildProcess proxy =
                ChildProcess.start(
                        FaultProxy.class,
                        work.resolve("fault-proxy.log"),
                        Integer.toString(local.port()),
                        Long.toString(a.seed()),
                        a.faults().toString());
        started.add(proxy);
        Map<String, String> base = local.endpointOptions();
        base.put("aws_endpoint", "http://127.0.0.1:" + proxy.port());
        long ttlMillis = a.ttlSeconds() * 1000L;
        CredentialSource catalog = () -> local.issueCredentials(ttlMillis, null).toOptions();
        CatalogOutage outage = new CatalogOutage(catalog);
        PrintStream rotations =
                new PrintStream(
                        Files.newOutputStream(work.resolve("rotations.log")),
                        true,
                        StandardCharsets.UTF_8);
        started.add(rotations);
        RotatingProvider provider = new RotatingProvider(base, outage, rotations);
        Map<String, String> initial = provider.fetchStorageOptions();
        String uri = "s3://" + BUCKET + "/run-" + System.currentTimeMillis() + "/";
        out.printf(
                Locale.ROOT,
                "soak %s: %d threads for %s min, %d s credentials, outage %d s at %s s, faults %s,"
                        + " seed %d%n  local-s3 %s behind fault proxy 127.0.0.1:%d (process %d);"
                        + " logs in %s%n",
                uri,
                a.threads(),
                SoakArgs.fmt(a.minutes()),
                a.ttlSeconds(),
                a.outageSeconds(),
                SoakArgs.fmt(a.outageAtSeconds()),
                a.faults(),
                a.seed(),
                local.endpoint(),
                proxy.port(),
                proxy.pid(),
                work);
        try (ObjectStore store = ObjectStore.open(uri, initial, provider);
                AsyncObjectStore async = AsyncObjectStore.of(store)) {
            warmUp(store, err);
            Sample start = Sample.now();
            long runStart = System.nanoTime();
            long outStart = runStart + (long) (a.outageAtSeconds() * 1e9);
            long outEnd = outStart + a.outageSeconds() * 1_000_000_000L;
            outage.schedule(outStart, outEnd);
            SoakStats stats =
                    new SoakStats(
                            runStart,
                            outStart,
                            outEnd,
                            (long) (a.recoveryGraceSeconds() * 1e9),
                            err);
            long deadline = runStart + (long) (a.minutes() * 60e9);
            List<SoakWorker> workers = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < a.threads(); t++) {
                SoakWorker w = new SoakWorker(t, store, async, stats, a.seed(), deadline);
                Thread th = new Thread(w, "soak-worker-" + t);
                th.setDaemon(true);
                workers.add(w);
                threads.add(th);
                th.start();
            }
            List<String> problems = new ArrayList<>();
            Sample peak = monitor(a, stats, provider, threads, runStart, deadline, start, out);
            for (Thread th : threads) {
                if (th.isAlive()) {
                    problems.add(
                            th.getName()
                                    + " still running 300 s after the deadline, in "
                                    + Arrays.toString(th.getStackTrace()));
                }
            }
            double elapsed = (System.nanoTime() - runStart) / 1e9;
            Sample end = Sample.now();
            peak = peak.max(end);
            cleanup(store, stats, problems);
            RefreshStats refresh = null;
            try {
                refresh = store.refreshStats();
            } catch (StorageException e) {
                problems.add("refresh stats unavailable: " + e.getMessage());
            }
            String proxyStats = proxy.ask("STATS").replaceFirst("^STATS ", "");
            String uploads = incompleteUploads(local);
            String endpointStats = endpointStats(local);
            String command =
                    System.getProperty("soak.command", "java " + Soak.class.getName())
                            + (argv.length == 0 ? "" : " " + String.join(" ", argv));
            SoakReport.Figures f =
                    new SoakReport.Figures(
                            command,
                            a,
                            stats,
                            elapsed,
                            outage.calls.get(),
                            outage.failedInOutage.get() + outage.failedOtherwise.get(),
                            provider.vended(),
                            refresh,
                            proxyStats,
                            uploads,
                            endpointStats,
                            start,
                            end,
                            peak,
                            environment(loadAtStart),
                            problems);
            SoakReport.print(f, out);
            return f.passed() ? 0 : 1;
        }
    }

    /** One put, get and delete, so the native runtime and the connection pool exist at "start". */
    private static void warmUp(ObjectStore store, PrintStream err) {
        try {
            store.put("warm-up", new byte[1024]);
            store.get("warm-up");
            store.delete("warm-up");
        } catch (IOException | RuntimeException e) {
            err.println("warm-up call failed (not counted): " + e);
        }
    }

    /**
     * Waits for the workers (at most {@link #OVERRUN_NANOS} past the deadline), printing progress
     * every 30 s and when the outage begins and ends; returns the peak sample.
     */
    private static Sample monitor(
            SoakArgs a,
            SoakStats stats,
            RotatingProvider provider,
            List<Thread> threads,
            long runStart,
            long deadline,
            Sample start,
            PrintStream out)
            throws InterruptedException {
        Sample peak = start;
        long nextProgress = runStart + PROGRESS_NANOS;
        long nextSample = runStart;
        boolean saidBegin = a.outageSeconds() == 0;
        boolean saidEnd = saidBegin;
        long outStart = stats.outageStartNanos();
        long outEnd = stats.outageEndNanos();
        for (Thread th : threads) {
            while (th.isAlive() && System.nanoTime() - (deadline + OVERRUN_NANOS) < 0) {
                th.join(SAMPLE_MILLIS / 5);
                long now = System.nanoTime();
                if (!saidBegin && now - outStart >= 0) {
                    saidBegin = true;
                    out.printf(
                            Locale.ROOT,
                            "[%5.0fs] outage begins: the provider throws%n",
                            (now - runStart) / 1e9);
                }
                if (!saidEnd && now - outEnd >= 0) {
                    saidEnd = true;
                    out.printf(
                            Locale.ROOT,
                            "[%5.0fs] outage ends: the provider works again%n",
                            (now - runStart) / 1e9);
                }
                if (now - nextSample >= 0) {
                    nextSample += SAMPLE_MILLIS * 1_000_000L;
                    peak = peak.max(Sample.now());
                }
                if (now - nextProgress >= 0) {
                    nextProgress += PROGRESS_NANOS;
                    Sample s = Sample.now();
                    peak = peak.max(s);
                    out.printf(
                            Locale.ROOT,
                            "[%5.0fs] ops=%d failed_outside=%d failed_in_outage=%d mismatches=%d"
                                    + " verified=%.2fGiB generations=%d rss=%s threads=%d/%d"
                                    + " load=%.1f%n",
                            (now - runStart) / 1e9,
                            stats.total(stats.ops),
                            stats.total(stats.failedOutside),
                            stats.total(stats.failedInOutage),
                            stats.mismatches.get(),
                            stats.bytesVerified.get() / (double) (1L << 30),
                            provider.vended(),
                            s.mib(),
                            s.osThreads(),
                            s.javaThreads(),
                            load());
                }
            }
        }
        return peak;
    }

    /** Deletes everything under the run's prefix; a failure counts as a failed cleanup call. */
    private static void cleanup(ObjectStore store, SoakStats stats, List<String> problems) {
        long t0 = System.nanoTime();
        try {
            List<ObjectMeta> left = store.list(null);
            for (ObjectMeta m : left) {
                long t1 = System.nanoTime();
                try {
                    store.delete(m.path());
                    stats.ok(Op.CLEANUP, t1, System.nanoTime());
                } catch (IOException | RuntimeException e) {
                    stats.failed(Op.CLEANUP, t1, System.nanoTime(), e);
                }
            }
            int remaining = store.list(null).size();
            if (remaining != 0) {
                problems.add("cleanup left " + remaining + " objects");
            }
        } catch (IOException | RuntimeException e) {
            stats.failed(Op.CLEANUP, t0, System.nanoTime(), e);
        }
    }

    /**
     * What local-s3 accepted and refused, summed over every key it issued ({@code /_admin/stats}).
     */
    private static String endpointStats(LocalS3Server local) {
        try {
            long accepted = 0;
            long rejected = 0;
            long expired = 0;
            long invalid = 0;
            long badToken = 0;
            long denied = 0;
            for (KeyStats k : local.stats().values()) {
                accepted += k.accepted();
                rejected += k.rejected();
                expired += k.expired();
                invalid += k.invalidKey();
                badToken += k.badToken();
                denied += k.denied();
            }
            return String.format(
                    Locale.ROOT,
                    "%,d requests accepted, %,d rejected (expired credential %,d, unknown key %,d,"
                            + " bad token %,d, denied %,d)",
                    accepted,
                    rejected,
                    expired,
                    invalid,
                    badToken,
                    denied);
        } catch (IOException | RuntimeException e) {
            return "n/a (" + e.getMessage() + ")";
        }
    }

    /**
     * The multipart uploads local-s3 still holds (started, neither completed nor aborted), from its
     * admin API ({@code GET /_admin/uploads}), as text for the report.
     */
    private static String incompleteUploads(LocalS3Server local) {
        try {
            JsonNode uploads =
                    new ObjectMapper()
                            .readTree(
                                    local.send(
                                            "GET", "/_admin/uploads?bucket=" + BUCKET, null, null));
            return uploads.size() + (uploads.size() == 0 ? "" : " (parts left on the endpoint)");
        } catch (IOException | RuntimeException e) {
            return "n/a (this local-s3 cannot list them: " + e.getMessage() + ")";
        }
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static String environment(double loadAtStart) {
        Runtime rt = Runtime.getRuntime();
        return String.format(
                Locale.ROOT,
                "Machine: %d cores, load average %.1f at start, %.1f at end; Java %s (%s), max"
                        + " heap %d MiB, JVM options %s; native library %s; commit %s",
                rt.availableProcessors(),
                loadAtStart,
                load(),
                System.getProperty("java.version"),
                System.getProperty("java.vm.name"),
                rt.maxMemory() >> 20,
                ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                        .filter(o -> o.startsWith("-X"))
                        .toList(),
                ObjectStore.nativeVersion(),
                System.getProperty("soak.commit", "unknown"));
    }
}
