package dev.vended.storage.iceberg;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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

    /**
     * The namespace parts and table name of a {@code loadCredentials} path, {@code
     * [v1/][{prefix}/]namespaces/{namespace}/tables/{table}/credentials}, and its catalog prefix.
     *
     * @param endpoint the refresh endpoint as the catalog sent it (absolute or relative)
     * @param separator the namespace separator (Iceberg's {@code 0x1F} by default)
     * @return {@code [prefix, table, namespace parts...]}
     * @throws IllegalArgumentException naming the endpoint when it does not have that shape
     */
    static List<String> tableOfEndpoint(String endpoint, String separator) {
        String path = endpoint;
        int q = path.indexOf('?');
        if (q >= 0) {
            path = path.substring(0, q);
        }
        int scheme = path.indexOf("://");
        if (scheme >= 0) {
            int slash = path.indexOf('/', scheme + 3);
            path = slash < 0 ? "" : path.substring(slash);
        }
        String[] parts = path.split("/");
        int ns = -1;
        for (int i = parts.length - 5; i >= 0; i--) {
            if (parts[i].equals("namespaces")
                    && parts[i + 2].equals("tables")
                    && parts[i + 4].equals("credentials")
                    && i + 5 == parts.length) {
                ns = i;
                break;
            }
        }
        if (ns < 0) {
            throw new IllegalArgumentException(
                    "VendedFileIO: the refresh endpoint '"
                            + endpoint
                            + "' is not a loadCredentials path (.../namespaces/{namespace}/tables/{table}/credentials)");
        }
        StringBuilder prefix = new StringBuilder();
        int v1 = -1;
        for (int i = 0; i < ns; i++) {
            if (parts[i].equals("v1")) {
                v1 = i;
            }
        }
        for (int i = v1 + 1; v1 >= 0 && i < ns; i++) {
            if (!parts[i].isEmpty()) {
                prefix.append(prefix.length() == 0 ? "" : "/").append(decode(parts[i]));
            }
        }
        List<String> out = new ArrayList<>();
        out.add(prefix.toString());
        out.add(decode(parts[ns + 3]));
        for (String p : decode(parts[ns + 1]).split(java.util.regex.Pattern.quote(separator))) {
            out.add(p);
        }
        return out;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
