package dev.vended.storage.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Launches a {@code local-s3} process for {@link LocalS3Server}: runs {@code local-s3 --port 0
 * --bucket NAME --exit-on-stdin-eof [--in-memory]}, drains its stdout on a daemon thread and waits
 * for the {@code LISTENING http://127.0.0.1:PORT} line; also stops processes.
 */
final class LocalS3Process {

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern LISTENING =
            Pattern.compile("^LISTENING (http://127\\.0\\.0\\.1:(\\d+))/?\\s*$");

    /** The running process. */
    final Process process;

    /** Its endpoint URL, e.g. {@code http://127.0.0.1:41234}. */
    final String endpoint;

    /** The TCP port it listens on. */
    final int port;

    private LocalS3Process(Process process, String endpoint, int port) {
        this.process = process;
        this.endpoint = endpoint;
        this.port = port;
    }

    /** See {@link LocalS3Server#start(Path, String, Path, boolean)}. */
    static LocalS3Process start(Path binary, String bucket, Path log, boolean inMemory)
            throws IOException {
        if (!Files.isRegularFile(binary)) {
            throw new IOException("local-s3 binary not found: " + binary);
        }
        List<String> command = new ArrayList<>();
        command.add(binary.toAbsolutePath().toString());
        command.add("--port");
        command.add("0");
        command.add("--bucket");
        command.add(bucket);
        command.add("--exit-on-stdin-eof");
        if (inMemory) {
            command.add("--in-memory");
        }
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        pb.redirectOutput(ProcessBuilder.Redirect.PIPE);
        if (log != null) {
            Path parent = log.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            pb.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        } else {
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        }
        Process process = startProcess(pb);

        CompletableFuture<Matcher> listening = new CompletableFuture<>();
        Thread drain =
                new Thread(
                        () -> drainStdout(process, listening), "local-s3-stdout-" + process.pid());
        drain.setDaemon(true);
        drain.start();

        String where = log == null ? "" : " (stderr: " + log + ")";
        Matcher m;
        try {
            m = listening.get(STARTUP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            destroy(process);
            throw new IOException(
                    "local-s3 did not print 'LISTENING http://127.0.0.1:PORT' within "
                            + STARTUP_TIMEOUT.toSeconds()
                            + " s"
                            + where,
                    e);
        } catch (ExecutionException e) {
            destroy(process);
            throw new IOException(
                    "local-s3 failed to start: "
                            + e.getCause().getMessage()
                            + lastStderrLine(log)
                            + where,
                    e.getCause());
        } catch (InterruptedException e) {
            destroy(process);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while starting local-s3");
        }
        return new LocalS3Process(process, m.group(1), Integer.parseInt(m.group(2)));
    }

    /**
     * Starts the process, retrying (at most 5 times) while the freshly written executable is still
     * open for writing in a child another thread forked meanwhile ("Text file busy", ETXTBSY).
     */
    private static Process startProcess(ProcessBuilder pb) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return pb.start();
            } catch (IOException e) {
                String m = String.valueOf(e.getMessage());
                if (attempt >= 5 || !(m.contains("error=26") || m.contains("Text file busy"))) {
                    throw e;
                }
                try {
                    Thread.sleep(20L * attempt); // no signal exists for "the fd was closed"
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while starting local-s3");
                }
            }
        }
    }

    private static void drainStdout(Process process, CompletableFuture<Matcher> listening) {
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!listening.isDone()) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.matches()) {
                        listening.complete(m);
                    }
                }
            }
        } catch (IOException e) {
            listening.completeExceptionally(e);
        }
        if (!listening.isDone()) {
            String status;
            try {
                status =
                        process.waitFor(5, TimeUnit.SECONDS)
                                ? "exited with code " + process.exitValue()
                                : "closed its stdout";
            } catch (InterruptedException e) {
                status = "closed its stdout";
            }
            listening.completeExceptionally(
                    new IOException("process " + status + " before announcing its port"));
        }
    }

    /** Terminates {@code process}: destroy, then forcibly after 3 s; waits at most 3 s more. */
    static void destroy(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(3, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(3, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The last non-empty line local-s3 wrote to its stderr log (it states why it refused to start,
     * for example an invalid bucket name), as {@code ": <line>"}, or {@code ""} when there is none.
     * At most 500 characters; local-s3 prints no secret on startup errors.
     */
    private static String lastStderrLine(Path log) {
        if (log == null) {
            return "";
        }
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int i = lines.size() - 1; i >= 0; i--) {
                String line = lines.get(i).strip();
                if (!line.isEmpty()) {
                    return ": " + (line.length() > 500 ? line.substring(0, 500) + "..." : line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // The log is a diagnostic aid only; the caller's message stands without it.
        }
        return "";
    }
}
