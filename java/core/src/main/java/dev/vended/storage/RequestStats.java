package dev.vended.storage;

/**
 * Counters of a store's HTTP requests and credential refreshes since the native store was built
 * (the native core's {@code vended_storage::cloud::requests::RequestStats}, {@code
 * crates/core/src/cloud/requests.rs}). A request is one HTTP attempt: each retry the native
 * client makes is counted as a request of its own. Stores of {@code file://} and {@code
 * memory://} make no requests: their counters stay 0.
 *
 * @param requests HTTP requests sent (attempts), whatever their outcome
 * @param get {@code GET} requests (reads, ranges, listings)
 * @param head {@code HEAD} requests (object metadata)
 * @param put {@code PUT} requests (writes, multipart parts, copies)
 * @param post {@code POST} requests (multipart create/complete, bulk deletes)
 * @param delete {@code DELETE} requests (deletes, multipart aborts)
 * @param retryableFailures attempts that failed in a way the client retries: an answer with status
 *     5xx, 429 or 408, or a transport error before the answer (connect, send, timeout). Each is
 *     retried unless the retry budget ({@code max_retries}, {@code retry_timeout}) is spent, and a
 *     timeout only for idempotent requests: an upper bound of the retries, equal to them when no
 *     request exhausts its budget
 * @param throttled answers with status 429 or 503 (a subset of {@code retryableFailures})
 * @param credentialRefreshes calls of the store's credential provider ({@link
 *     RefreshStats#fetches()}); 0 without a provider
 * @param checksumsMatched whole-object reads whose bytes had the checksum the service stores
 *     (storage option {@code checksums}; docs/integrity.md)
 * @param checksumMismatches whole-object reads whose bytes did not: each was read once more, or
 *     failed with {@link ChecksumMismatchException}
 */
public record RequestStats(
        long requests,
        long get,
        long head,
        long put,
        long post,
        long delete,
        long retryableFailures,
        long throttled,
        long credentialRefreshes,
        long checksumsMatched,
        long checksumMismatches) {

    /** Number of counters in the native representation. */
    static final int NATIVE_FIELDS = 11;

    /** Decodes the native representation, in the field order of the record. */
    static RequestStats fromNative(long[] v) {
        if (v == null || v.length < NATIVE_FIELDS) {
            throw new IllegalStateException(
                    "native library returned malformed request stats (expected "
                            + NATIVE_FIELDS
                            + " values)");
        }
        return new RequestStats(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
    }
}
