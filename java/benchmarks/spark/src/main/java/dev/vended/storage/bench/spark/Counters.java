package dev.vended.storage.bench.spark;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a benchmark window costs, measured outside the clients: requests from the endpoint's request
 * log (method, bucket, key), bytes on the loopback from iptables counters on the endpoint's port
 * (kernel counters, no proxy; only when running as root with iptables, otherwise -1), the JVM's
 * process CPU (every thread, native ones included; the endpoint is another process).
 */
final class Counters implements AutoCloseable {

    /** The endpoint keeps the last 100,000 requests; a window is only counted below that. */
    static final int LOG_CAP = 100_000;

    private final LocalS3Server server;
    private final int port;
    private final boolean iptables;
    private int logSeen;

    Counters(LocalS3Server server) throws IOException {
        this.server = server;
        this.port = server.port();
        this.iptables = addRules();
        this.logSeen = server.requests().size();
    }

    boolean bytesCounted() {
        return iptables;
    }

    /** One window: requests, bytes from and to the endpoint, CPU. */
    record Window(List<RequestRecord> requests, long bytesFromEndpoint, long bytesToEndpoint,
            long cpuNanos, long wallNanos, boolean logOverflow, long endpointCpuNanos,
            long contextSwitches) {

        long count(String method, String bucket, boolean withKey) {
            return requests.stream()
                    .filter(r -> r.method().equals(method) && bucket.equals(r.bucket())
                            && (r.key() != null && !r.key().isEmpty()) == withKey)
                    .count();
        }

        long rejected() {
            return requests.stream().filter(r -> !r.accepted()).count();
        }
    }

    /** Starts a window. */
    Mark mark() throws IOException {
        return new Mark(bytes(true), bytes(false), cpuNanos(), System.nanoTime(), endpointCpuNanos(),
                contextSwitches());
    }

    record Mark(long from, long to, long cpu, long wall, long endpointCpu, long switches) {}

    /** Ends the window begun at {@code m}. */
    Window since(Mark m) throws IOException {
        long wall = System.nanoTime() - m.wall;
        long cpu = cpuNanos() - m.cpu;
        long from = bytes(true);
        long to = bytes(false);
        List<RequestRecord> log = server.requests();
        boolean overflow = log.size() >= LOG_CAP;
        List<RequestRecord> w = new ArrayList<>(log.subList(Math.min(logSeen, log.size()), log.size()));
        logSeen = log.size();
        long endpointCpu = endpointCpuNanos();
        long switches = contextSwitches();
        return new Window(w, iptables ? from - m.from : -1, iptables ? to - m.to : -1, cpu, wall,
                overflow, endpointCpu < 0 || m.endpointCpu < 0 ? -1 : endpointCpu - m.endpointCpu,
                switches < 0 || m.switches < 0 ? -1 : switches - m.switches);
    }

    /**
     * CPU time (user + system) of the endpoint, this JVM's {@code local-s3} child, from {@code
     * /proc/<pid>/stat} in clock ticks of 10 ms (Linux's USER_HZ); -1 when not found.
     */
    static long endpointCpuNanos() {
        return ProcessHandle.current().children()
                .filter(p -> p.info().command().map(c -> c.endsWith("local-s3")).orElse(false))
                .findFirst()
                .map(p -> {
                    try {
                        String stat = java.nio.file.Files.readString(
                                java.nio.file.Path.of("/proc/" + p.pid() + "/stat"));
                        // fields after the ")" closing the command: state is field 3, utime 14
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
                    } catch (IOException | RuntimeException e) {
                        return -1L;
                    }
                })
                .orElse(-1L);
    }

    /**
     * Context switches (voluntary: a thread blocked, e.g. waiting for a hand-off; involuntary:
     * preempted) of this JVM's live threads, summed over {@code /proc/self/task/<tid>/status};
     * -1 when unreadable. Threads that ended within a window are not counted (the benchmarks'
     * threads live across their windows).
     */
    static long contextSwitches() {
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
            return tasks.mapToLong(t -> {
                try {
                    long n = 0;
                    for (String line : java.nio.file.Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")
                                || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                    return n;
                } catch (IOException | RuntimeException e) {
                    return 0; // the thread ended while listed
                }
            }).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    // -- iptables: two counting rules (no target) in OUTPUT on lo, removed at close -------------

    private String rule(boolean fromEndpoint) {
        return "-o lo -p tcp " + (fromEndpoint ? "--sport " : "--dport ") + port
                + " -m comment --comment vended-bench";
    }

    private boolean addRules() {
        try {
            if (!run("iptables -w -A OUTPUT " + rule(true)) || !run("iptables -w -A OUTPUT " + rule(false))) {
                System.out.println("(iptables unavailable: bytes are not counted)");
                return false;
            }
            return true;
        } catch (IOException e) {
            System.out.println("(iptables unavailable: bytes are not counted: " + e.getMessage() + ")");
            return false;
        }
    }

    private long bytes(boolean fromEndpoint) throws IOException {
        if (!iptables) {
            return 0;
        }
        String want = (fromEndpoint ? "spt:" : "dpt:") + port;
        Process p = new ProcessBuilder("iptables", "-w", "-L", "OUTPUT", "-n", "-v", "-x")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        waitFor(p);
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (line.contains(want) && line.contains("vended-bench") && f.length > 2) {
                return Long.parseLong(f[1]);
            }
        }
        throw new IOException("iptables counter for " + want + " not found");
    }

    private static boolean run(String cmd) throws IOException {
        Process p = new ProcessBuilder(cmd.split(" ")).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return waitFor(p) == 0;
    }

    private static int waitFor(Process p) throws IOException {
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("iptables did not finish in 30 s");
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (iptables) {
            try {
                run("iptables -w -D OUTPUT " + rule(true));
                run("iptables -w -D OUTPUT " + rule(false));
            } catch (IOException e) {
                System.err.println("cannot remove the iptables counting rules: " + e.getMessage());
            }
        }
    }

    /** 1-minute load average, NaN if unknown. */
    static double load() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }
}
