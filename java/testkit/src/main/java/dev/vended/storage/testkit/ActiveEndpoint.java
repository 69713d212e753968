package dev.vended.storage.testkit;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The endpoint a running {@link LocalS3Extension} serves its tests: either the local {@code
 * local-s3} it started (with its buckets created) or an external endpoint whose buckets it has
 * checked. Exactly one of {@link #server} and {@link #external} is set.
 */
final class ActiveEndpoint {

    /** The local endpoint, or {@code null} for an external one. */
    final LocalS3Server server;

    /** The external endpoint, or {@code null} for the local one. */
    final ExternalEndpoint external;

    /** The buckets, the default first; never empty. */
    final List<String> buckets;

    /** Whether the external endpoint came from {@code LocalS3Extension.target(...)}. */
    private final boolean explicitTarget;

    private ActiveEndpoint(
            LocalS3Server server,
            ExternalEndpoint external,
            List<String> buckets,
            boolean explicitTarget) {
        this.server = server;
        this.external = external;
        this.buckets = List.copyOf(buckets);
        this.explicitTarget = explicitTarget;
    }

    /**
     * Chooses and starts the endpoint: {@code explicitTarget}'s if given, else (unless {@code
     * localOnly}) the environment's ({@link ExternalEndpoint#fromEnvironment()}, whose bucket
     * setting replaces the first bucket), else a new local endpoint with every bucket created.
     * An external endpoint's buckets are probed (listed) first.
     */
    static ActiveEndpoint start(
            List<String> configured, boolean localOnly, Supplier<ExternalEndpoint> explicitTarget)
            throws Exception {
        List<String> names = new ArrayList<>(configured);
        ExternalEndpoint target = null;
        if (explicitTarget != null) {
            target =
                    Objects.requireNonNull(
                            explicitTarget.get(), "the target supplier returned null");
        } else if (!localOnly) {
            target = ExternalEndpoint.fromEnvironment().orElse(null);
            String bucket = ExternalEndpoint.setting(ExternalEndpoint.BUCKET_ENV);
            if (target != null && bucket != null) {
                names.set(0, bucket);
            }
        }
        if (target == null) {
            LocalS3Server s = LocalS3Server.start(names.get(0));
            try {
                for (String b : names.subList(1, names.size())) {
                    s.createBucket(b);
                }
            } catch (IOException | RuntimeException e) {
                s.close();
                throw e;
            }
            return new ActiveEndpoint(s, null, names, false);
        }
        for (String b : names) {
            probe(target, b);
        }
        return new ActiveEndpoint(null, target, names, explicitTarget != null);
    }

    /** Lists a prefix of {@code bucket} with the static credentials, so that a missing bucket or
     * wrong keys fail the class up front with the endpoint's answer. */
    private static void probe(ExternalEndpoint target, String bucket) throws StorageException {
        Map<String, String> options = target.endpointOptions();
        options.putAll(target.credentials(Long.MAX_VALUE).toOptions());
        options.remove("expires_at_millis");
        try (ObjectStore store = ObjectStore.open("s3://" + bucket + "/", options)) {
            store.list("vended-storage-testkit-probe/");
        } catch (StorageException e) {
            throw new IllegalStateException(
                    "bucket "
                            + bucket
                            + " cannot be listed at "
                            + target.endpoint()
                            + " with access key "
                            + target.accessKeyId()
                            + " (an external endpoint's buckets must exist): "
                            + e.getMessage(),
                    e);
        }
    }

    /** Stops the local endpoint; nothing to do for an external one. */
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** See {@link LocalS3Extension#endpointOptions()}. */
    Map<String, String> endpointOptions() {
        return server != null ? server.endpointOptions() : external.endpointOptions();
    }

    /** See {@link LocalS3Extension#storageOptions()}. */
    Map<String, String> storageOptions() {
        if (server != null) {
            return server.rootOptions();
        }
        Map<String, String> m = external.endpointOptions();
        m.putAll(external.credentials(0).toOptions());
        m.remove("expires_at_millis");
        return m;
    }

    /** See {@link LocalS3Extension#provider(Duration)}. */
    RecordingProvider provider(long ttlMillis) {
        if (server != null) {
            return new IssuingProvider(server, ttlMillis, null);
        }
        return new RevendingProvider(external, ttlMillis);
    }

    /**
     * The local endpoint, or aborts the calling test (JUnit reports it skipped) naming {@code
     * capability} and the external endpoint.
     */
    LocalS3Server requireLocal(String capability) {
        if (server != null) {
            return server;
        }
        Assumptions.abort(
                capability
                        + " needs the enforcing local endpoint, but the tests target the external"
                        + " endpoint "
                        + external.endpoint()
                        + (explicitTarget
                                ? " (LocalS3Extension.target(...))"
                                : " (" + ExternalEndpoint.ENDPOINT_ENV + "; unset it to run this"
                                        + " test)")
                        + ", which cannot provide it: test skipped. Extensions made with"
                        + " LocalS3Extension.create().localOnly() always use the local endpoint.");
        throw new AssertionError("unreachable");
    }

    /**
     * Mints a key living {@code ttlMillis} on the local endpoint, confined to {@code prefix} in
     * the default bucket (every bucket when {@code null}) and, unless {@code access} is {@code
     * null}, to what {@code access} allows; on an external endpoint aborts the calling test
     * naming {@code capability}.
     */
    VendedCredentials mint(String capability, long ttlMillis, String prefix, KeyAccess access) {
        LocalS3Server s = requireLocal(capability);
        String scope = prefix == null ? null : buckets.get(0) + "/" + prefix;
        return access == null
                ? unchecked(() -> s.issueCredentials(ttlMillis, scope))
                : unchecked(() -> s.issueCredentials(ttlMillis, scope, access));
    }

    /** An admin call of the local endpoint. */
    interface Call<T> {
        T call() throws IOException;
    }

    /** Runs {@code call}, rethrowing its {@link IOException} as {@link UncheckedIOException}. */
    static <T> T unchecked(Call<T> call) {
        try {
            return call.call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An admin call of the local endpoint that answers nothing. */
    interface Action {
        void run() throws IOException;
    }

    /** Runs {@code action}, rethrowing its {@link IOException} as {@link UncheckedIOException}. */
    static void uncheckedRun(Action action) {
        unchecked(
                () -> {
                    action.run();
                    return null;
                });
    }

    /** {@code ttl} in milliseconds, checked to be between 0 and 10 years. */
    static long ttlMillis(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.compareTo(Duration.ofDays(3650)) > 0) {
            throw new IllegalArgumentException("ttl must be between 0 and 10 years, got " + ttl);
        }
        return ttl.toMillis();
    }

    @Override
    public String toString() {
        return server != null ? "local " + server : "external " + external;
    }
}
