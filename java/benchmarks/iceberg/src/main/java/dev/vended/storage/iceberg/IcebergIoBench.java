package dev.vended.storage.iceberg;

import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RequestRecord;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Iceberg: VendedFileIO vs Iceberg's S3FileIO (issue 24), run by {@code bin/bench --suite
 * iceberg} (java/benchmarks/iceberg/run.sh). One Spark 4.1 {@code local[2]} session with two
 * Iceberg REST catalogs on the same vending layer (java/iceberg's test {@link VendingCatalog} in
 * front of Iceberg's REST catalog test server, a child JVM), differing only in {@code io-impl}.
 * Each round runs the same job once per FileIO, alternating which goes first, on a fresh table:
 * write N rows, 3 appends of N/10, a full scan aggregate, a selective filter. Per phase: wall
 * time, the requests the endpoint logged under the table's prefix signed with vended keys (the
 * client's, not the REST server's metadata writes), and the process CPU time of this JVM (driver
 * and local executors). Credentials live one hour: no refresh happens during a run.
 *
 * <p>Arguments: {@code --scale ROWS} (default 4,000,000), {@code --rounds N} (default 3),
 * {@code --out FILE} (markdown table).
 */
public final class IcebergIoBench {

    private static final String[] IOS = {"vended", "s3fileio"};
    private static final String[] PHASES = {"write", "append x3", "scan agg", "filter"};

    private IcebergIoBench() {}

    /** One measured phase. */
    record Phase(String io, int round, String phase, long wallMs, long cpuMs, long gets, long puts, long other) {}

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private static ExtensionContext context() {
        return (ExtensionContext)
                Proxy.newProxyInstance(
                        IcebergIoBench.class.getClassLoader(),
                        new Class<?>[] {ExtensionContext.class},
                        (p, m, a) -> {
                            if (m.getName().equals("getUniqueId")) {
                                return "iceberg-io-bench";
                            }
                            throw new UnsupportedOperationException(m.getName());
                        });
    }

    public static void main(String[] args) throws Exception {
        long scale = 4_000_000L;
        int rounds = 3;
        Path out = Paths.get("iceberg-results.md");
        for (int i = 0; i + 1 < args.length; i++) {
            switch (args[i]) {
                case "--scale" -> scale = Long.parseLong(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--out" -> out = Paths.get(args[++i]);
                default -> { }
            }
        }
        if (scale < 10_000 || rounds < 1 || rounds > 20) {
            throw new IllegalArgumentException("--scale must be >= 10000 rows and --rounds 1..20");
        }
        LocalS3Extension s3 = LocalS3Extension.create().bucket("tables");
        ExtensionContext ctx = context();
        s3.beforeAll(ctx);
        Process rest = null;
        VendingCatalog vending = null;
        SparkSession spark = null;
        try {
            int port;
            try (ServerSocket s = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            rest = RestCatalogServerMain.start(port, s3);
            vending = new VendingCatalog("http://127.0.0.1:" + port, s3, Duration.ofHours(1));
            SparkSession.Builder b =
                    SparkSession.builder()
                            .appName("iceberg-io-bench")
                            .master("local[2]")
                            .config("spark.ui.enabled", "false")
                            .config("spark.driver.host", "127.0.0.1")
                            .config("spark.driver.bindAddress", "127.0.0.1")
                            .config("spark.sql.shuffle.partitions", "2")
                            .config("spark.sql.session.timeZone", "UTC")
                            .config("spark.sql.extensions",
                                    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions");
            for (String io : IOS) {
                String c = "spark.sql.catalog." + io;
                b.config(c, "org.apache.iceberg.spark.SparkCatalog")
                        .config(c + ".type", "rest")
                        .config(c + ".uri", vending.uri())
                        .config(c + ".s3.endpoint", s3.endpoint())
                        .config(c + ".client.region", s3.region());
            }
            b.config("spark.sql.catalog.vended.io-impl", "dev.vended.storage.iceberg.VendedFileIO");
            b.config("spark.sql.catalog.s3fileio.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
                    .config("spark.sql.catalog.s3fileio.s3.path-style-access", "true");
            spark = b.getOrCreate();
            for (String io : IOS) {
                spark.sql("CREATE NAMESPACE IF NOT EXISTS " + io + ".db");
            }
            // Warm-up (not measured): the JIT and both clients, at a twentieth of the scale.
            for (String io : IOS) {
                runJob(spark, s3, vending, io, "warm_" + io, Math.max(10_000, scale / 20), -1);
            }
            List<Phase> all = new ArrayList<>();
            for (int r = 1; r <= rounds; r++) {
                for (int k = 0; k < IOS.length; k++) {
                    String io = IOS[(k + r + 1) % 2];
                    all.addAll(runJob(spark, s3, vending, io, "t_" + io + "_" + r, scale, r));
                }
            }
            String report = report(all, scale, rounds);
            System.out.println(report);
            Files.writeString(out, report);
        } finally {
            if (spark != null) {
                spark.stop();
            }
            if (vending != null) {
                vending.close();
            }
            if (rest != null) {
                rest.getOutputStream().close();
                if (!rest.waitFor(20, TimeUnit.SECONDS)) {
                    rest.destroyForcibly();
                }
            }
            s3.afterAll(ctx);
        }
    }

    private static long[] requests(LocalS3Extension s3, VendingCatalog vending, String prefix) {
        Set<String> vended = new HashSet<>();
        for (VendedCredentials c : vending.allKeys()) {
            vended.add(c.accessKeyId());
        }
        List<RequestRecord> log = s3.requests();
        if (log.size() >= 100_000) {
            throw new IllegalStateException("the endpoint's request log is full (100,000): lower --scale");
        }
        long gets = 0, puts = 0, other = 0;
        for (RequestRecord r : log) {
            if (r.key() == null || !r.key().startsWith(prefix) || !vended.contains(r.accessKeyId())) {
                continue;
            }
            switch (r.method()) {
                case "GET" -> gets++;
                case "PUT" -> puts++;
                default -> other++;
            }
        }
        return new long[] {gets, puts, other};
    }

    private static List<Phase> runJob(
            SparkSession spark, LocalS3Extension s3, VendingCatalog vending, String io, String table, long n, int round)
            throws Exception {
        String t = io + ".db." + table;
        String prefix = "wh/db/" + table + "/";
        long append = n / 10;
        List<Phase> phases = new ArrayList<>();
        for (int p = 0; p < PHASES.length; p++) {
            long[] req0 = requests(s3, vending, prefix);
            long cpu0 = cpuNanos();
            long t0 = System.nanoTime();
            switch (p) {
                case 0 -> {
                    spark.sql("CREATE TABLE " + t + " (id BIGINT, k INT, v DOUBLE, s STRING) USING iceberg");
                    rows(spark, 0, n, 4).writeTo(t).append();
                }
                case 1 -> {
                    for (int a = 0; a < 3; a++) {
                        rows(spark, n + a * append, n + (a + 1) * append, 2).writeTo(t).append();
                    }
                }
                case 2 -> {
                    Row r = spark.sql("SELECT count(*), sum(k), max(s), sum(v) FROM " + t).first();
                    long total = n + 3 * append;
                    if (r.getLong(0) != total) {
                        throw new IllegalStateException(t + ": scan counted " + r.getLong(0) + " rows, wrote " + total);
                    }
                }
                default -> {
                    long lo = n / 2;
                    Row r = spark.sql("SELECT count(*), sum(id) FROM " + t + " WHERE id BETWEEN " + lo + " AND "
                                    + (lo + 999)).first();
                    long expect = 1000L * lo + 999L * 1000L / 2;
                    if (r.getLong(0) != 1000 || r.getLong(1) != expect) {
                        throw new IllegalStateException(t + ": filter answered " + r + ", expected 1000 rows summing " + expect);
                    }
                }
            }
            long wallMs = (System.nanoTime() - t0) / 1_000_000;
            long cpuMs = (cpuNanos() - cpu0) / 1_000_000;
            long[] req1 = requests(s3, vending, prefix);
            Phase ph = new Phase(io, round, PHASES[p], wallMs, cpuMs,
                    req1[0] - req0[0], req1[1] - req0[1], req1[2] - req0[2]);
            System.out.printf(Locale.ROOT, "%s round %d %-9s %7d ms wall %7d ms cpu  GET %d PUT %d other %d%n",
                    io, round, ph.phase(), wallMs, cpuMs, ph.gets(), ph.puts(), ph.other());
            phases.add(ph);
        }
        return phases;
    }

    private static org.apache.spark.sql.Dataset<Row> rows(SparkSession spark, long from, long to, int parts) {
        return spark.range(from, to, 1, parts)
                .selectExpr("id", "CAST(id % 1000 AS INT) AS k", "CAST(id AS DOUBLE) * 1.5 AS v",
                        "concat('row-', CAST(id AS STRING), '-', sha2(CAST(id AS STRING), 256)) AS s");
    }

    private static long median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        int m = s.size() / 2;
        return s.size() % 2 == 1 ? s.get(m) : (s.get(m - 1) + s.get(m)) / 2;
    }

    private static String report(List<Phase> all, long scale, int rounds) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Scale %,d rows (+3 appends of %,d), %d alternating rounds, medians%n%n",
                scale, scale / 10, rounds));
        sb.append("| phase | VendedFileIO wall ms | S3FileIO wall ms | wall ratio V/S | VendedFileIO CPU ms | S3FileIO CPU ms"
                + " | CPU ratio V/S | requests V (GET/PUT/other) | requests S (GET/PUT/other) |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---|---|\n");
        List<String> order = new ArrayList<>(List.of(PHASES));
        order.add("total");
        for (String phase : order) {
            Map<String, long[]> med = new LinkedHashMap<>();
            for (String io : IOS) {
                List<Long> wall = new ArrayList<>(), cpu = new ArrayList<>(), g = new ArrayList<>(),
                        pu = new ArrayList<>(), o = new ArrayList<>();
                for (int r = 1; r <= rounds; r++) {
                    long w = 0, c = 0, gg = 0, pp = 0, oo = 0;
                    for (Phase p : all) {
                        if (p.io().equals(io) && p.round() == r && (phase.equals("total") || p.phase().equals(phase))) {
                            w += p.wallMs(); c += p.cpuMs(); gg += p.gets(); pp += p.puts(); oo += p.other();
                        }
                    }
                    wall.add(w); cpu.add(c); g.add(gg); pu.add(pp); o.add(oo);
                }
                med.put(io, new long[] {median(wall), median(cpu), median(g), median(pu), median(o)});
            }
            long[] v = med.get("vended");
            long[] s = med.get("s3fileio");
            sb.append(String.format(Locale.ROOT, "| %s | %d | %d | %.2f | %d | %d | %.2f | %d/%d/%d | %d/%d/%d |%n",
                    phase, v[0], s[0], (double) v[0] / Math.max(1, s[0]), v[1], s[1], (double) v[1] / Math.max(1, s[1]),
                    v[2], v[3], v[4], s[2], s[3], s[4]));
        }
        sb.append("\nEvery run:\n\n| io | round | phase | wall ms | CPU ms | GET | PUT | other |\n|---|---:|---|---:|---:|---:|---:|---:|\n");
        for (Phase p : all) {
            sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %d | %d | %d | %d | %d |%n",
                    p.io(), p.round(), p.phase(), p.wallMs(), p.cpuMs(), p.gets(), p.puts(), p.other()));
        }
        return sb.toString();
    }
}
