package dev.vended.storage.hadoop;

import dev.vended.storage.Redaction;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;

/**
 * The configuration of one table: the {@code vended.storage.table.<name>.*} entries of a Hadoop
 * {@link Configuration} (see {@link VendedFileSystem} for the keys), with the storage options
 * shared by every table ({@code vended.storage.options.<key>}) under its own. Holds no secret:
 * tokens are named by an environment variable or a file, never given inline. Immutable.
 */
final class TableConfig {

    /** Prefix of every per-table key. */
    static final String PREFIX = "vended.storage.table.";

    /** Prefix of the storage options shared by every table. */
    static final String SHARED_OPTIONS_PREFIX = VendedFileSystem.SHARED_OPTIONS_KEY + ".";

    /** Prefix (within a table's keys) of its provider's own settings. */
    static final String PROVIDER_CONF = "provider.conf.";

    /**
     * Names of provider settings that would hold a secret (Spark's own redaction words), unless
     * they name a file or an environment variable.
     */
    private static final Pattern SECRET_NAME =
            Pattern.compile(
                    "(?i).*(secret|password|passwd|token|credential"
                            + "|access[._-]?key|private[._-]?key).*");

    private static final Pattern NAMES_A_PLACE =
            Pattern.compile("(?i).*[._-](env|file|path|url|uri)$");

    final String name;
    /** The configured location, as given ({@code null} for a table located by its catalog). */
    final String location;
    /** The catalog the table's credentials come from natively, or {@code null}. */
    final CatalogTables.Catalog catalog;
    /** Every {@code vended.storage.table.<name>.*} entry, key without the prefix, sorted. */
    final Map<String, String> entries;
    private final String identity;

    private TableConfig(
            String name, String location, CatalogTables.Catalog catalog, Map<String, String> entries) {
        this.name = name;
        this.location = location;
        this.catalog = catalog;
        this.entries = entries;
        this.identity = name + "=" + entries;
    }

    /**
     * Every table configured in {@code conf}, by name.
     *
     * @throws IOException naming the key when an entry is malformed
     */
    static Map<String, TableConfig> all(Configuration conf) throws IOException {
        Map<String, String> shared = sharedOptions(conf);
        Map<String, Map<String, String>> byName = new TreeMap<>();
        for (Map.Entry<String, String> e : conf.getPropsWithPrefix(PREFIX).entrySet()) {
            String rest = e.getKey();
            int dot = rest.indexOf('.');
            if (dot <= 0 || dot == rest.length() - 1) {
                throw new IOException(
                        "malformed table key " + PREFIX + rest + " (expected " + PREFIX + "<name>.<setting>)");
            }
            byName.computeIfAbsent(rest.substring(0, dot), n -> new TreeMap<>())
                    .put(rest.substring(dot + 1), e.getValue() == null ? "" : e.getValue().trim());
        }
        Map<String, TableConfig> out = new TreeMap<>();
        for (Map.Entry<String, Map<String, String>> e : byName.entrySet()) {
            Map<String, String> entries = e.getValue();
            shared.forEach((k, v) -> entries.putIfAbsent("options." + k, v));
            out.put(e.getKey(), of(e.getKey(), entries));
        }
        return out;
    }

    /**
     * The storage options every table gets ({@code vended.storage.options.<key>}), key without
     * the prefix; a table's own {@code options.<key>} overrides one.
     *
     * @throws IOException naming the key when it is not a known non-secret storage option
     */
    static Map<String, String> sharedOptions(Configuration conf) throws IOException {
        Map<String, String> out = new TreeMap<>();
        Map<String, String> given = conf.getPropsWithPrefix(SHARED_OPTIONS_PREFIX);
        for (Map.Entry<String, String> e : given.entrySet()) {
            String option = e.getKey();
            if (!Redaction.isNonSecretKey(option)) {
                throw notNonSecret(SHARED_OPTIONS_PREFIX + option, option);
            }
            out.put(option, e.getValue() == null ? "" : e.getValue().trim());
        }
        return out;
    }

    /**
     * The settings of table {@code name}'s provider: its {@code provider.conf.<key>} entries in
     * {@code conf}, key without the prefix, sorted.
     */
    static Map<String, String> providerConf(Configuration conf, String name) {
        Map<String, String> out = new TreeMap<>();
        conf.getPropsWithPrefix(PREFIX + name + "." + PROVIDER_CONF)
                .forEach((k, v) -> out.put(k, v == null ? "" : v.trim()));
        return out;
    }

    private static IOException notNonSecret(String key, String option) {
        return new IOException(
                key
                        + ": '"
                        + option
                        + "' is not a known non-secret storage option; credentials"
                        + " come from the table's provider or catalog, never from the"
                        + " configuration");
    }

    static TableConfig of(String name, Map<String, String> entries) throws IOException {
        for (String key : entries.keySet()) {
            if (key.startsWith("options.")) {
                String option = key.substring("options.".length());
                if (!Redaction.isNonSecretKey(option)) {
                    throw notNonSecret(key(name, key), option);
                }
            } else if (key.startsWith(PROVIDER_CONF)) {
                String setting = key.substring(PROVIDER_CONF.length());
                if (setting.isEmpty()) {
                    throw new IOException(
                            "malformed table key "
                                    + key(name, key)
                                    + " (expected provider.conf.<key>)");
                }
                if (SECRET_NAME.matcher(setting).matches()
                        && !NAMES_A_PLACE.matcher(setting).matches()) {
                    throw new IOException(
                            key(name, key)
                                    + ": '"
                                    + setting
                                    + "' names a secret; secrets never go into the configuration:"
                                    + " give the provider the file or environment variable holding"
                                    + " it (a setting ending in -file or -env)");
                }
            } else if (!KNOWN.contains("|" + key + "|")) {
                throw new IOException(
                        "unknown table setting " + key(name, key) + " (known: " + KNOWN_LIST + ")");
            }
        }
        String access = entries.get("access");
        if (access != null && !access.matches("(?i)read|read-write|read_write")) {
            throw new IOException(
                    key(name, "access") + " must be read or read-write, got '" + access + "'");
        }
        CatalogTables.Catalog catalog = CatalogTables.catalogOf(name, entries);
        String location = entries.get("location");
        if (location == null || location.isEmpty()) {
            if (catalog == null) {
                throw new IOException(
                        key(name, "location")
                                + " is required (only a Lance or Unity Catalog table can be"
                                + " located by its catalog)");
            }
            location = null;
        } else {
            Location.parse(location, "s3"); // checked now, with a clear error
        }
        return new TableConfig(name, location, catalog, new TreeMap<>(entries));
    }

    private static final String KNOWN_LIST =
            "location, provider.class, lance.endpoint, lance.table-id, lance.delimiter,"
                    + " lance.token-env, lance.token-file, lance.timeout, unity.uri, unity.table,"
                    + " unity.token-env, unity.token-file, unity.timeout, lead-time, options.<key>,"
                    + " provider.conf.<key>, access";
    private static final String KNOWN = "|" + KNOWN_LIST.replace(", ", "|").replace(",", "|") + "|";

    static String key(String name, String setting) {
        return PREFIX + name + "." + setting;
    }

    String get(String setting) {
        return entries.get(setting);
    }

    /** The {@code options.*} entries, as storage options. */
    Map<String, String> staticOptions() {
        Map<String, String> out = new TreeMap<>();
        entries.forEach(
                (k, v) -> {
                    if (k.startsWith("options.")) {
                        out.put(k.substring("options.".length()), v);
                    }
                });
        String access = entries.get("access");
        if (access != null) {
            // The storage option the core reads (read-write is accepted there too).
            out.put("access_mode", access);
        }
        return out;
    }

    /** Identifies the configuration completely (no secrets in it): the JVM-wide cache key. */
    String identity() {
        return identity;
    }

    @Override
    public String toString() {
        return "TableConfig{" + name + ", location=" + location + "}";
    }

    /**
     * A canonical bucket location: cloud scheme ({@code s3}, {@code gs}, {@code abfss}, ...),
     * authority and key prefix (no leading {@code /}; empty, or ending in {@code /}).
     */
    record Location(String scheme, String authority, String prefix) {
        Location {
            Objects.requireNonNull(scheme);
            Objects.requireNonNull(authority);
            Objects.requireNonNull(prefix);
        }

        /**
         * Parses a location URI; {@code vendedScheme} is the cloud behind {@code vended://}.
         *
         * @throws IOException if it is not {@code scheme://authority[/path]}
         */
        static Location parse(String uri, String vendedScheme) throws IOException {
            URI u;
            try {
                u = new URI(uri);
            } catch (URISyntaxException e) {
                throw new IOException("table location is not a URI: " + Redaction.redactUri(uri), e);
            }
            if (u.getScheme() == null || u.getRawAuthority() == null || u.getQuery() != null) {
                throw new IOException(
                        "table location must be scheme://bucket/prefix/ without a query: "
                                + Redaction.redactUri(uri));
            }
            String path = u.getPath() == null ? "" : u.getPath();
            while (path.startsWith("/")) {
                path = path.substring(1);
            }
            if (!path.isEmpty() && !path.endsWith("/")) {
                path = path + "/";
            }
            return new Location(cloudScheme(u.getScheme(), vendedScheme), u.getAuthority(), path);
        }

        /** The cloud a Hadoop scheme names: s3a/s3n/s3 as s3, abfs as abfss, vended as configured. */
        static String cloudScheme(String scheme, String vendedScheme) {
            String s = scheme.toLowerCase(java.util.Locale.ROOT);
            switch (s) {
                case "s3a":
                case "s3n":
                    return "s3";
                case "abfs":
                    return "abfss";
                case "vended":
                    return cloudScheme(vendedScheme, "s3");
                default:
                    return s;
            }
        }

        /** The URI of the bucket's root store: {@code scheme://authority/}. */
        String bucketUri() {
            return scheme + "://" + authority + "/";
        }

        /** Whether {@code key} (a bucket key without a trailing slash) is in this location. */
        boolean contains(String key) {
            return prefix.isEmpty() || (key + "/").startsWith(prefix);
        }

        /** Whether this location lies strictly under {@code key} (a directory leading to it). */
        boolean liesUnder(String key) {
            return !prefix.isEmpty() && (key.isEmpty() || prefix.startsWith(key + "/"));
        }
    }
}
