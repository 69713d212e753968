package dev.vended.storage.examples;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.FakeGcsServer;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.StorageException;
import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Shows credentials rotating under load: writes and verifies objects from several threads through
 * one {@link ObjectStore} whose provider vends credentials that live a few seconds, then deletes
 * them.
 *
 * <pre>
 * java -jar vended-storage-examples-0.1.0.jar [--local-s3 target/release/local-s3] [--seconds 20]
 *     [--threads 4] [--ttl-seconds 3] [--prefix P] [--keep]
 * java -jar vended-storage-examples-0.1.0.jar --endpoint URL --bucket B --access-key-id K
 *     --secret-access-key S [--session-token T] [--region R] [--prefix P] [--keep] ...
 * java -jar vended-storage-examples-0.1.0.jar --cloud azure|gcs [--seconds 20] [--threads 4] ...
 * </pre>
 *
 * <p>With {@code --cloud azure} the same workload runs on {@code az://B/...} against Azurite
 * ({@link AzuriteServer}: SAS signatures and expiry enforced, 403 once expired), the demo's
 * provider minting account SAS tokens living {@code --ttl-seconds}; with {@code --cloud gcs} on
 * {@code gs://B/...} against fake-gcs-server behind the testkit's token-checking proxy ({@link
 * FakeGcsServer}: 401 for expired bearer tokens), the provider vending tokens living {@code
 * --ttl-seconds}. Both are started from the repository's {@code .tools/} ({@code
 * bin/install-emulators.sh}). fake-gcs-server serves no XML-API list, so on GCS the demo counts
 * and deletes the objects it wrote, and checks each is gone with a {@code HEAD}.
 *
 * <p>With a local endpoint (the {@code local-s3} binary from {@code --local-s3}, the system
 * property {@value LocalS3Server#BINARY_PROPERTY} or the testkit jar), every rotation is a real STS
 * {@code AssumeRole} whose credentials the endpoint rejects once expired (scoped to {@code B/P/}
 * with {@code --prefix P}). With {@code --endpoint}, the given credentials are re-vended with
 * {@code expires_at_millis = now + ttl} on every call. Objects go under {@code
 * s3://B/[P/]run-<epoch ms>/} and are deleted at the end (one {@code DELETE} per object, so
 * prefix-scoped keys suffice) unless {@code --keep}. {@code --help} lists every option with its
 * default.
 *
 * <p>Prints {@code rotation gen=N at=<ISO time> fetch_ms=M} per vended credential set and ends with
 * {@code demo summary: objects_written=N objects_verified=N credential_refreshes=R auth_failures=F
 * elapsed_s=T}. Exits 0 only if every written object was verified, nothing failed (cleanup
 * included), 1 otherwise, 2 on a bad command line. Secrets are never printed.
 */
public final class Demo {

    private static final String USAGE =
            String.join(
                    "\n",
                    "usage: Demo [OPTIONS]",
                    "Writes and verifies objects from several threads through one ObjectStore whose",
                    "credentials expire every few seconds, deletes them, and prints a summary line.",
                    "",
                    "Cloud:",
                    "  --cloud s3|azure|gcs     s3: the local enforcing endpoint or --endpoint; azure:",
                    "                           Azurite with account SAS tokens minted by the demo's",
                    "                           provider; gcs: fake-gcs-server behind a proxy that",
                    "                           checks the bearer tokens the provider vends; azure and",
                    "                           gcs start the emulators from .tools/",
                    "                           (bin/install-emulators.sh) (default: s3)",
                    "Endpoint (default: start the local enforcing endpoint, local-s3):",
                    "  --local-s3 PATH          local-s3 binary to start (default: system property",
                    "                           " + LocalS3Server.BINARY_PROPERTY
                            + ", else the one bundled in",
                    "                           the testkit jar); not used with --endpoint",
                    "  --endpoint URL           use this S3 endpoint instead (default: none)",
                    "  --bucket B               bucket (default: demo-bucket, created on the local",
                    "                           endpoint; required with --endpoint, must exist);",
                    "                           container or bucket with --cloud azure|gcs",
                    "  --access-key-id K        required with --endpoint",
                    "  --secret-access-key S    required with --endpoint",
                    "  --session-token T        with --endpoint (default: none)",
                    "  --region R               with --endpoint (default: us-east-1)",
                    "Workload:",
                    "  --prefix P               objects under s3://B/P/run-<epoch ms>/ (default: none,",
                    "                           s3://B/run-<epoch ms>/; az:// or gs:// with --cloud);",
                    "                           works with keys scoped to",
                    "                           B/P/; on the local endpoint the vended keys are so",
                    "                           scoped",
                    "  --seconds N              how long to write and verify (default: 20)",
                    "  --threads N              writer threads (default: 4)",
                    "  --ttl-seconds N          lifetime of each vended credential set (default: 3)",
                    "  --keep                   keep the objects (default: delete them at the end)",
                    "  -h, --help               this text",
                    "Exit status: 0 every object verified and nothing failed (cleanup included),",
                    "1 a failure, 2 a bad command line.");

    private Demo() {}

    /** The {@code --help} text. */
    static String usage() {
        return USAGE;
    }

    /**
     * Runs the demo and exits the JVM with its status.
     *
     * @param args command line, see the class description
     */
    public static void main(String[] args) {
        int code;
        try {
            code = run(args, System.out, System.err);
        } catch (UsageException e) {
            if (e.helpRequested) {
                System.out.println(USAGE);
                code = 0;
            } else {
                System.err.println("error: " + e.getMessage());
                System.err.println(USAGE);
                code = 2;
            }
        } catch (Exception e) {
            System.err.println("demo failed: " + e);
            code = 1;
        }
        System.exit(code);
    }

    /** A bad command line. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        /** Whether this is {@code --help} rather than a mistake (exit 0, usage on stdout). */
        final boolean helpRequested;

        UsageException(String message) {
            this(message, false);
        }

        private UsageException(String message, boolean helpRequested) {
            super(message);
            this.helpRequested = helpRequested;
        }

        static UsageException help() {
            return new UsageException("help requested", true);
        }
    }

    /**
     * Runs the demo.
     *
     * @return the exit status: 0 if every object was verified and nothing failed
     */
    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Map<String, String> a = parseArgs(args);
        int seconds = intArg(a, "seconds", 20, 1);
        int threads = intArg(a, "threads", 4, 1);
        int ttlSeconds = intArg(a, "ttl-seconds", 3, 1);
        boolean external = a.containsKey("endpoint");
        boolean keep = a.containsKey("keep");
        String prefix = normalizePrefix(a.get("prefix"));
        String cloud = a.getOrDefault("cloud", "s3");
        if (!List.of("s3", "azure", "gcs").contains(cloud)) {
            throw new UsageException("--cloud must be s3, azure or gcs");
        }
        if (!cloud.equals("s3")) {
            for (String k :
                    List.of(
                            "endpoint", "local-s3", "access-key-id", "secret-access-key",
                            "session-token", "region")) {
                if (a.containsKey(k)) {
                    throw new UsageException("--" + k + " is for --cloud s3 only");
                }
            }
        }

        LocalS3Server local = null;
        AzuriteServer azurite = null;
        FakeGcsServer gcs = null;
        try {
            Map<String, String> baseOptions;
            String bucket;
            String scheme = "s3";
            boolean canList = true;
            CredentialSource source;
            if (cloud.equals("azure")) {
                scheme = "az";
                bucket = a.getOrDefault("bucket", "demo-bucket");
                azurite = AzuriteServer.start();
                azurite.createContainer(bucket);
                baseOptions = AzuriteServer.storeOptions(azurite.url(), Map.of());
                AzuriteServer.SasProvider sas =
                        new AzuriteServer.SasProvider(Duration.ofSeconds(ttlSeconds));
                source = () -> sas.vend(false);
                out.println(
                        "azurite "
                                + azurite.url()
                                + " (started in "
                                + azurite.startedIn().toMillis()
                                + " ms) container "
                                + bucket
                                + "; account SAS tokens minted by the demo's provider, ttl "
                                + ttlSeconds
                                + " s");
            } else if (cloud.equals("gcs")) {
                scheme = "gs";
                canList = false;
                bucket = a.getOrDefault("bucket", "demo-bucket");
                gcs = FakeGcsServer.start();
                gcs.createBucket(bucket);
                baseOptions = gcs.storeOptions(Map.of());
                FakeGcsServer.TokenProvider tokens =
                        gcs.tokenProvider(Duration.ofSeconds(ttlSeconds));
                source = tokens::vend;
                out.println(
                        "fake-gcs-server "
                                + gcs.emulatorUrl()
                                + " (started in "
                                + gcs.startedIn().toMillis()
                                + " ms) behind token-checking proxy "
                                + gcs.url()
                                + " bucket "
                                + bucket
                                + "; bearer tokens vended by the demo's provider, ttl "
                                + ttlSeconds
                                + " s");
            } else if (external) {
                List<String> missing = new ArrayList<>();
                for (String k : List.of("bucket", "access-key-id", "secret-access-key")) {
                    if (!a.containsKey(k)) {
                        missing.add("--" + k);
                    }
                }
                if (!missing.isEmpty()) {
                    throw new UsageException("--endpoint needs " + String.join(", ", missing));
                }
                String endpoint = a.get("endpoint");
                bucket = a.get("bucket");
                baseOptions = new LinkedHashMap<>();
                baseOptions.put("aws_endpoint", endpoint);
                baseOptions.put("aws_region", a.getOrDefault("region", "us-east-1"));
                baseOptions.put(
                        "aws_allow_http",
                        Boolean.toString(endpoint.toLowerCase(Locale.ROOT).startsWith("http://")));
                String akid = a.get("access-key-id");
                String secret = a.get("secret-access-key");
                String token = a.get("session-token");
                long ttlMillis = ttlSeconds * 1000L;
                source =
                        () ->
                                new VendedCredentials(
                                                akid,
                                                secret,
                                                token,
                                                System.currentTimeMillis() + ttlMillis)
                                        .toOptions();
                out.println(
                        "endpoint "
                                + endpoint
                                + " bucket "
                                + bucket
                                + " access_key_id "
                                + akid
                                + " (credentials re-vended every call, ttl "
                                + ttlSeconds
                                + " s)");
            } else {
                Path binary =
                        a.containsKey("local-s3")
                                ? Path.of(a.get("local-s3"))
                                : LocalS3Server.binaryFromProperty();
                bucket = a.getOrDefault("bucket", "demo-bucket");
                Path log = Files.createTempFile("vended-storage-demo-local-s3-", ".log");
                local = LocalS3Server.start(binary, bucket, log);
                LocalS3Server endpoint = local;
                baseOptions = local.endpointOptions();
                String scope = prefix.isEmpty() ? null : bucket + "/" + prefix;
                source = () -> endpoint.assumeRole(ttlSeconds, scope).toOptions();
                out.println(
                        "local endpoint "
                                + local.endpoint()
                                + " bucket "
                                + bucket
                                + " (log "
                                + log
                                + "); credentials from STS AssumeRole, ttl "
                                + ttlSeconds
                                + " s"
                                + (scope == null ? "" : ", scoped to " + scope));
            }

            RotatingProvider provider = new RotatingProvider(baseOptions, source, out);
            Map<String, String> initial = provider.fetchStorageOptions();
            String uri = scheme + "://" + bucket + "/" + prefix + "run-" + System.currentTimeMillis() + "/";
            out.println(
                    "store "
                            + uri
                            + ": "
                            + threads
                            + " threads for "
                            + seconds
                            + " s, native library "
                            + ObjectStore.nativeVersion());
            try (ObjectStore store = ObjectStore.open(uri, initial, provider)) {
                return workload(store, provider, seconds, threads, keep, canList, out, err);
            }
        } finally {
            if (local != null) {
                local.close();
            }
            if (azurite != null) {
                azurite.close();
            }
            if (gcs != null) {
                gcs.close();
            }
        }
    }

    private static int workload(
            ObjectStore store,
            RotatingProvider provider,
            int seconds,
            int threads,
            boolean keep,
            boolean canList,
            PrintStream out,
            PrintStream err)
            throws Exception {
        ConcurrentLinkedQueue<String> paths = new ConcurrentLinkedQueue<>();
        AtomicLong written = new AtomicLong();
        AtomicLong verified = new AtomicLong();
        AtomicLong authFailures = new AtomicLong();
        AtomicLong otherFailures = new AtomicLong();
        long start = System.nanoTime();
        long deadline = start + Duration.ofSeconds(seconds).toNanos();

        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w =
                    new Thread(
                            () -> {
                                SplittableRandom random = new SplittableRandom(31L * id + 7);
                                for (long n = 0; System.nanoTime() < deadline; n++) {
                                    String path = "t" + id + "/obj-" + n;
                                    byte[] data = payload(random, path);
                                    try {
                                        store.put(path, data);
                                        written.incrementAndGet();
                                        paths.add(path);
                                        byte[] back = store.get(path);
                                        if (Arrays.equals(data, back)) {
                                            verified.incrementAndGet();
                                        } else {
                                            otherFailures.incrementAndGet();
                                            err.println("MISMATCH " + path);
                                        }
                                    } catch (CredentialsException e) {
                                        authFailures.incrementAndGet();
                                        err.println("AUTH FAILURE " + path + ": " + e.getMessage());
                                    } catch (StorageException | RuntimeException e) {
                                        otherFailures.incrementAndGet();
                                        err.println("FAILURE " + path + ": " + e);
                                    }
                                }
                            },
                            "demo-worker-" + t);
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;

        long listed = -1;
        if (canList) {
            try {
                List<ObjectMeta> objects = store.list(null);
                listed = objects.size();
            } catch (StorageException e) {
                otherFailures.incrementAndGet();
                err.println("FAILURE list: " + e);
            }
        }
        if (listed >= 0 && listed != written.get()) {
            otherFailures.incrementAndGet();
            err.println("FAILURE list returned " + listed + " objects, wrote " + written.get());
        }
        try {
            RefreshStats s = store.refreshStats();
            out.println(
                    "refresh stats: fetches="
                            + s.fetches()
                            + " failures="
                            + s.failures()
                            + " stale_waits="
                            + s.staleWaits()
                            + " generation="
                            + s.generation());
        } catch (StorageException e) {
            err.println("refresh stats unavailable: " + e.getMessage());
        }
        if (keep) {
            out.println("cleanup: skipped (--keep), " + written.get() + " objects kept");
        } else {
            otherFailures.addAndGet(
                    cleanup(store, threads, canList ? null : List.copyOf(paths), out, err));
        }
        if (otherFailures.get() > 0) {
            out.println("other failures: " + otherFailures.get());
        }

        long refreshes = Math.max(0, provider.vended() - 1);
        out.println(
                String.format(
                        Locale.ROOT,
                        "demo summary: objects_written=%d objects_verified=%d"
                                + " credential_refreshes=%d auth_failures=%d elapsed_s=%.1f",
                        written.get(),
                        verified.get(),
                        refreshes,
                        authFailures.get(),
                        elapsed));
        out.flush();
        boolean ok =
                written.get() > 0
                        && verified.get() == written.get()
                        && authFailures.get() == 0
                        && otherFailures.get() == 0;
        return ok ? 0 : 1;
    }

    /**
     * Deletes every object under the store's prefix, one {@code DELETE} each (so that keys scoped
     * to the prefix suffice, also where bulk deletes are authorized at bucket level), then checks
     * that none is left. With {@code written} given (a store that cannot list), deletes those
     * paths and checks each is gone with a {@code HEAD}.
     *
     * @return the number of failures (0 when the prefix is empty afterwards)
     */
    private static long cleanup(
            ObjectStore store, int threads, List<String> written, PrintStream out, PrintStream err)
            throws InterruptedException {
        AtomicLong failures = new AtomicLong();
        AtomicLong deleted = new AtomicLong();
        AtomicLong stillThere = new AtomicLong();
        List<String> objects;
        if (written != null) {
            objects = written;
        } else {
            try {
                objects = store.list(null).stream().map(ObjectMeta::path).toList();
            } catch (StorageException | RuntimeException e) {
                err.println("FAILURE cleanup list: " + e);
                return 1;
            }
        }
        List<Thread> deleters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread d =
                    new Thread(
                            () -> {
                                for (int i = first; i < objects.size(); i += threads) {
                                    String path = objects.get(i);
                                    try {
                                        store.delete(path);
                                        deleted.incrementAndGet();
                                    } catch (StorageException | RuntimeException e) {
                                        failures.incrementAndGet();
                                        err.println("FAILURE delete " + path + ": " + e);
                                        continue;
                                    }
                                    if (written != null) {
                                        try {
                                            store.head(path);
                                            stillThere.incrementAndGet();
                                        } catch (ObjectNotFoundException gone) {
                                            // deleted, as expected
                                        } catch (StorageException | RuntimeException e) {
                                            failures.incrementAndGet();
                                            err.println("FAILURE head " + path + ": " + e);
                                        }
                                    }
                                }
                            },
                            "demo-cleanup-" + t);
            deleters.add(d);
            d.start();
        }
        for (Thread d : deleters) {
            d.join();
        }
        try {
            long left = written != null ? stillThere.get() : store.list(null).size();
            if (left != 0) {
                failures.incrementAndGet();
                err.println("FAILURE cleanup left " + left + " objects");
            }
            out.println("cleanup: deleted " + deleted.get() + " objects, " + left + " left");
        } catch (StorageException | RuntimeException e) {
            failures.incrementAndGet();
            err.println("FAILURE cleanup list: " + e);
        }
        return failures.get();
    }

    /** {@code "a/b"}, {@code "/a/b/"} to {@code "a/b/"}; null or blank to {@code ""}. */
    private static String normalizePrefix(String prefix) throws UsageException {
        if (prefix == null) {
            return "";
        }
        String p = prefix.trim();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        if (p.contains("//")) {
            throw new UsageException("--prefix must not contain an empty path segment");
        }
        return p.isEmpty() ? "" : p + "/";
    }

    private static byte[] payload(SplittableRandom random, String path) {
        int size = 64 + random.nextInt(4096);
        ByteBuffer b = ByteBuffer.allocate(size + path.length());
        b.put(path.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] noise = new byte[size];
        random.nextBytes(noise);
        b.put(noise);
        return b.array();
    }

    /** Produces one credential set as store options. */
    @FunctionalInterface
    interface CredentialSource {
        Map<String, String> next() throws IOException;
    }

    /** Vends credentials from a {@link CredentialSource}, logging each rotation. */
    static final class RotatingProvider implements StorageOptionsProvider {
        private final Map<String, String> baseOptions;
        private final CredentialSource source;
        private final PrintStream out;
        private final AtomicLong generation = new AtomicLong();

        RotatingProvider(
                Map<String, String> baseOptions, CredentialSource source, PrintStream out) {
            this.baseOptions = Map.copyOf(baseOptions);
            this.source = source;
            this.out = out;
        }

        @Override
        public Map<String, String> fetchStorageOptions() throws IOException {
            long t0 = System.nanoTime();
            Map<String, String> creds = source.next();
            long fetchMs = (System.nanoTime() - t0) / 1_000_000;
            long gen = generation.incrementAndGet();
            out.println(
                    "rotation gen="
                            + gen
                            + " at="
                            + Instant.now().truncatedTo(ChronoUnit.MILLIS)
                            + " fetch_ms="
                            + fetchMs);
            Map<String, String> options = new HashMap<>(baseOptions);
            options.putAll(creds);
            return options;
        }

        long vended() {
            return generation.get();
        }

        @Override
        public String toString() {
            return "RotatingProvider{vended=" + generation.get() + "}";
        }
    }

    private static Map<String, String> parseArgs(String[] args) throws UsageException {
        List<String> known =
                List.of(
                        "local-s3",
                        "cloud",
                        "seconds",
                        "threads",
                        "ttl-seconds",
                        "endpoint",
                        "bucket",
                        "access-key-id",
                        "secret-access-key",
                        "session-token",
                        "region",
                        "prefix");
        List<String> flags = List.of("keep");
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                throw UsageException.help();
            }
            if (!arg.startsWith("--")) {
                throw new UsageException(
                        "unexpected argument #" + (i + 1) + " (options start with --)");
            }
            String name = arg.substring(2);
            if (flags.contains(name)) {
                out.put(name, "true");
                continue;
            }
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else {
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            if (!known.contains(name)) {
                throw new UsageException("unknown option --" + name);
            }
            out.put(name, value);
        }
        return out;
    }

    private static int intArg(Map<String, String> a, String name, int def, int min)
            throws UsageException {
        String v = a.get(name);
        if (v == null) {
            return def;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min) {
                throw new UsageException("--" + name + " must be at least " + min);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " is not a number: " + v);
        }
    }
}
