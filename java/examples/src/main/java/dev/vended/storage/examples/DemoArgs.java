package dev.vended.storage.examples;

import dev.vended.storage.examples.Demo.UsageException;
import dev.vended.storage.testkit.LocalS3Server;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The demo's command line: the {@code --help} text and the parsing of options and their values. */
final class DemoArgs {

    static final String USAGE =
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

    private DemoArgs() {}

    /**
     * The options of a command line, by name without {@code --}; flags map to {@code "true"}.
     *
     * @throws UsageException for {@code --help} ({@link UsageException#helpRequested}), an unknown
     *     option, a missing value or an argument that is not an option
     */
    static Map<String, String> parse(String[] args) throws UsageException {
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

    /**
     * The integer option {@code name}, or {@code def} when absent.
     *
     * @throws UsageException if the value is not a number or is below {@code min}
     */
    static int intArg(Map<String, String> a, String name, int def, int min)
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

    /** {@code "a/b"}, {@code "/a/b/"} to {@code "a/b/"}; null or blank to {@code ""}. */
    static String normalizePrefix(String prefix) throws UsageException {
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
}
