package dev.vended.storage;

import java.time.Instant;
import java.util.Optional;

/**
 * Counters of a store's credential refresher, for monitoring and tests (the native core's {@code
 * vended_storage::refresh::RefreshStats}, {@code crates/core/src/refresh/stats.rs}).
 *
 * @param fetches calls of the provider, counted when the call starts, whatever its outcome (an
 *     accepted answer, an exception, a timeout, an unusable answer) and whatever the reason
 *     (prefetch, stale window, expiry, no credential yet, a rejection by the endpoint). The initial
 *     options a store is opened with are not a call, nor is a request that failed fast during
 *     backoff ({@link #backoffRejections()})
 * @param failures provider calls that failed, timed out, or returned unusable options
 * @param lastRefreshMillis when the current credentials were installed (local clock), epoch
 *     milliseconds, or {@code -1} if never
 * @param expiresAtMillis when the current credentials expire, epoch milliseconds, or {@code -1}
 *     when they do not expire (static credentials) or there are none
 * @param staleWaits requests that reached the stale window and waited for a refresh (ideally zero:
 *     refreshes happen before that)
 * @param generation the current credential generation (1 = the options the store was opened with);
 *     increases on every rotation
 * @param endpointRejections credential generations the endpoint rejected (each generation counted
 *     once, however many requests it failed)
 * @param authRefetches provider calls made because the endpoint rejected the current credential (a
 *     subset of {@code fetches})
 * @param backoffRejections requests that needed a new credential while the refresher was backing
 *     off after a failure, and so failed at once with the last error, without a provider call
 * @param clockOffsetMillis the offset applied to the local clock for expiry decisions, milliseconds
 *     (endpoint clock minus local clock; 0 when unknown or within the threshold)
 */
public record RefreshStats(
        long fetches,
        long failures,
        long lastRefreshMillis,
        long expiresAtMillis,
        long staleWaits,
        long generation,
        long endpointRejections,
        long authRefetches,
        long backoffRejections,
        long clockOffsetMillis) {

    /** Number of counters in the native representation. */
    static final int NATIVE_FIELDS = 10;

    /**
     * The counters of earlier releases, the newer ones zero.
     *
     * @param fetches see the class description
     * @param failures see the class description
     * @param lastRefreshMillis see the class description
     * @param expiresAtMillis see the class description
     * @param staleWaits see the class description
     * @param generation see the class description
     */
    public RefreshStats(
            long fetches,
            long failures,
            long lastRefreshMillis,
            long expiresAtMillis,
            long staleWaits,
            long generation) {
        this(
                fetches,
                failures,
                lastRefreshMillis,
                expiresAtMillis,
                staleWaits,
                generation,
                0,
                0,
                0,
                0);
    }

    /**
     * Decodes the native representation, in the field order of the record (the order of the
     * native {@code RefreshStats} fields).
     */
    static RefreshStats fromNative(long[] v) {
        if (v == null || v.length < NATIVE_FIELDS) {
            throw new IllegalStateException(
                    "native library returned malformed refresh stats (expected "
                            + NATIVE_FIELDS
                            + " values)");
        }
        return new RefreshStats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]);
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
