package dev.vended.storage.bench.spark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * One JFR recording ({@code profile} settings) per query run, dumped to {@code DIR/<name>.jfr},
 * and a summary per group (FileSystem and query): Java execution samples by the first frame in
 * a known component (Parquet, Spark, S3A, the AWS SDK, Apache HttpClient, the library's JNI
 * calls, ...). Native threads of the library are not Java threads: their CPU is in the process
 * CPU only.
 */
final class Jfr {

    private final Path dir;
    private final Map<String, List<Path>> groups = new LinkedHashMap<>();
    private Recording current;
    private Path currentFile;

    Jfr(Path dir) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
    }

    void start(String name) throws IOException, ParseException {
        current = new Recording(Configuration.getConfiguration("profile"));
        currentFile = dir.resolve(name + ".jfr");
        current.start();
    }

    void stop(String group) throws IOException {
        current.stop();
        current.dump(currentFile);
        current.close();
        groups.computeIfAbsent(group, g -> new ArrayList<>()).add(currentFile);
    }

    private static final String[][] COMPONENTS = {
        {"dev.vended.storage.hadoop.", "VendedFileSystem"},
        {"dev.vended.storage.", "vended core (JNI)"},
        {"org.apache.hadoop.fs.s3a.", "S3A"},
        {"software.amazon.awssdk.thirdparty.org.apache.http.", "SDK Apache HttpClient"},
        {"software.amazon.awssdk.", "AWS SDK"},
        {"org.apache.http.", "Apache HttpClient"},
        {"org.apache.parquet.", "Parquet"},
        {"org.apache.spark.", "Spark"},
        {"org.apache.hadoop.", "Hadoop"},
        {"sun.nio.", "JDK NIO/sockets"},
        {"java.net.", "JDK NIO/sockets"},
        {"jdk.internal.", "JDK"},
        {"java.", "JDK"},
    };

    /**
     * The component a sample is charged to: the first I/O component anywhere in the stack (the
     * library, S3A, the SDK, HTTP clients, sockets), else the first frame of Parquet, else Spark,
     * else the top frame's class.
     */
    static String component(RecordedStackTrace st) {
        if (st == null || st.getFrames().isEmpty()) {
            return "?";
        }
        String fallback = null;
        for (RecordedFrame f : st.getFrames()) {
            String c = f.getMethod().getType().getName();
            for (String[] p : COMPONENTS) {
                if (c.startsWith(p[0])) {
                    if (IO.contains(p[1])) {
                        return p[1];
                    }
                    if (fallback == null && (p[1].equals("Parquet") || p[1].equals("Spark"))) {
                        fallback = p[1];
                    }
                }
            }
        }
        return fallback != null ? fallback : "other (" + st.getFrames().get(0).getMethod().getType().getName() + ")";
    }

    private static final java.util.Set<String> IO = java.util.Set.of("VendedFileSystem", "vended core (JNI)",
            "S3A", "SDK Apache HttpClient", "AWS SDK", "Apache HttpClient", "JDK NIO/sockets");

    /** Per group: samples by component, and the top self frames. */
    String summary() throws IOException {
        StringBuilder sb = new StringBuilder("\n### JFR: Java execution samples by component (I/O if any I/O frame is on the stack, else Parquet, else Spark)\n\n");
        for (Map.Entry<String, List<Path>> g : groups.entrySet()) {
            Map<String, Integer> comp = new HashMap<>();
            Map<String, Integer> self = new HashMap<>();
            int total = 0;
            for (Path p : g.getValue()) {
                for (RecordedEvent e : RecordingFile.readAllEvents(p)) {
                    if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                        continue;
                    }
                    total++;
                    comp.merge(component(e.getStackTrace()), 1, Integer::sum);
                    RecordedStackTrace st = e.getStackTrace();
                    if (st != null && !st.getFrames().isEmpty()) {
                        RecordedFrame f = st.getFrames().get(0);
                        self.merge(f.getMethod().getType().getName() + "." + f.getMethod().getName(), 1,
                                Integer::sum);
                    }
                }
            }
            sb.append(String.format(Locale.ROOT, "- **%s** (%d samples): %s; top frames: %s%n", g.getKey(),
                    total, top(comp, total, 8), top(self, total, 6)));
        }
        return sb.toString();
    }

    private static String top(Map<String, Integer> m, int total, int n) {
        StringBuilder sb = new StringBuilder();
        m.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(n).forEach(e -> {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(String.format(Locale.ROOT, "%s %.0f%%", e.getKey(), 100.0 * e.getValue() / Math.max(1, total)));
        });
        return sb.toString();
    }
}
