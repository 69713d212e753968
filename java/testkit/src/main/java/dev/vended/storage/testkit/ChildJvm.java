package dev.vended.storage.testkit;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * Runs a {@code main} class in a child JVM (the same {@code java} as this one) with a hard timeout;
 * its stdout and stderr go to a log file under {@code target/child-jvm-logs/} that is read back.
 * When this JVM runs with {@code -Xcheck:jni}, so does the child, and {@link Result#jniWarnings()}
 * lists what the child's JVM printed about JNI.
 */
public final class ChildJvm {

    /** What the JVM prints for a JNI problem under {@code -Xcheck:jni} (same as bin/test). */
    public static final Pattern JNI_WARNING =
            Pattern.compile(
                    "WARNING in native method|WARNING: JNI|FATAL ERROR in native method",
                    Pattern.MULTILINE);

    private static final AtomicInteger COUNTER = new AtomicInteger();

    private ChildJvm() {}

    /**
     * The outcome of a child JVM.
     *
     * @param command the command line
     * @param exitCode the exit code, or {@code -1} when it had to be killed
     * @param timedOut whether it was still running at the timeout (and was killed)
     * @param exitedAtMillis when this JVM saw it exit, epoch milliseconds
     * @param elapsedMillis from start to exit (or kill)
     * @param output stdout and stderr, interleaved
     * @param log where the output was saved
     */
    public record Result(
            List<String> command,
            int exitCode,
            boolean timedOut,
            long exitedAtMillis,
            long elapsedMillis,
            String output,
            Path log) {

        /**
         * Lines the child's JVM printed about JNI problems (such as {@code -Xcheck:jni} warnings).
         *
         * @return the matching output lines, in order; empty when clean
         */
        public List<String> jniWarnings() {
            List<String> out = new ArrayList<>();
            for (String line : output.split("\n")) {
                if (JNI_WARNING.matcher(line).find()) {
                    out.add(line);
                }
            }
            return out;
        }

        /**
         * A description for assertion messages.
         *
         * @return multi-line text: exit code (or timeout), elapsed milliseconds, log path, command
         *     and the whole output
         */
        public String describe() {
            return "child JVM "
                    + (timedOut ? "TIMED OUT and was killed" : "exited with " + exitCode)
                    + " after "
                    + elapsedMillis
                    + " ms; log "
                    + log
                    + "\ncommand: "
                    + String.join(" ", command)
                    + "\n----- output -----\n"
                    + output
                    + "\n------------------";
        }

        /**
         * The epoch-millisecond value printed on a line {@code MARKER <millis>}, or {@code -1}.
         *
         * @param marker the marker word
         * @return the value, or {@code -1} when the line is missing
         */
        public long markerMillis(String marker) {
            for (String line : output.split("\n")) {
                String t = line.trim();
                if (t.startsWith(marker + " ")) {
                    try {
                        return Long.parseLong(t.substring(marker.length() + 1).trim());
                    } catch (NumberFormatException e) {
                        return -1;
                    }
                }
            }
            return -1;
        }
    }

    /**
     * Whether this JVM runs with {@code -Xcheck:jni} (children then do too).
     *
     * @return whether {@code -Xcheck:jni} is among this JVM's input arguments
     */
    public static boolean xcheckJni() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().contains("-Xcheck:jni");
    }

    /**
     * The class path entry (directory or jar) a class was loaded from.
     *
     * @param c the class
     * @return its code source location
     */
    public static Path codeSource(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The class path entries of the testkit itself and of its runtime dependencies (Jackson),
     * for a child JVM or an isolated class loader that uses testkit classes.
     *
     * @return the testkit's jar or classes directory, then its dependencies' jars
     */
    public static List<Path> testkitClassPath() {
        return List.of(
                codeSource(ChildJvm.class),
                codeSource(com.fasterxml.jackson.databind.ObjectMapper.class),
                codeSource(com.fasterxml.jackson.core.JsonFactory.class),
                codeSource(com.fasterxml.jackson.annotation.JsonProperty.class));
    }

    /**
     * Runs {@code mainClass} and waits for it.
     *
     * @param classPath the child's class path
     * @param jvmArgs extra JVM options
     * @param mainClass the main class
     * @param args its arguments
     * @param timeout how long to wait before killing it
     * @return the outcome (never throws for a failing child)
     * @throws IOException if the log directory or file cannot be created or the JVM cannot be
     *     started
     * @throws InterruptedException if the thread is interrupted while waiting for the child
     */
    public static Result run(
            List<Path> classPath,
            List<String> jvmArgs,
            String mainClass,
            List<String> args,
            Duration timeout)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (xcheckJni()) {
            command.add("-Xcheck:jni");
        }
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(
                String.join(File.pathSeparator, classPath.stream().map(Path::toString).toList()));
        command.add(mainClass);
        command.addAll(args);

        String dir = System.getProperty("vended.storage.testLogDir");
        Path logDir =
                dir == null || dir.isBlank()
                        ? Files.createTempDirectory("child-jvm-logs")
                        : Path.of(dir).resolveSibling("child-jvm-logs");
        Files.createDirectories(logDir);
        String simple = mainClass.substring(mainClass.lastIndexOf('.') + 1);
        Path log =
                logDir.resolve(
                        simple
                                + "-"
                                + ProcessHandle.current().pid()
                                + "-"
                                + COUNTER.incrementAndGet()
                                + ".log");

        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectErrorStream(true);
        pb.redirectOutput(log.toFile());
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        long start = System.nanoTime();
        Process p = pb.start();
        p.getOutputStream().close();
        boolean exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        long exitedAt = System.currentTimeMillis();
        long elapsed = (System.nanoTime() - start) / 1_000_000;
        int code;
        if (exited) {
            code = p.exitValue();
        } else {
            threadDump(p.pid(), log);
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            code = -1;
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        return new Result(List.copyOf(command), code, !exited, exitedAt, elapsed, output, log);
    }

    /** Asks a hung child for a thread dump (SIGQUIT via jcmd), appended to its own log. */
    private static void threadDump(long pid, Path log) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        if (!Files.isExecutable(jcmd)) {
            return;
        }
        try {
            Process d =
                    new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print")
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                            .start();
            if (!d.waitFor(10, TimeUnit.SECONDS)) {
                d.destroyForcibly();
            }
        } catch (IOException e) {
            // best effort
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
