package dev.vended.storage.hadoop;

import dev.vended.storage.CatalogSpecProvider;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;
import dev.vended.storage.catalog.UnityCatalogStorageOptionsProvider;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;

/**
 * The tables whose credentials come from a catalog the library implements natively, configured by
 * {@code vended.storage.table.<name>.<catalog>.*}: a Lance Namespace table ({@code lance.*}) or a
 * Unity Catalog table ({@code unity.*}). What the two share is here once: the checks of the keys,
 * the bearer token named by {@code <catalog>.token-env} or {@code <catalog>.token-file} (never the
 * token itself), the timeout of one call ({@code <catalog>.timeout}) and the opening of the table's
 * store, at its configured location or where its catalog says it is.
 */
final class CatalogTables {

    /** A catalog: its key prefix, the key naming its server and the key naming the table. */
    enum Catalog {
        /** Lance Namespace: {@code lance.endpoint} and {@code lance.table-id}. */
        LANCE("lance.", "endpoint", "table-id", "Lance Namespace"),
        /** Unity Catalog: {@code unity.uri} and {@code unity.table} ({@code catalog.schema.table}). */
        UNITY("unity.", "uri", "table", "Unity Catalog");

        final String prefix;
        final String serverKey;
        final String tableKey;
        final String title;

        Catalog(String prefix, String server, String table, String title) {
            this.prefix = prefix;
            this.serverKey = prefix + server;
            this.tableKey = prefix + table;
            this.title = title;
        }
    }

    private CatalogTables() {}

    /**
     * The catalog a table's settings name, checked: at most one credential source ({@code
     * provider.class} or one catalog), the catalog's table given, at most one of {@code
     * token-env} and {@code token-file}, no catalog key without the catalog's server key.
     *
     * @param name the table's name
     * @param entries its settings, keys without the table's prefix
     * @return the catalog, or {@code null} when none is configured
     * @throws IOException naming the key that is wrong
     */
    static Catalog catalogOf(String name, Map<String, String> entries) throws IOException {
        Catalog found = null;
        for (Catalog c : Catalog.values()) {
            boolean server = !entries.getOrDefault(c.serverKey, "").isEmpty();
            if (!server) {
                for (String k : entries.keySet()) {
                    if (k.startsWith(c.prefix)) {
                        throw new IOException(
                                TableConfig.key(name, k)
                                        + " needs "
                                        + TableConfig.key(name, c.serverKey));
                    }
                }
                continue;
            }
            if (found != null) {
                throw new IOException(
                        "table '" + name + "' sets both " + found.serverKey + " and " + c.serverKey
                                + ": choose one");
            }
            if (entries.getOrDefault(c.tableKey, "").isEmpty()) {
                throw new IOException(
                        TableConfig.key(name, c.tableKey) + " is required with " + c.serverKey);
            }
            if (entries.containsKey(c.prefix + "token-env")
                    && entries.containsKey(c.prefix + "token-file")) {
                throw new IOException(
                        "table '" + name + "' sets both " + c.prefix + "token-env and " + c.prefix
                                + "token-file: choose one");
            }
            found = c;
        }
        if (found != null && entries.containsKey("provider.class")) {
            throw new IOException(
                    "table '" + name + "' sets both provider.class and " + found.serverKey
                            + ": choose one");
        }
        return found;
    }

    /**
     * Builds the table's catalog spec (reading its token), so that a configuration error shows
     * when a FileSystem is initialized; sends no request.
     *
     * @throws IOException naming the key that is wrong
     */
    static void check(TableConfig table, Configuration conf) throws IOException {
        spec(table, conf);
    }

    /**
     * Opens the store of a catalog table: at its configured location with the catalog spec as its
     * provider (the first credentials are fetched natively at first use), or, without a location,
     * where the catalog says: for Lance one describe, which also seeds the store; for Unity
     * Catalog one {@code getTable}, the store's provider then being the table's spec by id (its
     * first credentials fetched natively at first use, each refresh one native credentials call).
     * A failed describe or {@code getTable} is remembered natively for the credential refresher's
     * backoff, so callers during it get the failure without a catalog call.
     *
     * @param options the table's static options (with its User-Agent)
     * @param lead the refresh lead time, or {@code null} for the default
     * @throws IOException naming the table when a catalog call fails or the catalog gives no
     *     location; an {@link InterruptedIOException} if interrupted
     */
    static TableStores.Opened open(
            TableConfig table,
            Configuration conf,
            String vendedScheme,
            Map<String, String> options,
            Duration lead)
            throws IOException {
        CatalogSpecProvider spec = spec(table, conf);
        try {
            if (table.location != null) {
                TableConfig.Location loc = TableConfig.Location.parse(table.location, vendedScheme);
                return new TableStores.Opened(
                        ObjectStore.open(loc.bucketUri(), options, spec, lead), loc, spec.toString());
            }
            String where;
            Map<String, String> vended;
            if (spec instanceof UnityCatalogStorageOptionsProvider unity) {
                // One getTable (shared and, after a failure, remembered natively for the
                // backoff); the store's first credentials are then fetched natively at first use,
                // where a failure follows the refresher's backoff like every later refresh.
                spec = unity.resolved();
                where = ((UnityCatalogStorageOptionsProvider) spec).storageLocation();
                vended = Map.of();
            } else {
                LanceNamespaceStorageOptionsProvider.TableDescription d =
                        ((LanceNamespaceStorageOptionsProvider) spec).describeTable();
                where = d.uri();
                vended = d.storageOptions();
            }
            if (where == null || where.isEmpty() || vended == null) {
                throw new IOException(
                        "table '"
                                + table.name
                                + "': its catalog ("
                                + table.catalog.title
                                + ") gave no location or no credentials; set "
                                + TableConfig.key(table.name, "location"));
            }
            TableConfig.Location loc = TableConfig.Location.parse(where, vendedScheme);
            Map<String, String> seeded = new LinkedHashMap<>(options);
            seeded.putAll(vended);
            return new TableStores.Opened(
                    ObjectStore.open(loc.bucketUri(), seeded, spec, lead), loc, spec.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while opening table " + table.name);
        }
    }

    /** The table's catalog spec. */
    private static CatalogSpecProvider spec(TableConfig table, Configuration conf)
            throws IOException {
        Catalog c = table.catalog;
        String token = token(table, c);
        Duration timeout = timeout(table, conf, c);
        try {
            if (c == Catalog.UNITY) {
                UnityCatalogStorageOptionsProvider.Operation operation =
                        "read".equalsIgnoreCase(table.get("access"))
                                ? UnityCatalogStorageOptionsProvider.Operation.READ
                                : UnityCatalogStorageOptionsProvider.Operation.READ_WRITE;
                UnityCatalogStorageOptionsProvider.Builder b =
                        UnityCatalogStorageOptionsProvider.table(
                                        table.get(c.serverKey), table.get(c.tableKey))
                                .operation(operation);
                if (token != null) {
                    b.bearerToken(token);
                }
                return timeout == null ? b.build() : b.timeout(timeout).build();
            }
            String delimiter = table.get("lance.delimiter");
            if (delimiter == null || delimiter.isEmpty()) {
                delimiter = LanceNamespaceStorageOptionsProvider.DEFAULT_DELIMITER;
            }
            LanceNamespaceStorageOptionsProvider.Builder b =
                    LanceNamespaceStorageOptionsProvider.builder(
                                    table.get(c.serverKey), split(table.get(c.tableKey), delimiter))
                            .delimiter(delimiter);
            if (token != null) {
                b.bearerToken(token);
            }
            return timeout == null ? b.build() : b.timeout(timeout).build();
        } catch (IllegalArgumentException e) {
            throw new IOException("table '" + table.name + "': " + e.getMessage(), e);
        }
    }

    /** {@code id} split at every {@code delimiter}. */
    private static List<String> split(String id, String delimiter) {
        List<String> parts = new ArrayList<>();
        int from = 0;
        for (int at = id.indexOf(delimiter); at >= 0; at = id.indexOf(delimiter, from)) {
            parts.add(id.substring(from, at));
            from = at + delimiter.length();
        }
        parts.add(id.substring(from));
        return parts;
    }

    /**
     * The timeout of one catalog call ({@code <catalog>.timeout}, Hadoop's duration syntax: {@code
     * 10s}, {@code 500ms}; a bare number is milliseconds), or null for the spec's default.
     *
     * @throws IOException naming the key when the value is not a duration
     */
    private static Duration timeout(TableConfig table, Configuration conf, Catalog c)
            throws IOException {
        String key = TableConfig.key(table.name, c.prefix + "timeout");
        if (table.get(c.prefix + "timeout") == null) {
            return null;
        }
        try {
            return Duration.ofMillis(conf.getTimeDuration(key, -1L, TimeUnit.MILLISECONDS));
        } catch (NumberFormatException e) {
            throw new IOException(key + " is not a duration (e.g. 10s): '" + conf.get(key) + "'", e);
        }
    }

    /**
     * The bearer token named by {@code <catalog>.token-env} or {@code <catalog>.token-file}, or
     * null without either.
     *
     * @throws IOException naming the key when the variable is unset or the file unreadable (never
     *     quoting a token)
     */
    private static String token(TableConfig table, Catalog c) throws IOException {
        String env = table.get(c.prefix + "token-env");
        if (env != null) {
            String v = System.getenv(env);
            if (v == null || v.isBlank()) {
                throw new IOException(
                        TableConfig.key(table.name, c.prefix + "token-env")
                                + " names the environment variable "
                                + env
                                + ", which is not set");
            }
            return v.trim();
        }
        String file = table.get(c.prefix + "token-file");
        if (file != null) {
            try {
                return Files.readString(Path.of(file), StandardCharsets.UTF_8).trim();
            } catch (IOException | RuntimeException e) {
                throw new IOException(
                        TableConfig.key(table.name, c.prefix + "token-file")
                                + ": cannot read "
                                + file
                                + " ("
                                + e.getClass().getSimpleName()
                                + ")",
                        e);
            }
        }
        return null;
    }
}
