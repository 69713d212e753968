package dev.vended.storage;

/**
 * What a completed write reports.
 *
 * @param eTag the new object's entity tag (quotes included, as {@link ObjectMeta#eTag()}), or
 *     {@code null} when the store reports none
 * @param version the new object's version, or {@code null} when the store does not version objects
 */
public record WriteResult(String eTag, String version) {

    static WriteResult fromNative(String[] r) {
        if (r == null || r.length != 2) {
            throw new IllegalStateException("native library returned a malformed write result");
        }
        return new WriteResult(r[0], r[1]);
    }
}
