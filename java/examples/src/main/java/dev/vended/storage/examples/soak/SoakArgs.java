package dev.vended.storage.examples.soak;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The soak's command line.
 *
 * @param minutes how long the workload runs, minutes (fractions allowed)
 * @param threads worker threads
 * @param ttlSeconds lifetime of each vended credential, seconds
 * @param outageSeconds how long the catalog (the provider) throws, seconds; 0 for no outage
 * @param outageAtSeconds when the outage starts, seconds after the workload starts
 * @param recoveryGraceSeconds after the outage ends, how long failures still count as the outage's
 *     (the design's promise: service returns within about 2 s of the catalog's, C22)
 * @param cpuHog busy-looping threads in a competing process, 0 for none
 * @param seed the seed of the workload and of the fault schedule
 * @param faults the fault proxy's rates
 * @param localS3 the local-s3 binary, or {@code null} for the testkit's default lookup
 * @param workDir where logs go
 */
record SoakArgs(
        double minutes,
        int threads,
        int ttlSeconds,
        int outageSeconds,
        double outageAtSeconds,
        double recoveryGraceSeconds,
        int cpuHog,
        long seed,
        FaultSchedule.Rates faults,
        Path localS3,
        Path workDir) {

    static final String USAGE =
            """
            usage: bin/soak [options]
              --minutes N            how long the workload runs (default 60; fractions allowed)
              --threads N            worker threads (default 8)
              --ttl-seconds N        lifetime of each vended credential (default 2)
              --outage-seconds N     the catalog (provider) throws this long, once; must be longer
                                     than the ttl to outlive a credential (default 10; 0 = none)
              --outage-at-seconds N  when the outage starts (default: half way through the run)
              --recovery-grace-seconds N
                                     failures up to this long after the outage still count as the
                                     outage's (default 2: the design's recovery promise, C22)
              --cpu-hog N            N busy-looping threads in a competing process (default 0)
              --seed N               seed of the workload and the fault schedule (default 1)
              --faults SPEC          fault proxy rates in percent of requests
                                     (default 503=2,reset=1,latency=5)
              --local-s3 PATH        the local-s3 binary (default: the system property
                                     vended.storage.localS3, which bin/soak sets to a copy of
                                     the release build)
              --work-dir PATH        where logs go (default: the system property soak.workDir,
                                     which bin/soak sets, else a new directory under /tmp)
            Prints progress every 30 s, then a summary line and a markdown block for BENCHMARKS.md.
            Exit status: 0 = no failure outside the outage window and no verification mismatch;
            1 = otherwise; 2 = bad command line.""";

    /** A bad command line. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /**
     * Parses {@code args} ({@code --name value} or {@code --name=value}).
     *
     * @return the options, or {@code null} for {@code --help}
     * @throws UsageException naming the option that is unknown, missing its value or out of range
     */
    static SoakArgs parse(String[] args) throws UsageException {
        double minutes = 60;
        int threads = 8;
        int ttl = 2;
        int outage = 10;
        Double outageAt = null;
        double grace = 2;
        int hog = 0;
        long seed = 1;
        FaultSchedule.Rates faults = FaultSchedule.Rates.DEFAULT;
        Path localS3 = null;
        Path workDir = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                return null;
            }
            if (!arg.startsWith("--")) {
                throw new UsageException(
                        "unexpected argument '" + arg + "' (options start with --)");
            }
            String name = arg.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new UsageException("--" + name + " needs a value");
            }
            switch (name) {
                case "minutes" -> minutes = number(name, value, 0.05, 24 * 60);
                case "threads" -> threads = (int) whole(name, value, 1, 256);
                case "ttl-seconds" -> ttl = (int) whole(name, value, 1, 3600);
                case "outage-seconds" -> outage = (int) whole(name, value, 0, 3600);
                case "outage-at-seconds" -> outageAt = number(name, value, 0, 24 * 3600);
                case "recovery-grace-seconds" -> grace = number(name, value, 0, 3600);
                case "cpu-hog" -> hog = (int) whole(name, value, 0, 64);
                case "seed" -> seed = whole(name, value, Long.MIN_VALUE, Long.MAX_VALUE);
                case "faults" -> {
                    try {
                        faults = FaultSchedule.parse(value);
                    } catch (IllegalArgumentException e) {
                        throw new UsageException("--faults: " + e.getMessage());
                    }
                }
                case "local-s3" -> localS3 = Path.of(value);
                case "work-dir" -> workDir = Path.of(value);
                default -> throw new UsageException("unknown option --" + name);
            }
        }
        double runSeconds = minutes * 60;
        double at = outageAt != null ? outageAt : Math.max(0, (runSeconds - outage) / 2);
        if (outage > 0 && at + outage > runSeconds) {
            throw new UsageException(
                    String.format(
                            Locale.ROOT,
                            "the outage (%d s from %.0f s) must end within the run (%.0f s)",
                            outage,
                            at,
                            runSeconds));
        }
        return new SoakArgs(
                minutes, threads, ttl, outage, at, grace, hog, seed, faults, localS3, workDir);
    }

    /** The workload's options as a command line, every default written out (for the report). */
    List<String> effective() {
        List<String> out = new ArrayList<>();
        out.add("--minutes " + fmt(minutes));
        out.add("--threads " + threads);
        out.add("--ttl-seconds " + ttlSeconds);
        out.add("--outage-seconds " + outageSeconds);
        out.add("--outage-at-seconds " + fmt(outageAtSeconds));
        out.add("--recovery-grace-seconds " + fmt(recoveryGraceSeconds));
        out.add("--cpu-hog " + cpuHog);
        out.add("--seed " + seed);
        out.add("--faults " + faults);
        return out;
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : String.format(Locale.ROOT, "%.2f", d);
    }

    private static double number(String name, String value, double min, double max)
            throws UsageException {
        double d;
        try {
            d = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " is not a number: " + value);
        }
        if (!(d >= min && d <= max)) {
            throw new UsageException(
                    "--" + name + " must be from " + fmt(min) + " to " + fmt(max) + ": " + value);
        }
        return d;
    }

    private static long whole(String name, String value, long min, long max) throws UsageException {
        long n;
        try {
            n = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " is not a whole number: " + value);
        }
        if (n < min || n > max) {
            throw new UsageException(
                    "--" + name + " must be from " + min + " to " + max + ": " + n);
        }
        return n;
    }
}
