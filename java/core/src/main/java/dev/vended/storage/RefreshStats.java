package dev.vended.storage;

import java.time.Instant;
import java.util.Optional;

/**
 * Counters of a store's credential refresher, for monitoring and tests.
 *
 * @param fetches successful calls of the provider (including the one that supplied the initial
 *     credentials, if the native side made it)
 * @param failures failed refresh attempts (the provider threw or returned unusable options)
 * @param lastRefreshMillis when the current credentials were installed, epoch milliseconds, or
 *     {@code -1} if never
 * @param expiresAtMillis when the current credentials expire, epoch milliseconds, or {@code -1}
 *     when they do not expire (static credentials) or there are none
 * @param staleWaits how often a caller had to wait for a refresh because the credentials were about
 *     to expire (ideally zero: refreshes happen before that)
 * @param generation how many credential sets have been installed; increases on every rotation
 */
public record RefreshStats(
        long fetches,
        long failures,
        long lastRefreshMillis,
        long expiresAtMillis,
        long staleWaits,
        long generation) {

    /** Number of counters in the native representation. */
    static final int NATIVE_FIELDS = 6;

    /**
     * Decodes the native representation {@code {fetches, failures, lastRefreshMillis,
     * expiresAtMillis, staleWaits, generation}}.
     */
    static RefreshStats fromNative(long[] values) {
        if (values == null || values.length < NATIVE_FIELDS) {
            throw new IllegalStateException(
                    "native library returned malformed refresh stats (expected "
                            + NATIVE_FIELDS
                            + " values)");
        }
        return new RefreshStats(values[0], values[1], values[2], values[3], values[4], values[5]);
    }

    /**
     * When the current credentials expire.
     *
     * @return the expiry, or empty when the credentials do not expire
     */
    public Optional<Instant> expiresAt() {
        return expiresAtMillis < 0
                ? Optional.empty()
                : Optional.of(Instant.ofEpochMilli(expiresAtMillis));
    }
}
