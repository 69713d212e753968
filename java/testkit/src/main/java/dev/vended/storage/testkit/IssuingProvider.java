package dev.vended.storage.testkit;


import java.io.IOException;

/**
 * Vends credentials issued by the local endpoint's admin API with an exact lifetime in milliseconds
 * (and optionally a {@code bucket/prefix} scope).
 */
public final class IssuingProvider extends RecordingProvider {
    private final long ttlMillis;
    private final String scope;

    /**
     * Creates the provider.
     *
     * @param server the endpoint
     * @param ttlMillis lifetime of each credential set
     * @param scope {@code bucket/prefix} the keys may access, or {@code null}
     */
    public IssuingProvider(LocalS3Server server, long ttlMillis, String scope) {
        super(server);
        this.ttlMillis = ttlMillis;
        this.scope = scope;
    }

    @Override
    protected VendedCredentials next() throws IOException {
        return server.issueCredentials(ttlMillis, scope);
    }

    @Override
    public String toString() {
        return "IssuingProvider{calls=" + calls() + ", ttlMillis=" + ttlMillis + "}";
    }
}
