package dev.vended.storage.bench;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the JVM benchmark set and prints the tables. Starts one local S3 endpoint ({@code
 * local-s3}, SigV4 + session tokens, objects on /dev/shm: throughput mode) and the unsigned {@link
 * CeilingServer}, then
 * runs one JMH fork per (op, size, threads, client), the clients of one cell back to back so they
 * alternate in one run on the same endpoint. Every number is printed with the 1-minute load
 * average at the end of its run (the machine has 2 cores and may be shared).
 *
 * <pre>
 * --suite all|transfer|upcall|streams   (all; "streams" only when asked: issue 12)
 * --stream-ops read,write  --stream-sizes 67108864  --stream-threads 1,4
 * --stream-clients vended,vended-random,sdk,http   (StreamBenchmark; also vended-stream, vended-8m)
 * --endpoint memory|disk   local-s3 in throughput mode (--in-memory, the default) or on disk
 * --ops get,put  --sizes 1024,1048576,67108864  --threads 1,8  --clients vended,sdk,http
 * --wi 2 --w 1 --i 3 --r 2      warmup/measurement iterations and seconds (sizes below 64 MiB)
 * --big-wi 1 --big-w 2 --big-i 3 --big-r 3   the same for sizes of 64 MiB and more
 * --unsigned-sizes 67108864 --unsigned-clients vended-unsigned,sdk-unsigned
 *                               extra table: the clients unsigned against the in-memory server
 *                               ("" to skip)
 * --out FILE                    also write the tables (markdown) there
 * --jfr DIR                     record a JFR profile of every fork into DIR
 * --fork-arg ARG                extra JVM argument for the forks (repeatable)
 * --paired 5000                 HEAD pairs of the paired hot-path measurement (in this JVM)
 * </pre>
 *
 * Needs {@code -Dvended.storage.localS3=target/release/local-s3}.
 */
public final class BenchMain {

    private static final double MIB = 1024.0 * 1024.0;

    private final Map<String, String> args = new LinkedHashMap<>();
    private final List<String> forkArgs = new ArrayList<>();
    private PrintStream jmhLog;
    private String endpoint;
    private String bucket;
    private String ceiling;
    private Path checkFile;

    record Cell(String op, int size, int threads, String client, double score, double error,
            double min, double max, String unit, double load, String note) {}

    public static void main(String[] argv) throws Exception {
        new BenchMain().run(argv);
    }

    private void run(String[] argv) throws Exception {
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (!a.startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("bad argument " + a + " (see BenchMain javadoc)");
            }
            String v = argv[++i];
            if (a.equals("--fork-arg")) {
                forkArgs.add(v);
            } else {
                args.put(a.substring(2), v);
            }
        }
        String suite = arg("suite", "all");
        Path outDir = Path.of(arg("log-dir", "target"));
        Files.createDirectories(outDir);
        Path logFile = outDir.resolve("jmh.log");
        checkFile = outDir.resolve("checks.txt").toAbsolutePath();
        Files.deleteIfExists(checkFile);
        jmhLog = new PrintStream(new FileOutputStream(logFile.toFile(), false), true, StandardCharsets.UTF_8);

        Instant started = Instant.now();
        StringBuilder report = new StringBuilder();
        report.append(machine());
        System.out.print(machine());
        System.out.println("JMH output: " + logFile.toAbsolutePath());

        bucket = "bench";
        try (LocalS3Server s3 =
                        LocalS3Server.start(
                                LocalS3Server.binaryFromProperty(),
                                bucket,
                                outDir.resolve("local-s3.log"),
                                !arg("endpoint", "memory").equals("disk"));
                CeilingServer ceil = new CeilingServer()) {
            endpoint = s3.endpoint();
            ceiling = ceil.url();
            System.out.println("local-s3: " + endpoint + "   ceiling server: " + ceiling
                    + "   native: " + ObjectStore.nativeVersion());
            if (suite.equals("all") || suite.equals("upcall")) {
                String t = upcall();
                report.append(t);
            }
            if (suite.equals("all") || suite.equals("transfer")) {
                String t = transfer();
                report.append(t);
            }
            if (suite.equals("streams")) {
                report.append(streams());
            }
        }
        if (Files.exists(checkFile)) {
            String checks = "\nChecks from the forks:\n\n" + Files.readString(checkFile).lines()
                    .map(l -> "- " + l).collect(java.util.stream.Collectors.joining("\n")) + "\n";
            report.append(checks);
            System.out.print(checks);
        }
        String done = String.format(Locale.ROOT, "%nTotal wall time: %d s%n",
                Duration.between(started, Instant.now()).toSeconds());
        report.append(done);
        System.out.print(done);
        String out = args.get("out");
        if (out != null) {
            Files.writeString(Path.of(out), report.toString());
            System.out.println("tables written to " + out);
        }
    }

    private String arg(String name, String dflt) {
        return args.getOrDefault(name, dflt);
    }

    private int intArg(String name, int dflt) {
        return Integer.parseInt(arg(name, Integer.toString(dflt)));
    }

    private static List<String> list(String csv) {
        return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    // ------------------------------------------------------------------------------------------

    private String upcall() throws Exception {
        String[] methods = {"openFetchHead", "openSeededHead", "javaProviderCall", "hotHeadProvider", "hotHeadStatic"};
        Map<String, Cell> r = new LinkedHashMap<>();
        for (String m : methods) {
            Cell c = runOne(UpcallBenchmark.class.getName() + "." + m + "$", Map.of(), 1, 0, m, "-", false);
            r.put(m, c);
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n## JNI upcall and credential hot path (1 thread, average time per op)\n\n");
        sb.append("| benchmark | µs/op | iterations min–max | load1 | what it is |\n|---|---:|---:|---:|---|\n");
        Map<String, String> what = Map.of(
                "openFetchHead", "open store (no creds) + HEAD 1 KiB + close: 1 provider call",
                "openSeededHead", "open store (seeded creds) + HEAD 1 KiB + close: 0 provider calls",
                "javaProviderCall", "the Java provider alone (new 6-entry HashMap), no JNI",
                "hotHeadProvider", "HEAD 1 KiB on an open store with a provider (seeded, valid for hours)",
                "hotHeadStatic", "HEAD 1 KiB on an open store with static options");
        for (String m : methods) {
            Cell c = r.get(m);
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %s |%n",
                    m, fmt(c.score), range(c), c.load, what.get(m)));
        }
        Cell f = r.get("openFetchHead"), s = r.get("openSeededHead");
        if (ok(f) && ok(s)) {
            sb.append(String.format(Locale.ROOT,
                    "%nopenFetchHead − openSeededHead: %.1f µs (iterations spread %.0f µs: the upcall"
                            + " hides in the noise of building a store; upcall-uprobe.sh measures it"
                            + " directly)%n",
                    f.score - s.score, Math.max(f.max - f.min, s.max - s.min)));
        }
        Cell hp = r.get("hotHeadProvider"), hs = r.get("hotHeadStatic");
        if (ok(hp) && ok(hs)) {
            sb.append(String.format(Locale.ROOT,
                    "Hot path in separate forks, provider / static HEAD time: %.3f×%n", hp.score / hs.score));
        }
        sb.append(HotPathPaired.run(endpoint, bucket, intArg("paired", 5000)));
        System.out.print(sb);
        return sb.toString();
    }

    private static boolean ok(Cell c) {
        return c != null && !Double.isNaN(c.score);
    }

    private String transfer() throws Exception {
        List<String> ops = list(arg("ops", "get,put"));
        List<String> sizes = list(arg("sizes", "1024,1048576,67108864"));
        List<String> threads = list(arg("threads", "1,8"));
        List<String> clients = list(arg("clients", "vended,sdk,http"));
        List<Cell> cells = new ArrayList<>();
        for (String op : ops) {
            for (String size : sizes) {
                for (String t : threads) {
                    for (String client : clients) {
                        cells.add(transferRun(op, size, t, client));
                    }
                }
            }
        }
        // The same clients without the endpoint: unsigned against the in-memory ceiling server.
        List<String> unsignedSizes = list(arg("unsigned-sizes", "67108864"));
        List<String> unsignedClients = list(arg("unsigned-clients", "vended-unsigned,sdk-unsigned"));
        List<Cell> unsigned = new ArrayList<>();
        for (String op : ops) {
            for (String size : unsignedSizes) {
                for (String t : threads) {
                    for (String client : unsignedClients) {
                        unsigned.add(transferRun(op, size, t, client));
                    }
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n## GET / PUT throughput (ops/s summed over threads; MiB/s = ops/s × size)\n\n");
        sb.append("Clients: `vended` = ObjectStore (JNI, object_store, provider-seeded session creds); "
                + "`sdk` = AWS SDK v2 S3Client (its default Apache 5 client, checksums only when required); "
                + "both signed against local-s3. `http` = java.net.http.HttpClient, unsigned, against an "
                + "in-memory server in the driver JVM (the ceiling; local-s3 rejects unsigned requests).\n\n");
        table(sb, cells, cells);
        if (!unsigned.isEmpty()) {
            sb.append("\n### Without the endpoint: unsigned (`aws_skip_signature` / anonymous) against the"
                    + " in-memory server\n\n");
            table(sb, unsigned, cells);
        }
        System.out.print(sb);
        return sb.toString();
    }

    /**
     * Issue 12: {@link StreamBenchmark}, the clients of one (op, size, threads) cell back to back in
     * one run on one endpoint; ratios against {@code sdk} and against the {@code http} ceiling.
     */
    private String streams() throws Exception {
        List<String> ops = list(arg("stream-ops", "read,write"));
        List<String> sizes = list(arg("stream-sizes", "67108864"));
        List<String> threads = list(arg("stream-threads", "1,4"));
        List<String> clients = list(arg("stream-clients", "vended,vended-random,sdk,http"));
        List<Cell> cells = new ArrayList<>();
        for (String op : ops) {
            for (String size : sizes) {
                for (String t : threads) {
                    for (String client : clients) {
                        cells.add(runOne(StreamBenchmark.class.getName() + "." + op + "$",
                                Map.of("client", client, "size", size), Integer.parseInt(t),
                                Integer.parseInt(size), op, client, true));
                    }
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n## Streams (issue 12): read into a reused buffer / write in 1 MiB writes\n\n");
        sb.append("| op | size | thr | client | ops/s | iterations min–max | MiB/s | /sdk | /ceiling | load1 |\n");
        sb.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for (Cell c : cells) {
            Cell sdk = find(cells, c.op(), c.size(), c.threads(), "sdk");
            Cell ceil = find(cells, c.op(), c.size(), c.threads(), "http");
            String vs = !c.client().equals("sdk") && ok(sdk) && ok(c)
                    ? String.format(Locale.ROOT, "**%.2f×**", c.score() / sdk.score()) : "";
            String vc = !c.client().equals("http") && ok(ceil) && ok(c)
                    ? String.format(Locale.ROOT, "%.2f", c.score() / ceil.score()) : "";
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.2f |%s%n",
                    c.op(), sizeName(c.size()), c.threads(), c.client(), fmt(c.score()), range(c),
                    ok(c) ? fmt(c.score() * c.size() / MIB) : "-", vs, vc, c.load(),
                    c.note().isEmpty() ? "" : " " + c.note()));
        }
        System.out.print(sb);
        return sb.toString();
    }

    private Cell transferRun(String op, String size, String t, String client) throws Exception {
        int n = Integer.parseInt(size);
        return runOne(TransferBenchmark.class.getName() + "." + op + "$",
                Map.of("client", client, "size", size), Integer.parseInt(t), n, op, client,
                n >= (64 << 20));
    }

    /** Rows of {@code rows}; ratios against the matching sdk client and the http ceiling. */
    private static void table(StringBuilder sb, List<Cell> rows, List<Cell> ceilings) {
        sb.append("| op | size | thr | client | ops/s | iterations min–max | MiB/s | vended/sdk | /ceiling | load1 |\n");
        sb.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for (Cell c : rows) {
            String vs = "";
            if (c.client.startsWith("vended")) {
                Cell sdk = find(rows, c.op, c.size, c.threads, c.client.replace("vended", "sdk"));
                if (ok(sdk) && ok(c)) {
                    vs = String.format(Locale.ROOT, "**%.2f×**", c.score / sdk.score);
                }
            }
            Cell ceil = find(ceilings, c.op, c.size, c.threads, "http");
            String vc = "";
            if (!c.client.equals("http") && ok(ceil) && ok(c)) {
                vc = String.format(Locale.ROOT, "%.2f", c.score / ceil.score);
            }
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.2f |%n",
                    c.op, sizeName(c.size), c.threads, c.client, fmt(c.score), range(c),
                    ok(c) ? fmt(c.score * c.size / MIB) : "-", vs, vc, c.load));
        }
    }

    private static Cell find(List<Cell> cells, String op, int size, int threads, String client) {
        for (Cell c : cells) {
            if (c.op.equals(op) && c.size == size && c.threads == threads && c.client.equals(client)) {
                return c;
            }
        }
        return null;
    }

    private Cell runOne(String include, Map<String, String> params, int threads, int size,
            String op, String client, boolean big) throws Exception {
        int wi = big ? intArg("big-wi", 1) : intArg("wi", 2);
        int w = big ? intArg("big-w", 2) : intArg("w", 1);
        int i = big ? intArg("big-i", 3) : intArg("i", 3);
        int r = big ? intArg("big-r", 3) : intArg("r", 2);
        List<String> jvm = new ArrayList<>(List.of(
                "-Xms6g", "-Xmx6g",
                "-D" + BenchEnv.ENDPOINT + "=" + endpoint,
                "-D" + BenchEnv.BUCKET + "=" + bucket,
                "-D" + BenchEnv.CEILING + "=" + ceiling,
                "-D" + BenchEnv.CHECK_FILE + "=" + checkFile));
        String jfr = args.get("jfr");
        String label = op + "-" + (size == 0 ? "" : sizeName(size) + "-") + "t" + threads
                + (client.equals("-") ? "" : "-" + client);
        if (jfr != null) {
            Files.createDirectories(Path.of(jfr));
            jvm.add("-XX:StartFlightRecording=filename=" + Path.of(jfr, label + ".jfr").toAbsolutePath()
                    + ",settings=profile");
        }
        jvm.addAll(forkArgs);
        ChainedOptionsBuilder b = new OptionsBuilder()
                .include(include)
                .forks(1)
                .threads(threads)
                .warmupIterations(wi)
                .warmupTime(TimeValue.seconds(w))
                .measurementIterations(i)
                .measurementTime(TimeValue.seconds(r))
                .jvmArgsAppend(jvm.toArray(new String[0]))
                .shouldFailOnError(true);
        params.forEach(b::param);
        System.out.printf(Locale.ROOT, "  running %-28s ...", label);
        long t0 = System.nanoTime();
        OutputFormat fmt = OutputFormatFactory.createFormatInstance(jmhLog, VerboseMode.NORMAL);
        double score = Double.NaN, error = Double.NaN, min = Double.NaN, max = Double.NaN;
        String unit = "";
        String note = "";
        try {
            Collection<RunResult> rr = new Runner(b.build(), fmt).run();
            for (RunResult x : rr) {
                Result<?> p = x.getPrimaryResult();
                score = p.getScore();
                error = p.getScoreError();
                min = p.getStatistics().getMin();
                max = p.getStatistics().getMax();
                unit = p.getScoreUnit();
            }
        } catch (Exception e) {
            note = "FAILED: " + e.getMessage();
        }
        double load = loadAverage();
        System.out.printf(Locale.ROOT, " %s %s (iterations %s–%s) (%d s, load1 %.2f)%s%n", fmt(score),
                unit, fmt(min), fmt(max), (System.nanoTime() - t0) / 1_000_000_000L, load,
                note.isEmpty() ? "" : "  " + note);
        return new Cell(op, size, threads, client, score, error, min, max, unit, load, note);
    }

    private static String range(Cell c) {
        return ok(c) ? fmt(c.min) + "–" + fmt(c.max) : "-";
    }

    static String sizeName(int size) {
        if (size >= 1 << 20) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1 << 10) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (v >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    private static String machine() {
        StringBuilder sb = new StringBuilder("## Machine\n\n");
        String cpu = "?";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (IOException ignored) {
            // not Linux
        }
        sb.append(String.format(Locale.ROOT, "- CPU: %s, %d cores; JVM %s (%s), max heap of the driver %d MiB%n",
                cpu, Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"),
                System.getProperty("java.vm.name"), Runtime.getRuntime().maxMemory() >> 20));
        sb.append(String.format(Locale.ROOT, "- load average at start: %.2f; started %s%n", loadAverage(), Instant.now()));
        return sb.toString();
    }
}
