package dev.vended.storage.examples;

import dev.vended.storage.examples.Demo.UsageException;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.FakeGcsServer;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cloud-specific setup of the demo: starts the emulator or local endpoint of {@code --cloud}
 * (or uses {@code --endpoint}) and builds the store options and the credential source for it.
 */
final class DemoClouds {

    private DemoClouds() {}

    /**
     * Where the demo's objects go and how credentials for them are vended.
     *
     * @param scheme the URI scheme: {@code s3}, {@code az} or {@code gs}
     * @param bucket the bucket (or container)
     * @param baseOptions the store options without credentials
     * @param canList whether the store can list (fake-gcs-server serves no XML-API list)
     * @param source the credential sets, each living {@code --ttl-seconds}
     */
    record Target(
            String scheme,
            String bucket,
            Map<String, String> baseOptions,
            boolean canList,
            CredentialSource source) {}

    /**
     * Sets up {@code cloud} ({@code s3}, {@code azure} or {@code gcs}) and prints what it uses.
     * Every server started is added to {@code started} as soon as it runs, for the caller to
     * close (also when a later step fails).
     *
     * @param a the parsed command line ({@link DemoArgs#parse})
     * @param prefix the normalized {@code --prefix} ({@code ""} or ending in {@code /})
     * @throws UsageException if {@code --endpoint} lacks a required option
     * @throws Exception if a server fails to start or to create the bucket
     */
    static Target setUp(
            Map<String, String> a,
            String cloud,
            String prefix,
            int ttlSeconds,
            List<AutoCloseable> started,
            PrintStream out)
            throws Exception {
        if (cloud.equals("azure")) {
            return azure(a, ttlSeconds, started, out);
        } else if (cloud.equals("gcs")) {
            return gcs(a, ttlSeconds, started, out);
        } else if (a.containsKey("endpoint")) {
            return external(a, ttlSeconds, out);
        } else {
            return local(a, prefix, ttlSeconds, started, out);
        }
    }

    /** Azurite, with account SAS tokens minted by the demo's provider. */
    private static Target azure(
            Map<String, String> a, int ttlSeconds, List<AutoCloseable> started, PrintStream out)
            throws Exception {
        String bucket = a.getOrDefault("bucket", "demo-bucket");
        AzuriteServer azurite = AzuriteServer.start();
        started.add(azurite);
        azurite.createContainer(bucket);
        Map<String, String> baseOptions = AzuriteServer.storeOptions(azurite.url(), Map.of());
        AzuriteServer.SasProvider sas =
                new AzuriteServer.SasProvider(Duration.ofSeconds(ttlSeconds));
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
        return new Target("az", bucket, baseOptions, true, () -> sas.vend(false));
    }

    /** fake-gcs-server behind the testkit's token-checking proxy, with vended bearer tokens. */
    private static Target gcs(
            Map<String, String> a, int ttlSeconds, List<AutoCloseable> started, PrintStream out)
            throws Exception {
        String bucket = a.getOrDefault("bucket", "demo-bucket");
        FakeGcsServer gcs = FakeGcsServer.start();
        started.add(gcs);
        gcs.createBucket(bucket);
        Map<String, String> baseOptions = gcs.storeOptions(Map.of());
        FakeGcsServer.TokenProvider tokens = gcs.tokenProvider(Duration.ofSeconds(ttlSeconds));
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
        return new Target("gs", bucket, baseOptions, false, tokens::vend);
    }

    /** {@code --endpoint}: the given credentials, re-vended with a fresh expiry on every call. */
    private static Target external(Map<String, String> a, int ttlSeconds, PrintStream out)
            throws UsageException {
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
        String bucket = a.get("bucket");
        Map<String, String> baseOptions = new LinkedHashMap<>();
        baseOptions.put("aws_endpoint", endpoint);
        baseOptions.put("aws_region", a.getOrDefault("region", "us-east-1"));
        baseOptions.put(
                "aws_allow_http",
                Boolean.toString(endpoint.toLowerCase(Locale.ROOT).startsWith("http://")));
        String akid = a.get("access-key-id");
        String secret = a.get("secret-access-key");
        String token = a.get("session-token");
        long ttlMillis = ttlSeconds * 1000L;
        CredentialSource source =
                () ->
                        new VendedCredentials(
                                        akid, secret, token, System.currentTimeMillis() + ttlMillis)
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
        return new Target("s3", bucket, baseOptions, true, source);
    }

    /** The local enforcing endpoint (local-s3), with credentials from STS AssumeRole. */
    private static Target local(
            Map<String, String> a,
            String prefix,
            int ttlSeconds,
            List<AutoCloseable> started,
            PrintStream out)
            throws Exception {
        Path binary =
                a.containsKey("local-s3")
                        ? Path.of(a.get("local-s3"))
                        : LocalS3Server.binaryFromProperty();
        String bucket = a.getOrDefault("bucket", "demo-bucket");
        Path log = Files.createTempFile("vended-storage-demo-local-s3-", ".log");
        LocalS3Server local = LocalS3Server.start(binary, bucket, log);
        started.add(local);
        Map<String, String> baseOptions = local.endpointOptions();
        String scope = prefix.isEmpty() ? null : bucket + "/" + prefix;
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
        return new Target(
                "s3",
                bucket,
                baseOptions,
                true,
                () -> local.assumeRole(ttlSeconds, scope).toOptions());
    }
}
