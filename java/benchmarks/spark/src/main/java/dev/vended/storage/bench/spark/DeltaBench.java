package dev.vended.storage.bench.spark;

import dev.vended.storage.bench.spark.SparkBench.Result;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * A Delta job through each FileSystem (issue 31), in alternating order per round (vended first
 * in odd rounds): {@code vended://} with {@code VendedLogStore} (commits as create-only requests)
 * against {@code s3a://} with Delta's {@code S3SingleDriverLogStore} (a JVM lock, then exists and
 * create), on one in-memory {@code local-s3}. Each round writes a fresh table per FileSystem:
 *
 * <ol>
 *   <li>{@code write}: the {@code lineitem} table, {@code --scale-mb} MiB of Parquet (1024), one
 *       commit;
 *   <li>{@code appends}: {@code --appends} (20) appends of 1/200 of the table each, one commit
 *       each;
 *   <li>{@code merge}: {@code MERGE} of 20,000 rows, half updating lines of the first file (which
 *       Delta rewrites), half inserted;
 *   <li>{@code scan} and {@code filter}: the Parquet suite's full scan and TPC-H Q6 on the table.
 * </ol>
 *
 * Per phase: wall time, client CPU, requests by verb and bytes each way (the endpoint's log and
 * the loopback counters, as {@link SparkBench}); answers compared between the FileSystems.
 * Options: {@code --scale-mb 1024 --appends 20 --rounds 2}.
 */
final class DeltaBench {

    static final String[] PHASES = {"write", "appends", "merge", "scan", "filter"};
    static final String VENDED_LOG_STORE = "dev.vended.storage.delta.VendedLogStore";

    private final SparkBench b;
    private final List<Result> results = new ArrayList<>();

    DeltaBench(SparkBench b) {
        this.b = b;
    }

    String run() throws Exception {
        double scaleMb = Double.parseDouble(b.arg("scale-mb", "1024"));
        long rows = (long) (scaleMb * 1024 * 1024 / Double.parseDouble(b.arg("bytes-per-row", "39")));
        int files = Math.max(2, (int) Math.round(scaleMb / 128));
        int appends = Integer.parseInt(b.arg("appends", "20"));
        int rounds = Integer.parseInt(b.arg("rounds", "2"));
        boolean vendedLogStore = present(VENDED_LOG_STORE);
        SparkSession.Builder builder = b.builder("vended-bench-delta")
                .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                .config("spark.delta.logStore.s3a.impl", "io.delta.storage.S3SingleDriverLogStore")
                .config("spark.databricks.delta.retentionDurationCheck.enabled", "false");
        if (vendedLogStore) {
            builder.config("spark.delta.logStore.vended.impl", VENDED_LOG_STORE);
        }
        SparkSession spark = builder.getOrCreate();
        b.spark = spark;
        spark.sparkContext().setLogLevel("WARN");
        System.out.printf(Locale.ROOT, "delta: %,d rows in %d files (%s MiB), %d appends, %d rounds; vended log store: %s%n",
                rows, files, b.arg("scale-mb", "1024"), appends, rounds,
                vendedLogStore ? VENDED_LOG_STORE : "Delta's default (VendedLogStore not on the class path)");
        // Warm-up (not measured): the whole job on a 1/64 table through each FileSystem.
        for (String fs : SparkBench.FS) {
            job(spark, fs, fs + "://" + fs + "/delta-warmup", Math.max(4000, rows / 64), 2, 2, 0);
        }
        b.counters.since(b.counters.mark());
        for (int r = 1; r <= rounds; r++) {
            String[] order = r % 2 == 1 ? SparkBench.FS : new String[] {SparkBench.FS[1], SparkBench.FS[0]};
            for (String fs : order) {
                job(spark, fs, fs + "://" + fs + "/delta-" + r, rows, files, appends, r);
            }
        }
        spark.stop();
        String report = report(rows, files, appends, rounds, vendedLogStore);
        System.out.print(report);
        return report;
    }

    /** The five phases on a new table at {@code path}; measured when {@code round > 0}. */
    private void job(SparkSession spark, String fs, String path, long rows, int files, int appends, int round)
            throws Exception {
        long appendRows = Math.max(100, rows / 200);
        String table = "delta.`" + path + "`";
        Counters.Mark m = b.counters.mark();
        Lineitem.generate(spark, rows, files).write().format("delta").mode(SaveMode.Overwrite).save(path);
        record(fs, "write", round, m, count(spark, table));
        m = b.counters.mark();
        for (int i = 0; i < appends; i++) {
            Lineitem.generate(spark, rows + i * appendRows, appendRows, 1).write().format("delta")
                    .mode(SaveMode.Append).save(path);
        }
        record(fs, "appends", round, m, count(spark, table));
        m = b.counters.mark();
        Dataset<Row> source = Lineitem.generate(spark, 0, 10_000, 1)
                .union(Lineitem.generate(spark, 10 * rows, 10_000, 1))
                .withColumn("l_comment", org.apache.spark.sql.functions.lit("merged"));
        source.createOrReplaceTempView("merge_source");
        spark.sql("MERGE INTO " + table + " t USING merge_source s"
                + " ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber"
                + " WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
        record(fs, "merge", round, m, spark.sql("SELECT count(*), count_if(l_comment = 'merged') FROM " + table)
                .first().toString());
        for (String q : new String[] {"scan", "filter"}) {
            m = b.counters.mark();
            String answer = Lineitem.query(spark.read().format("delta").load(path), q, 0);
            record(fs, q, round, m, answer);
        }
    }

    private static String count(SparkSession spark, String table) {
        return spark.sql("SELECT count(*) FROM " + table).first().toString();
    }

    private void record(String fs, String phase, int round, Counters.Mark m, String answer)
            throws java.io.IOException {
        Result x = b.result(fs, phase, round, b.counters.since(m), answer);
        if (round == 0) {
            return;
        }
        results.add(x);
        System.out.printf(Locale.ROOT, "  round %d %-6s %-7s %9.0f ms  GET %5d HEAD %4d LIST %4d PUT %5d  in %8.1f MiB"
                        + "  out %8.1f MiB  cpu %7.0f ms  load1 %.1f  %s%n",
                round, fs, phase, x.wallMs(), x.gets(), x.heads(), x.lists(), x.puts(), x.bytesIn() / 1048576.0,
                x.bytesOut() / 1048576.0, x.cpuMs(), x.load(), answer);
    }

    private List<Result> of(String fs, String phase) {
        List<Result> out = new ArrayList<>();
        for (Result r : results) {
            if (r.fs().equals(fs) && r.what().equals(phase)) {
                out.add(r);
            }
        }
        return out;
    }

    private String report(long rows, int files, int appends, int rounds, boolean vendedLogStore) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n## Delta: VendedFileSystem + %s vs S3A + S3SingleDriverLogStore%n%n"
                        + "%,d rows in %d files, %d appends, %d rounds (medians); provider calls (vended): %d;"
                        + " *speed-up* = s3a time / vended time%n%n",
                vendedLogStore ? "VendedLogStore" : "Delta's default log store", rows, files, appends, rounds,
                BenchProvider.CALLS.get()));
        sb.append("| phase | wall s vended | wall s s3a | speed-up | CPU s vended | CPU s s3a"
                + " | requests vended (GET/HEAD/LIST/PUT/POST/DELETE) | requests s3a | MiB in/out vended | MiB in/out s3a"
                + " | same answer |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---|---|---|---|---|\n");
        for (String p : PHASES) {
            List<Result> v = of("vended", p);
            List<Result> s = of("s3a", p);
            double wv = Report.median(v, Result::wallMs), ws = Report.median(s, Result::wallMs);
            boolean same = true;
            for (int i = 0; i < Math.min(v.size(), s.size()); i++) {
                same &= v.get(i).answer().equals(s.get(i).answer());
            }
            sb.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | **%.2f×** | %.2f | %.2f | %s | %s | %s | %s | %s |%n",
                    p, wv / 1000, ws / 1000, ws / wv, Report.median(v, Result::cpuMs) / 1000,
                    Report.median(s, Result::cpuMs) / 1000, requests(v), requests(s), bytes(v), bytes(s),
                    same ? "yes" : "**no**"));
        }
        return sb.toString();
    }

    private static String requests(List<Result> rs) {
        return String.format(Locale.ROOT, "%.0f/%.0f/%.0f/%.0f/%.0f/%.0f", Report.median(rs, Result::gets),
                Report.median(rs, Result::heads), Report.median(rs, Result::lists), Report.median(rs, Result::puts),
                Report.median(rs, Result::posts), Report.median(rs, Result::deletes));
    }

    private static String bytes(List<Result> rs) {
        return String.format(Locale.ROOT, "%.1f/%.1f", Report.median(rs, Result::bytesIn) / 1048576.0,
                Report.median(rs, Result::bytesOut) / 1048576.0);
    }

    private static boolean present(String className) {
        try {
            Class.forName(className);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
