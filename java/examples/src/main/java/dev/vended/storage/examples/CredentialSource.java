package dev.vended.storage.examples;

import java.io.IOException;
import java.util.Map;

/**
 * Produces one credential set as store options (used by the demo and by the soak in {@code
 * examples.soak}).
 */
@FunctionalInterface
public interface CredentialSource {
    /**
     * The next credential set.
     *
     * @return store options holding the credentials (and their expiry)
     * @throws IOException if the credentials could not be obtained
     */
    Map<String, String> next() throws IOException;
}
