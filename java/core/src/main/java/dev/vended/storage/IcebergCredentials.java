package dev.vended.storage;

import java.util.List;
import java.util.Objects;

/**
 * The choice of an Iceberg storage credential for a location, as the native library makes it
 * (one rule, {@code covering_prefix} in {@code crates/core/src/catalog/iceberg/credentials.rs}):
 * the most specific {@code prefix} of a {@code storage-credentials} list that covers the location
 * on path-segment boundaries ({@code s3://b/t1} covers {@code s3://b/t1/x}, never {@code
 * s3://b/t10}); {@code s3a://} and {@code s3n://} count as {@code s3://}; on a tie the first given
 * wins. A caller that picks a store per credential (an Iceberg {@code FileIO}) uses this so that
 * it never disagrees with the credential the native provider then selects.
 */
public final class IcebergCredentials {

    static {
        NativeLoader.load();
    }

    private IcebergCredentials() {}

    /**
     * The index of the most specific prefix covering {@code location}.
     *
     * @param location e.g. {@code s3a://bucket/wh/db/t/data/0.parquet}
     * @param prefixes the storage credentials' prefixes, in the order the catalog sent them
     * @return the index in {@code prefixes}, or {@code -1} when none covers the location
     * @throws NullPointerException if {@code location}, {@code prefixes} or an element is null
     */
    public static int coveringPrefix(String location, List<String> prefixes) {
        Objects.requireNonNull(location, "location");
        String[] array = Objects.requireNonNull(prefixes, "prefixes").toArray(new String[0]);
        for (String p : array) {
            Objects.requireNonNull(p, "a prefix");
        }
        return array.length == 0 ? -1 : nativeCoveringPrefix(location, array);
    }

    private static native int nativeCoveringPrefix(String location, String[] prefixes);
}
