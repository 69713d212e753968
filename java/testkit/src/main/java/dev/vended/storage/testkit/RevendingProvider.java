package dev.vended.storage.testkit;

/** Re-vends an external endpoint's static credentials with a fresh announced expiry. */
final class RevendingProvider extends RecordingProvider {
    private final ExternalEndpoint target;
    private final long ttlMillis;

    RevendingProvider(ExternalEndpoint target, long ttlMillis) {
        super(target.endpointOptions());
        this.target = target;
        this.ttlMillis = ttlMillis;
    }

    @Override
    protected VendedCredentials next() {
        return target.credentials(System.currentTimeMillis() + ttlMillis);
    }

    @Override
    public String toString() {
        return "RevendingProvider{endpoint="
                + target.endpoint()
                + ", calls="
                + calls()
                + ", ttlMillis="
                + ttlMillis
                + "}";
    }
}
