package dev.vended.storage.examples;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The per-platform smoke test (bin/smoke-platforms): loads the native library the class path
 * bundles for this platform, then puts, gets, lists and streams objects through it against the
 * local S3 endpoint while short-lived credentials rotate at least {@code --rotations} times.
 * Bounded: at most {@code --max-seconds} of I/O and {@value #MAX_ROUNDS} rounds.
 *
 * <pre>
 * java -cp ... dev.vended.storage.examples.PlatformSmoke --load-only
 * java -cp ... dev.vended.storage.examples.PlatformSmoke --local-s3 target/release/local-s3
 * java -cp ... dev.vended.storage.examples.PlatformSmoke --endpoint URL --bucket B
 * </pre>
 *
 * <p>With {@code --local-s3} it starts the endpoint itself (an x86_64 binary is run by the host
 * also when this JVM runs under qemu-user); with {@code --endpoint} it uses a running local
 * endpoint and its admin API (credentials, stats). The last line is {@code platform-smoke
 * summary: platform=P objects=N streams=S listed=L rotations=R rejected=X failures=F elapsed_s=T};
 * the exit status is 0 only if every object was read back intact, the listing saw every object,
 * credentials rotated often enough, the endpoint rejected no request, and nothing failed.
 */
public final class PlatformSmoke {

    /** Upper bound of put/get rounds, whatever the clock says. */
    static final int MAX_ROUNDS = 100_000;

    private PlatformSmoke() {}

    /**
     * Runs the smoke test and exits with its status (2 for a usage error).
     *
     * @param args {@code --load-only}, or {@code --local-s3 PATH} or {@code --endpoint URL
     *     --bucket B}, and optionally {@code --ttl-seconds N} (default 4), {@code --rotations N}
     *     (default 2), {@code --max-seconds N} (default 180)
     * @throws Exception if the endpoint cannot be started or reached
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--load-only")) {
                a.put("load-only", "true");
            } else if (arg.startsWith("--") && i + 1 < args.length) {
                a.put(arg.substring(2), args[++i]);
            } else {
                System.err.println("platform-smoke: unexpected argument " + arg);
                System.exit(2);
            }
        }
        String platform = System.getProperty("os.name") + "/" + System.getProperty("os.arch");
        System.out.println(
                "platform-smoke: "
                        + platform
                        + " java "
                        + System.getProperty("java.version")
                        + " native library "
                        + ObjectStore.nativeVersion());
        if (a.containsKey("load-only")) {
            System.out.println("platform-smoke: LOADED " + ObjectStore.nativeVersion());
            return;
        }
        int ttl = Integer.parseInt(a.getOrDefault("ttl-seconds", "4"));
        int rotations = Integer.parseInt(a.getOrDefault("rotations", "2"));
        int maxSeconds = Integer.parseInt(a.getOrDefault("max-seconds", "180"));
        if (a.containsKey("local-s3")) {
            Path log = Files.createTempFile("vended-storage-smoke-local-s3-", ".log");
            try (LocalS3Server local =
                    LocalS3Server.start(Path.of(a.get("local-s3")), "smoke-bucket", log)) {
                Rejections rejections = () -> rejected(local.stats());
                String endpoint = local.endpoint();
                System.exit(
                        run(
                                endpoint,
                                "smoke-bucket",
                                ttl,
                                rotations,
                                maxSeconds,
                                platform,
                                rejections));
            }
        } else if (a.containsKey("endpoint") && a.containsKey("bucket")) {
            String endpoint = a.get("endpoint");
            Rejections rejections = () -> rejected(endpoint);
            System.exit(
                    run(
                            endpoint,
                            a.get("bucket"),
                            ttl,
                            rotations,
                            maxSeconds,
                            platform,
                            rejections));
        } else {
            System.err.println(
                    "usage: PlatformSmoke --load-only | --local-s3 PATH | --endpoint URL --bucket B"
                            + " [--ttl-seconds N] [--rotations N] [--max-seconds N]");
            System.exit(2);
        }
    }

    /** Reads the endpoint's count of rejected requests. */
    @FunctionalInterface
    private interface Rejections {
        long get() throws IOException;
    }

    private static int run(
            String endpoint,
            String bucket,
            int ttlSeconds,
            int rotations,
            int maxSeconds,
            String platform,
            Rejections rejections)
            throws Exception {
        AtomicInteger fetches = new AtomicInteger();
        StorageOptionsProvider provider =
                () -> {
                    fetches.incrementAndGet();
                    return AdminClient.issue(endpoint, ttlSeconds * 1000L, null);
                };
        String prefix = "smoke-" + System.nanoTime() + "/";
        long start = System.nanoTime();
        long deadline = start + Duration.ofSeconds(maxSeconds).toNanos();
        int objects = 0;
        int streams = 0;
        int failures = 0;
        long listed = -1;
        SplittableRandom random = new SplittableRandom(42);
        try (ObjectStore store =
                ObjectStore.open(
                        "s3://" + bucket + "/" + prefix,
                        provider.fetchStorageOptions(),
                        provider,
                        Duration.ofMillis(Math.max(500, ttlSeconds * 250L)))) {
            for (int round = 0;
                    round < MAX_ROUNDS
                            && System.nanoTime() < deadline
                            && (fetches.get() - 1 < rotations || streams == 0);
                    round++) {
                byte[] data = new byte[1 + random.nextInt(64 * 1024)];
                random.nextBytes(data);
                String path = "obj-" + round;
                if (round % 10 == 5) {
                    // A stream: written in 3 chunks through the multipart writer, read back
                    // through the seekable input stream.
                    try (MultipartOutputStream out = store.openOutput(path)) {
                        int third = data.length / 3;
                        out.write(data, 0, third);
                        out.write(data, third, third);
                        out.write(data, 2 * third, data.length - 2 * third);
                    }
                    byte[] back;
                    try (SeekableObjectInputStream in = store.openInput(path)) {
                        back = in.readAllBytes();
                    }
                    if (Arrays.equals(data, back)) {
                        streams++;
                    } else {
                        failures++;
                        System.err.println("MISMATCH stream " + path);
                    }
                } else {
                    store.put(path, data);
                    if (!Arrays.equals(data, store.get(path))) {
                        failures++;
                        System.err.println("MISMATCH " + path);
                    }
                }
                objects++;
            }
            List<ObjectMeta> all = store.list(null);
            listed = all.size();
            if (listed != objects) {
                failures++;
                System.err.println("list returned " + listed + " objects, wrote " + objects);
            }
            for (ObjectMeta m : all) {
                store.delete(m.path());
            }
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        int rotated = fetches.get() - 1;
        long rejected = rejections.get();
        System.out.println(
                String.format(
                        Locale.ROOT,
                        "platform-smoke summary: platform=%s objects=%d streams=%d listed=%d"
                                + " rotations=%d rejected=%d failures=%d elapsed_s=%.1f",
                        platform,
                        objects,
                        streams,
                        listed,
                        rotated,
                        rejected,
                        failures,
                        elapsed));
        boolean ok =
                objects > 0
                        && streams > 0
                        && rotated >= rotations
                        && rejected == 0
                        && failures == 0;
        return ok ? 0 : 1;
    }

    private static long rejected(Map<String, KeyStats> stats) {
        return stats.values().stream().mapToLong(KeyStats::rejected).sum();
    }

    /** Sums {@code rejected} over the keys of the endpoint's {@code /_admin/stats}. */
    private static long rejected(String endpoint) throws IOException {
        HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(endpoint + "/_admin/stats"))
                        .timeout(Duration.ofSeconds(30))
                        .build();
        HttpResponse<String> response;
        try {
            response = client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("reading the endpoint's stats interrupted", e);
        }
        if (response.statusCode() != 200) {
            throw new IOException("/_admin/stats answered HTTP " + response.statusCode());
        }
        long sum = 0;
        for (JsonNode key : new ObjectMapper().readTree(response.body())) {
            sum += key.path("rejected").asLong();
        }
        return sum;
    }
}
