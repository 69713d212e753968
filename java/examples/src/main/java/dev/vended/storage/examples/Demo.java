package dev.vended.storage.examples;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.FakeGcsServer;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

    private Demo() {}

    /** The {@code --help} text. */
    static String usage() {
        return DemoArgs.USAGE;
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
                System.out.println(DemoArgs.USAGE);
                code = 0;
            } else {
                System.err.println("error: " + e.getMessage());
                System.err.println(DemoArgs.USAGE);
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
        Map<String, String> a = DemoArgs.parse(args);
        int seconds = DemoArgs.intArg(a, "seconds", 20, 1);
        int threads = DemoArgs.intArg(a, "threads", 4, 1);
        int ttlSeconds = DemoArgs.intArg(a, "ttl-seconds", 3, 1);
        boolean keep = a.containsKey("keep");
        String prefix = DemoArgs.normalizePrefix(a.get("prefix"));
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

        List<AutoCloseable> started = new ArrayList<>();
        try {
            DemoClouds.Target target =
                    DemoClouds.setUp(a, cloud, prefix, ttlSeconds, started, out);
            RotatingProvider provider =
                    new RotatingProvider(target.baseOptions(), target.source(), out);
            Map<String, String> initial = provider.fetchStorageOptions();
            String uri =
                    target.scheme()
                            + "://"
                            + target.bucket()
                            + "/"
                            + prefix
                            + "run-"
                            + System.currentTimeMillis()
                            + "/";
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
                return DemoWorkload.run(
                        store, provider, seconds, threads, keep, target.canList(), out, err);
            }
        } finally {
            for (AutoCloseable server : started) {
                server.close();
            }
        }
    }
}
