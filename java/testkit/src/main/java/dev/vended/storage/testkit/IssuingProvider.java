package dev.vended.storage.testkit;


import java.io.IOException;
import java.util.Objects;

/**
 * Vends credentials issued by the local endpoint's admin API with an exact lifetime in milliseconds
 * (and optionally a {@code bucket/prefix} scope and a {@link KeyAccess}).
 */
public final class IssuingProvider extends RecordingProvider {
    private final long ttlMillis;
    private final String scope;
    private final KeyAccess access;

    /**
     * Creates the provider.
     *
     * @param server the endpoint
     * @param ttlMillis lifetime of each credential set
     * @param scope {@code bucket/prefix} the keys may access, or {@code null}
     */
    public IssuingProvider(LocalS3Server server, long ttlMillis, String scope) {
        this(server, ttlMillis, scope, KeyAccess.READ_WRITE);
    }

    /**
     * Creates a provider whose keys may do only what {@code access} allows.
     *
     * @param server the endpoint
     * @param ttlMillis lifetime of each credential set
     * @param scope {@code bucket/prefix} the keys may access, or {@code null}
     * @param access what the keys may do, e.g. {@link KeyAccess#READ_ONLY}
     */
    public IssuingProvider(LocalS3Server server, long ttlMillis, String scope, KeyAccess access) {
        super(server);
        this.ttlMillis = ttlMillis;
        this.scope = scope;
        this.access = Objects.requireNonNull(access, "access");
    }

    @Override
    protected VendedCredentials next() throws IOException {
        return server.issueCredentials(ttlMillis, scope, access);
    }

    @Override
    public String toString() {
        return "IssuingProvider{calls="
                + calls()
                + ", ttlMillis="
                + ttlMillis
                + ", access="
                + access
                + "}";
    }
}
