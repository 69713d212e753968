package dev.vended.storage.examples.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A helper of the soak ({@link FaultProxy}, {@link CpuHog}) run as a child JVM on this JVM's class
 * path, so that its threads and memory do not count in the soak's figures. The child prints {@code
 * LISTENING <port>} when ready, answers request lines on stdin with one line each, and exits when
 * its stdin closes; its stderr goes to a log file.
 */
final class ChildProcess implements AutoCloseable {

    private final Process process;
    private final BufferedReader out;
    private final Writer in;
    private final int port;

    private ChildProcess(Process process) throws IOException {
        this.process = process;
        this.out =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        String first = out.readLine();
        if (first == null || !first.startsWith("LISTENING ")) {
            process.destroyForcibly();
            throw new IOException("child process did not start: " + first);
        }
        this.port = Integer.parseInt(first.substring("LISTENING ".length()).trim());
    }

    /**
     * Starts {@code mainClass} with {@code args} in a child JVM (at most 256 MiB of heap).
     *
     * @param log where the child's stderr goes
     * @throws IOException if it cannot be started or does not report ready
     */
    static ChildProcess start(Class<?> mainClass, Path log, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass.getName());
        cmd.addAll(List.of(args));
        Process p =
                new ProcessBuilder(cmd)
                        .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                        .start();
        return new ChildProcess(p);
    }

    /** The port the child reported ({@code 0} if it serves none). */
    int port() {
        return port;
    }

    /** The child's process id. */
    long pid() {
        return process.pid();
    }

    /**
     * Sends {@code request} and returns the child's one-line answer.
     *
     * @throws IOException if the child has gone
     */
    synchronized String ask(String request) throws IOException {
        in.write(request + "\n");
        in.flush();
        String line = out.readLine();
        if (line == null) {
            throw new IOException("child process ended");
        }
        return line;
    }

    /** Closes the child's stdin, waits up to 10 s for it to exit, then kills it. */
    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            // already gone
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
