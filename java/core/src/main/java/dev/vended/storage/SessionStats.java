package dev.vended.storage;

/**
 * Counters of a {@link Session}'s caches (metadata and ranges together), for monitoring and tests.
 *
 * @param hits lookups answered from the caches
 * @param misses lookups that went to the store
 * @param evictions entries removed because of capacity or their time to live (explicit
 *     invalidations and writes through a store do not count)
 * @param entries entries held now (approximate)
 */
public record SessionStats(long hits, long misses, long evictions, long entries) {

    /** Number of counters in the native representation. */
    static final int NATIVE_FIELDS = 4;

    /** Decodes the native representation {@code {hits, misses, evictions, entries}}. */
    static SessionStats fromNative(long[] values) {
        if (values == null || values.length < NATIVE_FIELDS) {
            throw new IllegalStateException(
                    "native library returned malformed session stats (expected "
                            + NATIVE_FIELDS
                            + " values)");
        }
        return new SessionStats(values[0], values[1], values[2], values[3]);
    }

    /**
     * The share of lookups answered from the caches.
     *
     * @return {@code hits / (hits + misses)}, or {@code 0} before the first lookup
     */
    public double hitRate() {
        long lookups = hits + misses;
        return lookups == 0 ? 0.0 : (double) hits / lookups;
    }
}
