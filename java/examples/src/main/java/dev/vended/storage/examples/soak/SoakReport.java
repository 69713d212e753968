package dev.vended.storage.examples.soak;

import dev.vended.storage.RefreshStats;
import dev.vended.storage.examples.soak.SoakStats.Op;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The soak's figures at the end: the summary line and the markdown block for BENCHMARKS.md. */
final class SoakReport {

    private SoakReport() {}

    /**
     * The process at one moment.
     *
     * @param rssKiB resident set size ({@code VmRSS}), KiB; -1 where /proc is missing
     * @param osThreads threads of the process ({@code Threads} in /proc/self/status: Java, JVM and
     *     native runtime threads); -1 where /proc is missing
     * @param javaThreads live Java threads (including native threads attached to the JVM)
     * @param heapCommittedKiB memory committed to the Java heap, KiB (part of the RSS once touched)
     */
    record Sample(long rssKiB, long osThreads, long javaThreads, long heapCommittedKiB) {
        static Sample now() {
            long rss = -1;
            long threads = -1;
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    } else if (line.startsWith("Threads:")) {
                        threads = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    }
                }
            } catch (IOException | NumberFormatException e) {
                // not Linux: leave -1
            }
            return new Sample(
                    rss,
                    threads,
                    ManagementFactory.getThreadMXBean().getThreadCount(),
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted() >> 10);
        }

        Sample max(Sample o) {
            return new Sample(
                    Math.max(rssKiB, o.rssKiB),
                    Math.max(osThreads, o.osThreads),
                    Math.max(javaThreads, o.javaThreads),
                    Math.max(heapCommittedKiB, o.heapCommittedKiB));
        }

        String mib() {
            return rssKiB < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f MiB", rssKiB / 1024.0);
        }
    }

    /**
     * Everything the report shows.
     *
     * @param command the command line as given, e.g. {@code bin/soak --minutes 60}
     * @param args the options in effect
     * @param stats the workers' counters
     * @param elapsedSeconds how long the workload ran
     * @param providerCalls calls of the provider (each a catalog call), failed ones included
     * @param providerFailures calls that threw (outage)
     * @param generations credential sets vended (successful calls)
     * @param refresh the store's refresher counters at the end, or {@code null} if unavailable
     * @param proxyStats the fault proxy's {@link FaultProxy#statsLine()}
     * @param incompleteUploads multipart uploads the endpoint still holds at the end, as text
     * @param endpointStats what the endpoint accepted and refused, as text
     * @param start the process before the workers started
     * @param end the process after they stopped
     * @param peak the largest values sampled while they ran
     * @param environment machine, JVM, native library, commit
     * @param problems reasons the run failed besides counted failures (e.g. a stuck worker)
     */
    record Figures(
            String command,
            SoakArgs args,
            SoakStats stats,
            double elapsedSeconds,
            long providerCalls,
            long providerFailures,
            long generations,
            RefreshStats refresh,
            String proxyStats,
            String incompleteUploads,
            String endpointStats,
            Sample start,
            Sample end,
            Sample peak,
            String environment,
            List<String> problems) {

        boolean passed() {
            return stats.total(stats.failedOutside) == 0
                    && stats.mismatches.get() == 0
                    && stats.crashes.get() == 0
                    && problems.isEmpty()
                    && stats.total(stats.ops) > 0;
        }
    }

    static void print(Figures f, PrintStream out) {
        SoakStats s = f.stats;
        String result = f.passed() ? "PASS" : "FAIL";
        out.println();
        out.println("```markdown");
        out.printf(
                Locale.ROOT,
                "#### Soak: %s min, %d threads, %d s credentials, catalog outage %d s%s (%s)%n%n",
                SoakArgs.fmt(f.args.minutes()),
                f.args.threads(),
                f.args.ttlSeconds(),
                f.args.outageSeconds(),
                f.args.cpuHog() > 0
                        ? ", CPU saturated by " + f.args.cpuHog() + " busy threads"
                        : "",
                result);
        out.println("Command: `" + f.command + "`  ");
        out.println("Options in effect: `" + String.join(" ", f.args.effective()) + "`  ");
        out.println(f.environment);
        out.println();
        out.println("| operation | calls | failed outside the outage | failed in the outage |");
        out.println("|---|---:|---:|---:|");
        for (Op op : Op.values()) {
            int i = op.ordinal();
            out.printf(
                    Locale.ROOT,
                    "| %s | %,d | %,d | %,d |%n",
                    op.label,
                    s.ops[i].sum(),
                    s.failedOutside[i].sum(),
                    s.failedInOutage[i].sum());
        }
        out.printf(
                Locale.ROOT,
                "| **all** | **%,d** | **%,d** | **%,d** |%n%n",
                s.total(s.ops),
                s.total(s.failedOutside),
                s.total(s.failedInOutage));
        out.println("| measure | value |");
        out.println("|---|---|");
        out.printf(Locale.ROOT, "| elapsed | %.1f s |%n", f.elapsedSeconds);
        out.printf(
                Locale.ROOT,
                "| bytes verified | %,d (%.2f GiB; every read compared with the seeded content),"
                        + " %,d written |%n",
                s.bytesVerified.get(),
                s.bytesVerified.get() / (double) (1L << 30),
                s.bytesWritten.get());
        out.printf(Locale.ROOT, "| verification mismatches | %,d |%n", s.mismatches.get());
        if (s.crashes.get() > 0) {
            out.printf(
                    Locale.ROOT,
                    "| unexpected exceptions in workers | %,d (see stderr) |%n",
                    s.crashes.get());
        }
        out.printf(
                Locale.ROOT,
                "| rotations | %,d provider calls, %,d credential generations vended, %,d calls"
                        + " failed (catalog down) |%n",
                f.providerCalls,
                f.generations,
                f.providerFailures);
        if (f.refresh != null) {
            RefreshStats r = f.refresh;
            out.printf(
                    Locale.ROOT,
                    "| refresher (RefreshStats) | fetches %,d, failures %,d, generation %,d,"
                            + " stale waits %,d, backoff rejections %,d, endpoint rejections %,d,"
                            + " auth refetches %,d, clock offset %d ms |%n",
                    r.fetches(),
                    r.failures(),
                    r.generation(),
                    r.staleWaits(),
                    r.backoffRejections(),
                    r.endpointRejections(),
                    r.authRefetches(),
                    r.clockOffsetMillis());
        }
        out.println("| outage | " + outageText(f) + " |");
        out.println("| endpoint (local-s3) | " + f.endpointStats + " |");
        out.println("| fault proxy | " + f.proxyStats + " |");
        out.println("| multipart uploads left incomplete | " + f.incompleteUploads + " |");
        out.printf(
                Locale.ROOT,
                "| RSS | start %s, end %s, peak %s (Java heap committed: start %d MiB, end %d"
                        + " MiB) |%n",
                f.start.mib(),
                f.end.mib(),
                f.peak.mib(),
                f.start.heapCommittedKiB >> 10,
                f.end.heapCommittedKiB >> 10);
        out.printf(
                Locale.ROOT,
                "| threads (process / Java) | start %d / %d, end %d / %d, peak %d / %d |%n",
                f.start.osThreads,
                f.start.javaThreads,
                f.end.osThreads,
                f.end.javaThreads,
                f.peak.osThreads,
                f.peak.javaThreads);
        for (String r : s.reported) {
            out.println("| failure outside the outage | " + r.replace("|", "\\|") + " |");
        }
        for (String p : f.problems) {
            out.println("| problem | " + p + " |");
        }
        out.println("```");
        out.println();
        out.printf(
                Locale.ROOT,
                "soak summary: result=%s minutes=%s threads=%d ttl_s=%d cpu_hog=%d ops=%d"
                        + " failures_outside_outage=%d failures_in_outage=%d mismatches=%d"
                        + " bytes_verified=%d provider_calls=%d generations=%d rss_kib=%d->%d"
                        + " threads=%d->%d seed=%d%n",
                result,
                SoakArgs.fmt(f.args.minutes()),
                f.args.threads(),
                f.args.ttlSeconds(),
                f.args.cpuHog(),
                s.total(s.ops),
                s.total(s.failedOutside),
                s.total(s.failedInOutage),
                s.mismatches.get(),
                s.bytesVerified.get(),
                f.providerCalls,
                f.generations,
                f.start.rssKiB,
                f.end.rssKiB,
                f.start.osThreads,
                f.end.osThreads,
                f.args.seed());
        out.flush();
    }

    private static String outageText(Figures f) {
        SoakArgs a = f.args;
        if (a.outageSeconds() == 0) {
            return "none";
        }
        SoakStats s = f.stats;
        StringBuilder b = new StringBuilder();
        b.append(
                String.format(
                        Locale.ROOT,
                        "catalog down from %s s to %s s (the provider throws); failures counted as"
                                + " the outage's up to %s s after it ends; %,d operations"
                                + " succeeded while it was down",
                        SoakArgs.fmt(a.outageAtSeconds()),
                        SoakArgs.fmt(a.outageAtSeconds() + a.outageSeconds()),
                        SoakArgs.fmt(a.recoveryGraceSeconds()),
                        s.okDuringOutage.sum()));
        if (s.firstOutageFailure.get() != Long.MAX_VALUE) {
            long start = s.outageStartNanos();
            long endOfOutage = s.outageEndNanos();
            b.append(
                    String.format(
                            Locale.ROOT,
                            "; first failure %.1f s after it began, last %+.1f s from its end",
                            (s.firstOutageFailure.get() - start) / 1e9,
                            (s.lastOutageFailure.get() - endOfOutage) / 1e9));
        }
        return b.toString();
    }
}
