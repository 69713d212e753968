package dev.vended.storage.bench.spark;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.hadoop.VendedAbstractFileSystem;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;
import dev.vended.storage.testkit.VendedCredentials;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * Spark vs S3A (issue 23), one JVM: Spark {@code local[2]} writes a TPC-H {@code lineitem}-shaped
 * Parquet table (generated) once through each FileSystem, then runs alternating rounds (vended,
 * s3a, vended, s3a, ...) of a full scan with an aggregate, a selective filter with column pruning
 * and a small random lookup, against one in-memory {@code local-s3} started here. Each FileSystem
 * has its own bucket ({@code vended}, {@code s3a}) so the endpoint's request log tells their
 * requests apart; bytes are the kernel's loopback counters (see {@link Counters}).
 *
 * <pre>
 * --suite spark|random|integrity|delta   (spark; random: {@link RandomReads}; integrity:
 *                        {@link StreamCost}; delta: {@link DeltaBench}; options in their javadoc)
 * --scale-mb 2048        table size to aim at (Parquet, MiB); random: object size (max 1024)
 * --sizes 65536,1048576,8388608 --threads 1,4 --clients getRange,into,stream,sdk --budget-mb 256
 *                        random: read sizes, threads, clients,
 *                        MiB read per measurement
 * --rounds 3             alternating rounds of the three queries (after --warmup-rounds 1)
 * --out FILE --json FILE tables (markdown) and the machine-readable summary
 * --log-dir DIR          local-s3's log
 * --jfr DIR              one JFR recording (profile settings) per query run, summarized at the end
 * --profile-threads DIR  one perf profile of this JVM per query run ({@link PerfProfile}; root, perf,
 *                        run.sh adds -XX:+PreserveFramePointer and summarizes with thread_profile.py)
 * --first-write vended   which FileSystem writes its table first (vended or s3a)
 * --vended-checksums B   storage option checksums for the vended table (default the library's
 *                        true; false measures what checksums cost in Spark)
 * --vended-part-size N   vended.storage.write.part-size for the vended write (e.g. 16m; default
 *                        the library's 5 MiB)
 * </pre>
 *
 * Needs {@code -Dvended.storage.localS3=target/release/local-s3}.
 */
public final class SparkBench {

    static final String[] QUERIES = {"scan", "filter", "lookup"};
    static final String[] FS = {"vended", "s3a"};

    final Map<String, String> args = new LinkedHashMap<>();
    final List<Result> results = new ArrayList<>();
    final List<Result> writes = new ArrayList<>();
    LocalS3Server server;
    Counters counters;
    SparkSession spark;
    Jfr jfr;
    PerfProfile perf;

    /** One measured window. */
    record Result(String fs, String what, int round, double wallMs, long gets, long heads,
            long lists, long puts, long posts, long deletes, long copies, long bytesIn,
            long bytesOut, double cpuMs, double load, String answer, double endpointCpuMs) {}

    public static void main(String[] argv) throws Exception {
        SparkBench b = new SparkBench();
        for (int i = 0; i < argv.length; i++) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
                throw new IllegalArgumentException("bad argument " + argv[i] + " (see SparkBench javadoc)");
            }
            b.args.put(argv[i].substring(2), argv[++i]);
        }
        b.run();
    }

    String arg(String k, String d) {
        return args.getOrDefault(k, d);
    }

    void run() throws Exception {
        Path logDir = Path.of(arg("log-dir", "target"));
        Files.createDirectories(logDir);
        String started = Instant.now().toString();
        double load0 = Counters.load();
        try (LocalS3Server s3 = LocalS3Server.start(LocalS3Server.binaryFromProperty(), "vended",
                logDir.resolve("local-s3-spark.log"), true)) {
            server = s3;
            s3.createBucket("s3a");
            BenchProvider.server = s3;
            try (Counters c = new Counters(s3)) {
                counters = c;
                System.out.printf(Locale.ROOT, "local-s3 %s (in-memory); native %s; load1 %.2f; bytes counted: %s%n",
                        s3.endpoint(), ObjectStore.nativeVersion(), load0, c.bytesCounted());
                String report;
                if (arg("suite", "spark").equals("random")) {
                    report = new RandomReads(this).run();
                } else if (arg("suite", "spark").equals("integrity")) {
                    report = new StreamCost(this).run();
                } else if (arg("suite", "spark").equals("delta")) {
                    report = new DeltaBench(this).run();
                } else {
                    report = spark();
                }
                String head = String.format(Locale.ROOT, "started %s, load1 at start %.2f, at end %.2f%n",
                        started, load0, Counters.load());
                System.out.print(head);
                if (args.containsKey("out")) {
                    Files.writeString(Path.of(args.get("out")), head + report);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------

    String spark() throws Exception {
        long rows = (long) (Double.parseDouble(arg("scale-mb", "2048")) * 1024 * 1024
                / Double.parseDouble(arg("bytes-per-row", "39")));
        int files = Math.max(2, (int) Math.round(Double.parseDouble(arg("scale-mb", "2048")) / 128));
        int rounds = Integer.parseInt(arg("rounds", "3"));
        spark = builder("vended-bench-spark").getOrCreate();
        if (args.containsKey("jfr")) {
            jfr = new Jfr(Path.of(args.get("jfr")));
        }
        if (args.containsKey("profile-threads")) {
            perf = new PerfProfile(Path.of(args.get("profile-threads")));
        }
        spark.sparkContext().setLogLevel("WARN");
        return measure(rows, files, rounds);
    }

    /**
     * Spark {@code local[2]} with both FileSystems: {@code vended://} (VendedFileSystem, its
     * FileContext binding, table {@code bench} with {@link BenchProvider}'s keys) and {@code
     * s3a://} (one 4 h key), on the endpoint started here.
     */
    SparkSession.Builder builder(String app) throws java.io.IOException {
        VendedCredentials s3aKey = server.issueCredentials(4 * 3600_000L, null);
        SparkSession.Builder b = SparkSession.builder().appName(app).master("local[2]")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "4")
                // With or without the committer: VendedFileSystem writes its work paths itself.
                .config("spark.hadoop.fs.vended.impl", VendedFileSystem.class.getName())
                // ... and its FileContext binding (Spark's checkpoint files, Delta's checksums).
                .config("spark.hadoop.fs.AbstractFileSystem.vended.impl",
                        VendedAbstractFileSystem.class.getName())
                // Both: Parquet's vectored reads (readVectored), as S3A's docs recommend.
                .config("spark.hadoop.parquet.hadoop.vectored.io.enabled", "true");
        String t = "spark.hadoop.vended.storage.table.bench.";
        b.config(t + "location", "vended://vended/")
                .config(t + "provider.class", BenchProvider.class.getName())
                .config(t + "options.aws_endpoint", server.endpoint())
                .config(t + "options.aws_region", "us-east-1")
                .config(t + "options.aws_allow_http", "true")
                .config("spark.hadoop.bench.vended.ttl-ms", arg("vended-ttl-ms", "60000"));
        if (args.containsKey("vended-part-size")) {
            b.config("spark.hadoop.vended.storage.write.part-size", args.get("vended-part-size"));
        }
        if (args.containsKey("vended-checksums")) {
            b.config(t + "options.checksums", args.get("vended-checksums"));
        }
        String a = "spark.hadoop.fs.s3a.";
        b.config(a + "endpoint", server.endpoint())
                .config(a + "endpoint.region", "us-east-1")
                .config(a + "path.style.access", "true")
                .config(a + "connection.ssl.enabled", "false")
                .config(a + "aws.credentials.provider",
                        "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider")
                .config(a + "access.key", s3aKey.accessKeyId())
                .config(a + "secret.key", s3aKey.secretAccessKey())
                .config(a + "session.token", s3aKey.sessionToken())
                // S3A's advice for Parquet/ORC: random IO (ranged GETs sized to the read).
                .config(a + "experimental.input.fadvise", "random")
                .config(a + "bucket.probe", "0");
        return b;
    }

    /** The Parquet suite after the session started: writes, warm-up, alternating query rounds. */
    String measure(long rows, int files, int rounds) throws Exception {

        System.out.printf(Locale.ROOT, "table: %,d rows in %d files (aiming at %s MiB), %d rounds%n",
                rows, files, arg("scale-mb", "2048"), rounds);
        // Warm-up (not measured): a 1/16 table through each FileSystem, so that neither measured
        // write pays for the JIT alone.
        for (String fs : FS) {
            committer(fs);
            Lineitem.generate(spark, Math.max(1000, rows / 16), 2).write().mode(SaveMode.Overwrite)
                    .parquet(fs + "://" + fs + "/warmup");
        }
        counters.since(counters.mark());
        Map<String, Long> sizes = new LinkedHashMap<>();
        String[] writeOrder = arg("first-write", "vended").equals("s3a") ? new String[] {FS[1], FS[0]} : FS;
        for (String fs : writeOrder) {
            String path = base(fs);
            committer(fs);
            if (jfr != null) {
                jfr.start("0-" + fs + "-write");
            }
            Counters.Mark m = counters.mark();
            Lineitem.generate(spark, rows, files).write().mode(SaveMode.Overwrite).parquet(path);
            Result w = result(fs, "write", 0, counters.since(m), "");
            if (jfr != null) {
                jfr.stop(fs + "-write");
            }
            writes.add(w);
            sizes.put(fs, tableBytes(path));
            System.out.printf(Locale.ROOT, "  write %-6s %8.0f ms  %,d bytes  PUT %d POST %d DELETE %d copies %d  cpu %.0f ms  endpoint cpu %.0f ms  load1 %.1f%n",
                    fs, w.wallMs, sizes.get(fs), w.puts, w.posts, w.deletes, w.copies, w.cpuMs,
                    w.endpointCpuMs, w.load);
        }
        // Warm-up rounds (not measured; --warmup-rounds, default 1) on the 1/16 warm-up tables: the
        // first run of each query compiles its code, whichever FileSystem runs it.
        for (int r = 0; r < Integer.parseInt(arg("warmup-rounds", "1")); r++) {
            for (String fs : FS) {
                for (String q : QUERIES) {
                    Lineitem.query(spark.read().parquet(fs + "://" + fs + "/warmup"), q, r);
                }
            }
            System.out.printf(Locale.ROOT, "  warm-up round %d done%n", r + 1);
        }
        counters.since(counters.mark());
        SplittableRandom rnd = new SplittableRandom(23);
        for (int r = 1; r <= rounds; r++) {
            long key = rnd.nextLong(rows) / 4;
            for (String fs : (r % 2 == 1 ? FS : new String[] {FS[1], FS[0]})) {
                for (String q : QUERIES) {
                    Dataset<Row> table = spark.read().parquet(base(fs));
                    String name = r + "-" + fs + "-" + q;
                    if (jfr != null) {
                        jfr.start(name);
                    }
                    if (perf != null) {
                        perf.start(name);
                    }
                    Counters.Mark m = counters.mark();
                    String answer = Lineitem.query(table, q, key);
                    Result x = result(fs, q, r, counters.since(m), answer);
                    if (perf != null) {
                        perf.stop(x);
                    }
                    if (jfr != null) {
                        jfr.stop(fs + "-" + q);
                    }
                    results.add(x);
                    System.out.printf(Locale.ROOT, "  round %d %-6s %-6s %8.0f ms  GET %5d  %8.1f MiB  cpu %7.0f ms  endpoint cpu %6.0f ms  load1 %.1f  %s%n",
                            r, fs, q, x.wallMs, x.gets, x.bytesIn / 1048576.0, x.cpuMs, x.endpointCpuMs, x.load, answer);
                }
            }
        }
        spark.stop();
        String report = Report.spark(this, rows, files, sizes);
        System.out.print(report);
        if (jfr != null) {
            String prof = jfr.summary();
            System.out.print(prof);
            report += prof;
        }
        if (args.containsKey("json")) {
            Files.writeString(Path.of(args.get("json")), Report.json(this, rows, files, sizes));
        }
        return report;
    }

    /** Whether the vended side writes through the library's committer (no renames). */
    boolean pending() {
        if (arg("vended-committer", "pending").equals("default")) {
            return false;
        }
        try {
            Class.forName("dev.vended.storage.hadoop.PendingCommitter");
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** The vended side: the library's committer (when present); S3A: Spark's default commit. */
    void committer(String fs) {
        String[] keys = {"spark.sql.parquet.output.committer.class", "spark.sql.sources.outputCommitterClass"};
        for (String k : keys) {
            if (fs.equals("vended") && pending()) {
                spark.conf().set(k, "dev.vended.storage.hadoop.PendingCommitter");
            } else {
                spark.conf().unset(k);
            }
        }
    }

    String base(String fs) {
        return fs + "://" + fs + "/lineitem";
    }

    long tableBytes(String path) throws Exception {
        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(path);
        FileSystem fs = p.getFileSystem(spark.sparkContext().hadoopConfiguration());
        long n = 0;
        for (FileStatus s : fs.listStatus(p)) {
            if (s.getPath().getName().endsWith(".parquet")) {
                n += s.getLen();
            }
        }
        return n;
    }

    /**
     * A window's numbers for one FileSystem (its bucket). A copy is a PUT of a data file outside
     * the task attempt directories that is no part of a multipart upload of that key (no POST on
     * it): the default commit writes each file under {@code _temporary/0/_temporary/attempt_.../}
     * and renames it twice (task commit, job commit), each rename a server-side copy; the
     * library's committer uploads to the final key (POST, PUT parts, POST) and copies nothing.
     */
    Result result(String fs, String what, int round, Counters.Window w, String answer) {
        if (w.logOverflow()) {
            System.out.println("  (request log full: request counts of this window are a lower bound)");
        }
        long copies = 0;
        java.util.Set<String> uploads = new java.util.HashSet<>();
        for (RequestRecord r : w.requests()) {
            if (fs.equals(r.bucket()) && r.method().equals("POST") && r.key() != null) {
                uploads.add(r.key());
            }
        }
        for (RequestRecord r : w.requests()) {
            if (fs.equals(r.bucket()) && r.method().equals("PUT") && r.key() != null
                    && r.key().endsWith(".parquet") && !r.key().contains("/_temporary/0/_temporary/")
                    && !r.key().contains("__magic") && !uploads.contains(r.key())) {
                copies++;
            }
        }
        if (w.rejected() > 0) {
            System.out.println("  " + w.rejected() + " requests rejected in " + fs + " " + what);
        }
        return new Result(fs, what, round, w.wallNanos() / 1e6, w.count("GET", fs, true),
                w.count("HEAD", fs, true), w.count("GET", fs, false), w.count("PUT", fs, true),
                w.count("POST", fs, true), w.count("DELETE", fs, true) + w.count("POST", fs, false), copies, w.bytesFromEndpoint(),
                w.bytesToEndpoint(), w.cpuNanos() / 1e6, Counters.load(), answer,
                w.endpointCpuNanos() / 1e6);
    }
}
