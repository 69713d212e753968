package dev.vended.storage;

/**
 * What a successful {@link ObjectStore#putCommit(String, byte[])} reports.
 *
 * @param write the commit object's ETag and version
 * @param recognisedRetry {@code true} when the endpoint refused a retried attempt and the object it
 *     holds was recognised as this write's own (its first attempt was stored and its answer lost);
 *     the commit succeeded either way
 */
public record CommitResult(WriteResult write, boolean recognisedRetry) {

    static CommitResult fromNative(String[] r) {
        if (r == null || r.length != 3) {
            throw new IllegalStateException("native library returned a malformed commit result");
        }
        return new CommitResult(new WriteResult(r[0], r[1]), Boolean.parseBoolean(r[2]));
    }
}
