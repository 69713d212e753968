package dev.vended.storage.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An emulator process (Azurite, fake-gcs-server) installed by {@code bin/install-emulators.sh}
 * under the repository's {@code .tools/}, bound to 127.0.0.1 on a free port, running in a scratch
 * directory; killed and the directory removed on {@link #close()}.
 */
public final class EmulatorProcess implements AutoCloseable {

    /** System property naming the tools directory (else {@value #TOOLS_ENV}, else a search). */
    public static final String TOOLS_PROPERTY = "vended.storage.tools";

    /** Environment variable naming the tools directory. */
    public static final String TOOLS_ENV = "VENDED_STORAGE_TOOLS";

    /** Longest wait for an emulator to say it listens. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final String url;
    private final Duration startedIn;
    private final Process process;
    private final Path dir;

    private EmulatorProcess(Process process, Path dir, int port, Duration startedIn) {
        this.process = process;
        this.dir = dir;
        this.url = "http://127.0.0.1:" + port;
        this.startedIn = startedIn;
    }

    /**
     * The emulator's base URL.
     *
     * @return {@code http://127.0.0.1:PORT}, without a trailing slash
     */
    public String url() {
        return url;
    }

    /**
     * How long the emulator took to report that it listens.
     *
     * @return the time from spawning the process to its "listening" line
     */
    public Duration startedIn() {
        return startedIn;
    }

    /**
     * The tools directory: system property {@value #TOOLS_PROPERTY}, else environment variable
     * {@value #TOOLS_ENV}, else the first {@code .tools} directory found in the working directory
     * or one of its (at most 5) parents, else {@code ./.tools}.
     *
     * @return the directory (not checked to exist)
     */
    public static Path toolsDirectory() {
        String configured = System.getProperty(TOOLS_PROPERTY);
        if (configured == null || configured.isEmpty()) {
            configured = System.getenv(TOOLS_ENV);
        }
        if (configured != null && !configured.isEmpty()) {
            return Paths.get(configured);
        }
        Path cwd = Paths.get("").toAbsolutePath().normalize();
        Path dir = cwd;
        for (int i = 0; i <= 5 && dir != null; i++, dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve(".tools"))) {
                return dir.resolve(".tools");
            }
        }
        return cwd.resolve(".tools");
    }

    /**
     * The installed file {@code relative} under {@link #toolsDirectory()}, if it exists.
     *
     * @param relative the file's path relative to the tools directory, such as {@link
     *     AzuriteServer#TOOL}
     * @return the resolved path
     * @throws IOException naming the path and {@code bin/install-emulators.sh} if it does not
     */
    public static Path tool(String relative) throws IOException {
        Path path = toolsDirectory().resolve(relative);
        if (!Files.exists(path)) {
            throw new IOException(
                    path + " not found: run bin/install-emulators.sh (or set -D" + TOOLS_PROPERTY
                            + " or " + TOOLS_ENV + ")");
        }
        return path;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts {@code command} and waits up to {@link #START_TIMEOUT} for an output line containing
     * {@code ready}.
     */
    static EmulatorProcess spawn(List<String> command, int port, String ready) throws IOException {
        Path dir = Files.createTempDirectory("vended-storage-emulator");
        Instant started = Instant.now();
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        CountDownLatch listening = new CountDownLatch(1);
        List<String> seen = new ArrayList<>();
        Thread drain =
                new Thread(
                        () -> {
                            try (BufferedReader r =
                                    new BufferedReader(
                                            new InputStreamReader(
                                                    p.getInputStream(), StandardCharsets.UTF_8))) {
                                String line;
                                while ((line = r.readLine()) != null) {
                                    if (line.contains(ready)) {
                                        listening.countDown();
                                    } else if (listening.getCount() > 0) {
                                        synchronized (seen) {
                                            if (seen.size() < 200) {
                                                seen.add(line);
                                            }
                                        }
                                    }
                                }
                            } catch (IOException ignored) {
                                // the process went away
                            }
                        },
                        "emulator-output");
        drain.setDaemon(true);
        drain.start();
        boolean up;
        try {
            up = listening.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            up = false;
        }
        EmulatorProcess emulator = new EmulatorProcess(p, dir, port, Duration.between(started, Instant.now()));
        if (!up) {
            emulator.close();
            synchronized (seen) {
                throw new IOException(
                        command.get(0) + " did not report '" + ready + "' within " + START_TIMEOUT
                                + "; output:\n" + String.join("\n", seen));
            }
        }
        return emulator;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // scratch directory under the temp dir
        }
    }

    @Override
    public String toString() {
        return "EmulatorProcess{" + url + "}";
    }
}
