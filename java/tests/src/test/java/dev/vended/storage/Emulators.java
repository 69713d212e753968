package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Azurite and fake-gcs-server for the JUnit suite, as crates/core/tests/emulators/mod.rs starts
 * them: installed by {@code bin/install-emulators.sh} under the repository's {@code .tools/}
 * (found through the system property {@code vended.storage.tools}, the environment variable
 * {@code VENDED_STORAGE_TOOLS}, or {@code ../../.tools} from the module directory), bound to
 * 127.0.0.1 on a free port. A missing emulator fails the test unless
 * {@code VENDED_STORAGE_SKIP_EMULATORS=1}, which skips it.
 */
final class Emulators {

    /** Azurite's well-known development account (public, emulator only). */
    static final String AZURITE_ACCOUNT = "devstoreaccount1";

    /**
     * Azurite's well-known development key (public, emulator only:
     * https://learn.microsoft.com/en-us/azure/storage/common/storage-use-azurite).
     */
    static final String AZURITE_KEY =
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /** Longest wait for an emulator to say it listens. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private Emulators() {}

    /** A started emulator process, killed on close. */
    static final class Process implements AutoCloseable {
        final String url;
        final Duration startedIn;
        private final java.lang.Process process;
        private final Path dir;

        private Process(java.lang.Process process, Path dir, int port, Duration startedIn) {
            this.process = process;
            this.dir = dir;
            this.url = "http://127.0.0.1:" + port;
            this.startedIn = startedIn;
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
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // scratch directory under the temp dir
            }
        }
    }

    static Path tools() {
        String configured = System.getProperty("vended.storage.tools");
        if (configured == null || configured.isEmpty()) {
            configured = System.getenv("VENDED_STORAGE_TOOLS");
        }
        return configured == null || configured.isEmpty()
                ? Paths.get("../../.tools").toAbsolutePath().normalize()
                : Paths.get(configured);
    }

    /** The executable {@code relative} under the tools directory, or the test is skipped/fails. */
    static Path tool(String relative) {
        Path path = tools().resolve(relative);
        if (Files.exists(path)) {
            return path;
        }
        boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
        Assumptions.assumeFalse(
                skip, path + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
        throw new AssertionError(
                path
                        + " not found: run bin/install-emulators.sh (or set -Dvended.storage.tools,"
                        + " or VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Process spawn(List<String> command, int port, String ready) throws Exception {
        Path dir = Files.createTempDirectory("vended-storage-emulator");
        Instant started = Instant.now();
        java.lang.Process p =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .start();
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
                                            seen.add(line);
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
        Process emulator = new Process(p, dir, port, Duration.between(started, Instant.now()));
        if (!listening.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            emulator.close();
            synchronized (seen) {
                throw new AssertionError(
                        command + " did not report '" + ready + "' within " + START_TIMEOUT
                                + "; output:\n" + String.join("\n", seen));
            }
        }
        return new Process(p, dir, port, Duration.between(started, Instant.now()));
    }

    /** Azurite's blob service, in memory, telemetry off. */
    static Process startAzurite() throws Exception {
        Path bin = tool("azurite/node_modules/.bin/azurite-blob");
        int port = freePort();
        return spawn(
                List.of(
                        bin.toString(),
                        "--blobHost", "127.0.0.1",
                        "--blobPort", Integer.toString(port),
                        "--inMemoryPersistence", "--skipApiVersionCheck", "--loose",
                        "--disableTelemetry"),
                port,
                "successfully listens on");
    }

    /** fake-gcs-server, memory backend, plain HTTP. */
    static Process startFakeGcs() throws Exception {
        Path bin = tool("fake-gcs-server");
        int port = freePort();
        return spawn(
                List.of(
                        bin.toString(),
                        "-scheme", "http",
                        "-host", "127.0.0.1",
                        "-backend", "memory",
                        "-port", Integer.toString(port),
                        "-public-host", "127.0.0.1:" + port),
                port,
                "server started");
    }

    /**
     * An account SAS for Azurite's dev account (blob service; service, container and object
     * resources; read/write/delete/list/add/create) expiring at {@code expiresAtMillis} rounded
     * down to the second, signed as in
     * https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas (version
     * 2021-08-06). {@code badSignature} signs with a wrong key (Azurite answers 403).
     */
    static String accountSas(long expiresAtMillis, boolean badSignature) throws Exception {
        String se =
                DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'")
                        .withZone(ZoneOffset.UTC)
                        .format(Instant.ofEpochMilli(expiresAtMillis));
        String sv = "2021-08-06";
        String sp = "rwdlac";
        String ss = "b";
        String srt = "sco";
        String spr = "https,http";
        String toSign =
                AZURITE_ACCOUNT + "\n" + sp + "\n" + ss + "\n" + srt + "\n\n" + se + "\n\n" + spr
                        + "\n" + sv + "\n\n";
        byte[] key = Base64.getDecoder().decode(AZURITE_KEY);
        if (badSignature) {
            key[0] ^= (byte) 0xff;
        }
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        String sig =
                Base64.getEncoder().encodeToString(mac.doFinal(toSign.getBytes(StandardCharsets.UTF_8)));
        return "sv=" + enc(sv) + "&ss=" + enc(ss) + "&srt=" + enc(srt) + "&sp=" + enc(sp)
                + "&se=" + enc(se) + "&spr=" + enc(spr) + "&sig=" + enc(sig);
    }

    /** Epoch milliseconds of a SAS living about {@code ttl} (whole seconds, as {@code se} has). */
    static long sasExpiry(Duration ttl) {
        return (System.currentTimeMillis() + ttl.toMillis()) / 1000 * 1000;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** Creates {@code container} in Azurite with an account SAS. */
    static void createContainer(Process azurite, String container) throws Exception {
        String sas = accountSas(System.currentTimeMillis() + 60_000, false);
        HttpResponse<String> r =
                HTTP.send(
                        HttpRequest.newBuilder(
                                        URI.create(
                                                azurite.url + "/" + AZURITE_ACCOUNT + "/" + container
                                                        + "?restype=container&" + sas))
                                .header("x-ms-version", "2021-08-06")
                                .PUT(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() / 100 == 2, "create container: " + r.statusCode() + " " + r.body());
    }

    /** Creates {@code bucket} in fake-gcs-server (JSON API). */
    static void createBucket(Process gcs, String bucket) throws Exception {
        HttpResponse<String> r =
                HTTP.send(
                        HttpRequest.newBuilder(URI.create(gcs.url + "/storage/v1/b"))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + bucket + "\"}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertTrue(r.statusCode() / 100 == 2, "create bucket: " + r.statusCode() + " " + r.body());
    }
}
