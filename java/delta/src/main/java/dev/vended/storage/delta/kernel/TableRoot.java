package dev.vended.storage.delta.kernel;

import java.util.Locale;

/**
 * The location a {@link VendedKernelFileIO} serves, and the mapping between the fully qualified
 * paths Kernel passes and the object keys of the store opened at that location. Parsing only; no
 * I/O.
 *
 * <p>A path is inside the root when, after its scheme, it starts with the root's location at a
 * {@code /} boundary. The schemes {@code s3}, {@code s3a} and {@code s3n} are one family, so a
 * table opened as {@code s3://b/t} also serves {@code s3a://b/t/...}; any other scheme must match
 * exactly (ignoring case). Both {@code scheme://authority/path} and Hadoop's {@code scheme:/path}
 * (a {@code file} path without authority) are understood.
 *
 * @param scheme the root's scheme, lower case, e.g. {@code s3}
 * @param location the part after {@code scheme://} (or {@code scheme:}), ending with {@code /},
 *     e.g. {@code bucket/tables/t/}
 */
record TableRoot(String scheme, String location) {

    /**
     * Parses a store URI.
     *
     * @param uri e.g. {@code s3://bucket/tables/t} or {@code s3://bucket/tables/t/}
     * @return the root
     * @throws IllegalArgumentException naming the URI when it has no {@code scheme://} or nothing
     *     after it
     */
    static TableRoot of(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("VendedKernelFileIO: a null table URI");
        }
        int colon = uri.indexOf("://");
        String location = colon <= 0 ? "" : uri.substring(colon + 3);
        if (location.isEmpty() || location.equals("/")) {
            throw new IllegalArgumentException(
                    "VendedKernelFileIO: table URI '"
                            + uri
                            + "' is not scheme://bucket/path (e.g. s3://bucket/tables/t)");
        }
        if (!location.endsWith("/")) {
            location = location + "/";
        }
        return new TableRoot(uri.substring(0, colon).toLowerCase(Locale.ROOT), location);
    }

    /**
     * The object key of a fully qualified path, relative to the root; without trailing {@code /}.
     *
     * @param path a path Kernel passes, e.g. {@code s3://bucket/tables/t/_delta_log/0.json}
     * @return the key, e.g. {@code _delta_log/0.json}; empty for the root itself
     * @throws IllegalArgumentException naming the path and the root when the path has no scheme,
     *     another scheme, or lies outside the root
     */
    String keyOf(String path) {
        if (path == null) {
            throw new IllegalArgumentException("VendedKernelFileIO: a null path");
        }
        int colon = path.indexOf(':');
        if (colon <= 0 || !family(path.substring(0, colon)).equals(family(scheme))) {
            throw outside(path);
        }
        String rest = path.substring(colon + 1);
        if (!location.startsWith("/") && rest.startsWith("//")) {
            rest = rest.substring(2);
        } else if (location.startsWith("/") && rest.startsWith("///")) {
            rest = rest.substring(2); // file:///tmp/t -> /tmp/t
        }
        String key;
        if (rest.startsWith(location)) {
            key = rest.substring(location.length());
        } else if (rest.equals(location.substring(0, location.length() - 1))) {
            key = "";
        } else {
            throw outside(path);
        }
        while (key.endsWith("/")) {
            key = key.substring(0, key.length() - 1);
        }
        return key;
    }

    /**
     * The fully qualified path of a key under this root.
     *
     * @param key an object key relative to the root, or empty for the root
     * @return e.g. {@code s3://bucket/tables/t/_delta_log/0.json}; the root without its trailing
     *     {@code /} for an empty key
     */
    String pathOf(String key) {
        String base = scheme + "://" + location;
        return key.isEmpty() ? base.substring(0, base.length() - 1) : base + key;
    }

    /** The root as a URI, ending with {@code /}. */
    String uri() {
        return scheme + "://" + location;
    }

    private IllegalArgumentException outside(String path) {
        return new IllegalArgumentException(
                "VendedKernelFileIO: path '"
                        + path
                        + "' is not under the table root "
                        + uri()
                        + " this FileIO was opened for (open one FileIO per table location)");
    }

    /** The S3 schemes are one family; any other scheme stands for itself. */
    private static String family(String scheme) {
        String s = scheme.toLowerCase(Locale.ROOT);
        return s.equals("s3a") || s.equals("s3n") ? "s3" : s;
    }
}
