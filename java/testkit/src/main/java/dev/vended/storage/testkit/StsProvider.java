package dev.vended.storage.testkit;


import java.io.IOException;

/**
 * Vends credentials from the local endpoint's STS {@code AssumeRole}: endpoint, region {@code
 * us-east-1}, {@code aws_allow_http=true}, the STS credentials and {@code expires_at_millis} from
 * their {@code Expiration}. Counts calls and remembers every credential set it vended.
 */
public final class StsProvider extends RecordingProvider {
    private final int durationSeconds;

    /**
     * Creates the provider.
     *
     * @param server the endpoint
     * @param durationSeconds lifetime of each credential set
     */
    public StsProvider(LocalS3Server server, int durationSeconds) {
        super(server);
        this.durationSeconds = durationSeconds;
    }

    @Override
    protected VendedCredentials next() throws IOException {
        return server.assumeRole(durationSeconds);
    }

    @Override
    public String toString() {
        return "StsProvider{calls=" + calls() + ", durationSeconds=" + durationSeconds + "}";
    }
}
