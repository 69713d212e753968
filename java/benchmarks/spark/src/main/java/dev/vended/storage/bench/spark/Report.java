package dev.vended.storage.bench.spark;

import dev.vended.storage.bench.spark.SparkBench.Result;

import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** The Spark suite's tables (markdown) and machine-readable summary (JSON, Jackson). */
final class Report {

    private Report() {}

    static double median(List<Result> rs, ToDoubleFunction<Result> f) {
        double[] v = rs.stream().mapToDouble(f).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static List<Result> of(SparkBench b, String fs, String q) {
        List<Result> out = new ArrayList<>();
        for (Result r : b.results) {
            if (r.fs().equals(fs) && r.what().equals(q)) {
                out.add(r);
            }
        }
        return out;
    }

    static String spark(SparkBench b, long rows, int files, Map<String, Long> sizes) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n## Spark local[2]: VendedFileSystem vs S3A%n%n"
                + "Table: %,d rows, %d files, %.0f MiB (vended) / %.0f MiB (s3a) of Parquet; provider calls"
                + " (vended, %s ms keys): %d%n%n", rows, files, sizes.get("vended") / 1048576.0,
                sizes.get("s3a") / 1048576.0, b.arg("vended-ttl-ms", "60000"), BenchProvider.CALLS.get()));
        sb.append("| write | wall s | PUT | POST | DELETE (bulk: 1 POST) | copies (PUT of a data file outside the attempt dirs) | MiB sent | client CPU s | endpoint CPU s | load1 |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result w : b.writes) {
            sb.append(String.format(Locale.ROOT, "| %s | %.1f | %d | %d | %d | %d | %s | %.1f | %.1f | %.1f |%n", w.fs(),
                    w.wallMs() / 1000, w.puts(), w.posts(), w.deletes(), w.copies(), mib(w.bytesOut()),
                    w.cpuMs() / 1000, w.endpointCpuMs() / 1000, w.load()));
        }
        sb.append("\nQueries, median of the rounds (vended / s3a); *speed-up* = s3a time / vended time,"
                + " *bytes ratio* = vended / s3a:\n\n");
        sb.append("| query | wall ms vended | wall ms s3a | speed-up | GETs vended | GETs s3a | MiB fetched vended"
                + " | MiB fetched s3a | bytes ratio | CPU ms vended | CPU ms s3a | same answer |\n");
        sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (String q : SparkBench.QUERIES) {
            List<Result> v = of(b, "vended", q);
            List<Result> s = of(b, "s3a", q);
            double wv = median(v, Result::wallMs), ws = median(s, Result::wallMs);
            double bv = median(v, Result::bytesIn), bs = median(s, Result::bytesIn);
            boolean same = v.stream().map(Result::answer).distinct().count() <= v.stream().map(Result::round).distinct().count()
                    && answersMatch(v, s);
            sb.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | **%.2f×** | %.0f | %.0f | %s | %s | %s | %.0f | %.0f | %s |%n",
                    q, wv, ws, ws / wv, median(v, Result::gets), median(s, Result::gets), mib((long) bv),
                    mib((long) bs), bs > 0 ? String.format(Locale.ROOT, "%.2f", bv / bs) : "-",
                    median(v, Result::cpuMs), median(s, Result::cpuMs), same ? "yes" : "NO"));
        }
        sb.append("\nEvery run (wall ms / GETs / MiB fetched / CPU ms / load1):\n\n| round | fs |");
        Arrays.stream(SparkBench.QUERIES).forEach(q -> sb.append(" ").append(q).append(" |"));
        sb.append("\n|---|---|---|---|---|\n");
        for (int r = 1; r <= Integer.parseInt(b.arg("rounds", "3")); r++) {
            for (String fs : SparkBench.FS) {
                sb.append("| ").append(r).append(" | ").append(fs).append(" |");
                for (String q : SparkBench.QUERIES) {
                    for (Result x : of(b, fs, q)) {
                        if (x.round() == r) {
                            sb.append(String.format(Locale.ROOT, " %.0f / %d / %s / %.0f / %.1f |", x.wallMs(),
                                    x.gets(), mib(x.bytesIn()), x.cpuMs(), x.load()));
                        }
                    }
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    private static boolean answersMatch(List<Result> v, List<Result> s) {
        for (Result a : v) {
            for (Result c : s) {
                if (a.round() == c.round() && !a.answer().equals(c.answer())) {
                    return false;
                }
            }
        }
        return true;
    }

    static String mib(long bytes) {
        return bytes < 0 ? "-" : String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }

    static String json(SparkBench b, long rows, int files, Map<String, Long> sizes) throws IOException {
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("rows", rows);
        top.put("files", files);
        top.put("bytes_vended", sizes.get("vended"));
        top.put("bytes_s3a", sizes.get("s3a"));
        top.put("vended_committer", b.pending() ? "pending" : "default");
        List<Map<String, Object>> runs = new ArrayList<>();
        List<Result> all = new ArrayList<>(b.writes);
        all.addAll(b.results);
        for (Result r : all) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("fs", r.fs());
            m.put("what", r.what());
            m.put("round", r.round());
            m.put("wall_ms", r.wallMs());
            m.put("gets", r.gets());
            m.put("heads", r.heads());
            m.put("lists", r.lists());
            m.put("puts", r.puts());
            m.put("posts", r.posts());
            m.put("deletes", r.deletes());
            m.put("copies", r.copies());
            m.put("bytes_from_endpoint", r.bytesIn());
            m.put("bytes_to_endpoint", r.bytesOut());
            m.put("cpu_ms", r.cpuMs());
            m.put("endpoint_cpu_ms", r.endpointCpuMs());
            m.put("load1", r.load());
            m.put("answer", r.answer());
            runs.add(m);
        }
        top.put("runs", runs);
        return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(top);
    }
}
