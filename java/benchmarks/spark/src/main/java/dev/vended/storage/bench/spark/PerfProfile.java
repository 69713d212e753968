package dev.vended.storage.bench.spark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import javax.management.ObjectName;

/**
 * {@code --profile-threads DIR} (issue 34): one {@code perf record} of this JVM per query run,
 * with frame-pointer call graphs ({@code run.sh} adds {@code -XX:+PreserveFramePointer}), so
 * that {@code thread_profile.py} can split the run's CPU by thread and by stack: the client's own
 * threads, the client's frames on Spark's task threads, and decoding.
 *
 * <p>perf starts with its events disabled ({@code -D -1}) and is driven through its control FIFO:
 * {@code enable} before the run's window opens, {@code disable} after it closes, each awaited on
 * perf's "Events enabled"/"Events disabled" lines; then SIGINT, and a wait for perf to exit
 * (its data file is complete then). After each run the JIT's symbol map ({@code Compiler.perfmap},
 * {@code /tmp/perf-<pid>.map}) is copied to {@code DIR/<run>.map}, so that each run is symbolized
 * with the code cache as it was. Per run: {@code DIR/<run>.data}, {@code .map}, {@code .log}, and
 * a row of {@code DIR/runs.tsv} (bytes fetched and process CPU of the window).
 */
final class PerfProfile {

    /** Samples per second per thread ({@code perf record -F}). */
    static final int FREQUENCY = 499;

    private final Path dir;
    private final long pid = ProcessHandle.current().pid();
    private Process perf;
    private RandomAccessFile ctl;
    private Path ctlFifo;
    private BlockingQueue<String> lines;
    private String name;
    private long procTicks;

    PerfProfile(Path dir) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("runs.tsv"), "run\tfs\tquery\tround\tpid\tfrequency\tbytes_fetched\t"
                + "cpu_ms\tproc_cpu_ms\twall_ms\n");
    }

    /**
     * Starts perf for run {@code run} and returns once its events are enabled. perf gives up on
     * attaching when a thread of this JVM exits while it opens one event per thread (Spark ends
     * idle threads between queries): then it is started again, at most 3 times.
     */
    void start(String run) throws IOException {
        name = run;
        ctlFifo = dir.resolve(run + ".ctl");
        Files.deleteIfExists(ctlFifo);
        exec("mkfifo", ctlFifo.toString());
        for (int attempt = 1; ; attempt++) {
            perf = new ProcessBuilder("perf", "record", "-D", "-1", "--control", "fifo:" + ctlFifo,
                    "-F", Integer.toString(FREQUENCY), "--call-graph=fp", "-N", "-B", "-p", Long.toString(pid),
                    "-o", dir.resolve(run + ".data").toString())
                    .redirectOutput(dir.resolve(run + ".out").toFile()).start();
            lines = new LinkedBlockingQueue<>();
            Process p = perf;
            BlockingQueue<String> q = lines;
            Path log = dir.resolve(run + (attempt == 1 ? "" : "-" + attempt) + ".log");
            Thread t = new Thread(() -> pump(p, q, log), "perf-stderr-" + run);
            t.setDaemon(true);
            t.start();
            try {
                // perf prints "Events disabled" once set up with -D -1 (FIFO open, threads attached).
                await("Events disabled");
                break;
            } catch (IOException e) {
                if (attempt == 3) {
                    throw e;
                }
                System.out.println("  (" + e.getMessage() + "; starting perf again)");
            }
        }
        // "rw": opening a FIFO read-write never blocks; perf holds the reading end.
        ctl = new RandomAccessFile(ctlFifo.toFile(), "rw");
        command("enable", "Events enabled");
        procTicks = procCpuTicks();
    }

    /** Stops the profile of the current run, waits for perf to exit, saves the JIT's symbols. */
    void stop(SparkBench.Result x) throws IOException {
        long ticks = procCpuTicks() - procTicks;
        command("disable", "Events disabled");
        perfMap(dir.resolve(name + ".map"));
        exec("kill", "-INT", Long.toString(perf.pid()));
        try {
            perf.waitFor();
            while (!lines.take().equals(EOF)) {
                // the pump's last lines ("Captured and wrote ...") go to the log
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for perf", e);
        }
        ctl.close();
        Files.deleteIfExists(ctlFifo);
        String row = String.format(Locale.ROOT, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.1f\t%d\t%.1f%n", name, x.fs(),
                x.what(), x.round(), pid, FREQUENCY, x.bytesIn(), x.cpuMs(), ticks * 10, x.wallMs());
        Files.writeString(dir.resolve("runs.tsv"), row, StandardOpenOption.APPEND);
    }

    private static final String EOF = "\0eof";

    /** Copies perf's stderr to the run's log and to {@code q}, then {@link #EOF}. */
    private static void pump(Process p, BlockingQueue<String> q, Path log) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
                Writer w = Files.newBufferedWriter(log)) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                w.write(l + "\n");
                w.flush();
                q.add(l);
            }
        } catch (IOException e) {
            q.add("pump: " + e);
        } finally {
            q.add(EOF);
        }
    }

    private void command(String cmd, String done) throws IOException {
        ctl.write((cmd + "\n").getBytes(StandardCharsets.US_ASCII));
        await(done);
    }

    /** Waits for perf to print a line containing {@code s}; fails if perf's stderr ends first. */
    private void await(String s) throws IOException {
        try {
            for (String l = lines.take(); !l.contains(s); l = lines.take()) {
                if (l.equals(EOF)) {
                    throw new IOException("perf ended (exit " + perf.waitFor() + ") before \"" + s + "\": see "
                            + dir.resolve(name + "*.log"));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for perf", e);
        }
    }

    /** {@code jcmd <pid> Compiler.perfmap}, in process: writes /tmp/perf-<pid>.map, copied to {@code to}. */
    private void perfMap(Path to) throws IOException {
        try {
            ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerPerfmap",
                    new Object[] {null}, new String[] {String[].class.getName()});
        } catch (javax.management.JMException e) {
            throw new IOException("Compiler.perfmap failed", e);
        }
        Files.copy(Path.of("/tmp/perf-" + pid + ".map"), to, StandardCopyOption.REPLACE_EXISTING);
    }

    /** utime + stime of this process in clock ticks (10 ms), from /proc/self/stat. */
    private static long procCpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    private static void exec(String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
