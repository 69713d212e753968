package dev.vended.storage.iceberg;

import java.util.Locale;

/**
 * Where an Iceberg location lives: the store's root ({@code scheme://authority/}) and the object
 * key under it. Parsing only; no I/O.
 *
 * @param root the store root, e.g. {@code s3://bucket/} or {@code
 *     abfss://container@account.dfs.core.windows.net/}
 * @param key the object key relative to {@code root}, without a leading {@code /}; empty for the
 *     root itself
 */
record StoreRoute(String root, String key) {

    /**
     * Splits a location.
     *
     * @param location e.g. {@code s3://bucket/wh/db/t/data/0.parquet}
     * @return its root and key
     * @throws IllegalArgumentException naming the location when it has no {@code scheme://} or no
     *     bucket/container
     */
    static StoreRoute of(String location) {
        if (location == null) {
            throw new IllegalArgumentException("VendedFileIO: a null location");
        }
        int colon = location.indexOf("://");
        if (colon <= 0) {
            throw new IllegalArgumentException(
                    "VendedFileIO: location '" + location + "' has no scheme (expected e.g. s3://bucket/key)");
        }
        int start = colon + 3;
        int slash = location.indexOf('/', start);
        String authority = slash < 0 ? location.substring(start) : location.substring(start, slash);
        if (authority.isEmpty()) {
            throw new IllegalArgumentException(
                    "VendedFileIO: location '" + location + "' names no bucket or container");
        }
        String scheme = location.substring(0, colon).toLowerCase(Locale.ROOT);
        String key = slash < 0 ? "" : location.substring(slash + 1);
        while (key.startsWith("/")) {
            key = key.substring(1);
        }
        return new StoreRoute(scheme + "://" + authority + "/", key);
    }

    /** The location of {@code key} under this root. */
    String locationOf(String childKey) {
        return root + childKey;
    }
}
