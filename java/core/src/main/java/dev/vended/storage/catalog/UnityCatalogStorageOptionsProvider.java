package dev.vended.storage.catalog;

import dev.vended.storage.CatalogSpecProvider;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.Redaction;
import dev.vended.storage.StorageException;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The spec of a table (or a storage path) of a Unity Catalog server, whose temporary credentials
 * API vends short-lived storage credentials. The protocol is implemented once, natively (Rust,
 * {@code crates/core/src/catalog/unity/}); this class only holds the server URI, the target, the
 * operation, the headers and the timeout.
 *
 * <p>Protocol (the Unity Catalog REST API, {@code api/all.yaml}; paths under {@code
 * {uri}/api/2.1/unity-catalog}, which is appended to the URI unless it already ends with it):
 *
 * <pre>
 * GET  /tables/{catalog.schema.table}      200 {"table_id": "...", "storage_location": "s3://..."}
 * POST /temporary-table-credentials        {"table_id": "...", "operation": "READ" | "READ_WRITE"}
 * POST /temporary-path-credentials         {"url": "s3://...", "operation": "PATH_READ" | "PATH_READ_WRITE"}
 * 200 {"aws_temp_credentials": {"access_key_id", "secret_access_key", "session_token"},
 *      "azure_user_delegation_sas": {"sas_token"}, "gcp_oauth_token": {"oauth_token"},
 *      "expiration_time": 1767225600000}                 (epoch milliseconds)
 * 404 {"error_code": "NOT_FOUND", "message": "Table not found: main.sales.orders"}
 * </pre>
 *
 * <p>The vended credential becomes storage options: {@code aws_access_key_id}, {@code
 * aws_secret_access_key}, {@code aws_session_token}; {@code azure_storage_sas_token} plus {@code
 * azure_storage_account_name} when the location names the account ({@code
 * abfss://container@account.dfs.core.windows.net/...}); {@code google_bearer_token}; and {@code
 * expires_at_millis} from {@code expiration_time}. Endpoint and region are never vended: they are
 * the caller's own options, which every refresh keeps.
 *
 * <pre>{@code
 * UnityCatalogStorageOptionsProvider table =
 *         UnityCatalogStorageOptionsProvider.table("https://uc.example", "main.sales.orders")
 *                 .operation(UnityCatalogStorageOptionsProvider.Operation.READ_WRITE)
 *                 .bearerToken(token)
 *                 .build();
 * try (ObjectStore store = table.openTable(Map.of("aws_region", "us-east-1"))) {
 *     byte[] log = store.get("_delta_log/00000000000000000000.json");
 * }
 * }</pre>
 *
 * <h2>Opening by name, refreshes</h2>
 *
 * {@link #openTable(Map)} looks the table up once ({@code getTable}), asks for credentials once to
 * seed the store, and opens the store at the table's {@code storage_location} with, as its
 * provider, the spec of the table <em>by id</em> ({@link #resolved()}, still naming the table in
 * its messages): every refresh is one
 * credentials call, made natively, with no call into the JVM. Read and read-write credentials of
 * one table have different {@link #providerId() ids}, so they never share a store.
 *
 * <h2>Identity, serialization, secrets</h2>
 *
 * {@link #providerId()} is {@code unity-catalog:{uri}:{table=name | table_id=id |
 * path=url}:{READ | READ_WRITE}:auth={fingerprint}}, the fingerprint a keyed hash of the headers
 * ({@code none} without). The serialized form <b>contains the header values in clear</b> (as the
 * other catalog specs'): treat the bytes as a secret. {@link #toString()}, {@link #providerId()}
 * and every exception message never contain a header value or a vended credential.
 *
 * <p>Failures are {@link CatalogException}s carrying the HTTP status, Unity Catalog's {@code
 * error_code} (as the code) and {@code message}, and naming the table (or path); a call is never
 * retried by itself. Instances are immutable and thread-safe.
 */
public final class UnityCatalogStorageOptionsProvider extends CatalogSpecProvider {

    private static final long serialVersionUID = 1L;

    /** The default timeout of one call, connection included: 10 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final String KIND = "unity-catalog";

    /** Read-only or read-write credentials. */
    public enum Operation {
        /** {@code READ} ({@code PATH_READ} for a path). */
        READ,
        /** {@code READ_WRITE} ({@code PATH_READ_WRITE} for a path). */
        READ_WRITE
    }

    /** What the credentials are for. */
    public enum Target {
        /** A table by its full name {@code catalog.schema.table}; spec key {@code table}. */
        TABLE,
        /** A table by its id; spec key {@code table_id}. */
        TABLE_ID,
        /** A storage path (path credentials); spec key {@code path}. */
        PATH
    }

    /** @serial The server URI as given. */
    private final String uri;
    /** @serial What the credentials are for. */
    private final Target target;
    /** @serial The table name, table id or path. */
    private final String name;
    /**
     * @serial Read or read-write, or {@code null}: then the store's access mode decides ({@code
     *     READ} for {@link dev.vended.storage.AccessMode#READ}, {@code READ_WRITE} for {@code
     *     READ_WRITE}), and {@code READ} when the store sets none.
     */
    private final Operation operation;
    /** @serial The storage location of a table given by id, or {@code null}. */
    private final String location;
    /** @serial The full name of a table given by id (for messages), or {@code null}. */
    private final String tableName;
    /** @serial Headers (name, value); the values are secrets. */
    private final LinkedHashMap<String, String> headers;
    /** @serial The timeout of one call, milliseconds. */
    private final long timeoutMillis;

    private UnityCatalogStorageOptionsProvider(
            String uri,
            Target target,
            String name,
            Operation operation,
            String location,
            String tableName,
            Map<String, String> headers,
            long timeoutMillis) {
        this.uri = Objects.requireNonNull(uri, "uri");
        this.target = Objects.requireNonNull(target, "target");
        this.name = Objects.requireNonNull(name, "name");
        this.operation = operation;
        this.location = location;
        this.tableName = tableName;
        this.headers = new LinkedHashMap<>(headers);
        this.timeoutMillis = timeoutMillis;
        validate();
    }

    /**
     * Starts building the spec of the table {@code fullName} ({@code catalog.schema.table}).
     *
     * @param uri the server URI, e.g. {@code http://127.0.0.1:8080} or a workspace URL
     * @param fullName the table's three-part name
     * @return a builder
     */
    public static Builder table(String uri, String fullName) {
        return new Builder(uri, Target.TABLE, fullName);
    }

    /**
     * Starts building the spec of the table with id {@code tableId} (no lookup; give its {@link
     * Builder#location(String) location} to open it).
     *
     * @param uri the server URI
     * @param tableId the table's id (UUID)
     * @return a builder
     */
    public static Builder tableId(String uri, String tableId) {
        return new Builder(uri, Target.TABLE_ID, tableId);
    }

    /**
     * Starts building the spec of the path credentials of {@code url}.
     *
     * @param uri the server URI
     * @param url the storage URL, e.g. {@code s3://bucket/landing/}
     * @return a builder
     */
    public static Builder path(String uri, String url) {
        return new Builder(uri, Target.PATH, url);
    }

    @Override
    protected String catalogKind() {
        return KIND;
    }

    @Override
    protected Map<String, String> catalogSpec() {
        Map<String, String> spec = new LinkedHashMap<>();
        spec.put("uri", uri);
        spec.put(target.name().toLowerCase(Locale.ROOT), name);
        if (operation != null) {
            spec.put("operation", operation.name());
        }
        if (location != null) {
            spec.put("location", location);
        }
        if (tableName != null) {
            spec.put("table", tableName);
        }
        spec.put("timeout_millis", Long.toString(timeoutMillis));
        headers.forEach((n, v) -> spec.put("header." + n, v));
        return spec;
    }

    /**
     * The spec of the same table by id, with its storage location: for a table given by name one
     * {@code getTable} call; a table given by id is returned as it is.
     *
     * @return the spec by id (same URI, operation, headers and timeout)
     * @throws CatalogException when {@code getTable} fails (404: no such table; 403: not
     *     allowed) or its answer has no {@code table_id}
     * @throws StorageException for a path spec (it has no table), or if the native library fails
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public UnityCatalogStorageOptionsProvider resolved()
            throws CatalogException, StorageException, InterruptedException {
        if (target == Target.TABLE_ID) {
            return this;
        }
        String[] table = unityTableNative();
        return new UnityCatalogStorageOptionsProvider(
                uri, Target.TABLE_ID, table[0], operation, table[1], name, headers, timeoutMillis);
    }

    /**
     * Where the data lives: the table's {@code storage_location} (one {@code getTable} call for a
     * table given by name), the location given for a table id, or the path.
     *
     * @return the location, or {@code null} for a table id given without one
     * @throws CatalogException when {@code getTable} fails
     * @throws StorageException if the native library fails otherwise
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public String storageLocation() throws CatalogException, StorageException, InterruptedException {
        switch (target) {
            case PATH:
                return name;
            case TABLE_ID:
                return location;
            default:
                return unityTableNative()[1];
        }
    }

    /**
     * Opens the table's (or the path's) store with the default refresh lead time. See {@link
     * #openTable(Map, Duration)}.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, ...), may be
     *     {@code null}
     * @return the open store; close it
     * @throws CatalogException when a catalog call fails, or {@code getTable} returned no location
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if the calling thread is interrupted before a call
     */
    public ObjectStore openTable(Map<String, String> clientOptions)
            throws IOException, InterruptedException {
        return openTable(clientOptions, null);
    }

    /**
     * Opens the store at the table's storage location (or the path): {@link #resolved()} (one
     * {@code getTable} for a table given by name), one credentials call, and the store opened with
     * {@code clientOptions} overlaid by the vended options (vended keys win), with the resolved
     * spec as its provider: its refreshes are native credentials calls, one per credential
     * lifetime.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, ...), may be
     *     {@code null}
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @return the open store; close it
     * @throws CatalogException when a catalog call fails, or there is no location ({@link
     *     CatalogException.Kind#MISSING_FIELD})
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if the calling thread is interrupted before a call
     */
    public ObjectStore openTable(Map<String, String> clientOptions, Duration leadTime)
            throws IOException, InterruptedException {
        UnityCatalogStorageOptionsProvider spec = target == Target.PATH ? this : resolved();
        String where = target == Target.PATH ? name : spec.location;
        if (where == null || where.isEmpty()) {
            throw new CatalogException(
                    CatalogException.Kind.MISSING_FIELD,
                    "Unity Catalog",
                    "open " + describe(),
                    -1,
                    null,
                    "the table has no storage location",
                    null);
        }
        Map<String, String> options = new HashMap<>();
        if (clientOptions != null) {
            options.putAll(clientOptions);
        }
        Map<String, String> vended = spec.fetchStorageOptions();
        if (vended != null) {
            options.putAll(vended);
        }
        return ObjectStore.open(where, options, spec, leadTime);
    }

    private String describe() {
        switch (target) {
            case TABLE_ID:
                return "table id '" + name + "'";
            case PATH:
                return "path '" + name + "'";
            default:
                return "table '" + name + "'";
        }
    }

    /**
     * What the credentials are for.
     *
     * @return the target kind
     */
    public Target target() {
        return target;
    }

    /**
     * The table name, table id or path.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Read or read-write, as given to the builder.
     *
     * @return the operation, or {@code null} when none was given: then the store's access mode
     *     decides ({@code READ_WRITE} for a store opened {@code READ_WRITE}), and {@code READ} when
     *     the store sets none
     */
    public Operation operation() {
        return operation;
    }

    /** Prints the URI (redacted), the target, the operation and the header names (never values). */
    @Override
    public String toString() {
        return "UnityCatalogStorageOptionsProvider{uri="
                + Redaction.redactUri(uri)
                + ", "
                + target.name().toLowerCase(Locale.ROOT)
                + "="
                + name
                + ", operation="
                + operation
                + (location == null ? "" : ", location=" + location)
                + (tableName == null ? "" : ", table=" + tableName)
                + ", headers="
                + headers.keySet()
                + ", timeoutMillis="
                + timeoutMillis
                + "}";
    }

    /**
     * Checks the deserialized spec as the builder does.
     *
     * @return the checked spec
     * @throws ObjectStreamException (an {@link InvalidObjectException}) when it is not valid
     */
    private Object readResolve() throws ObjectStreamException {
        try {
            return new UnityCatalogStorageOptionsProvider(
                    uri, target, name, operation, location, tableName, headers, timeoutMillis);
        } catch (RuntimeException e) {
            InvalidObjectException ex = new InvalidObjectException(e.getMessage());
            ex.initCause(e);
            throw ex;
        }
    }

    /** Builds a {@link UnityCatalogStorageOptionsProvider}; not thread-safe. */
    public static final class Builder {
        private final String uri;
        private final Target target;
        private final String name;
        private Operation operation;
        private String location;
        private final LinkedHashMap<String, String> headers = new LinkedHashMap<>();
        private Duration timeout = DEFAULT_TIMEOUT;

        private Builder(String uri, Target target, String name) {
            this.uri = Objects.requireNonNull(uri, "uri");
            this.target = target;
            this.name = Objects.requireNonNull(name, "name");
        }

        /**
         * Read-only ({@link Operation#READ}) or read-write credentials. Without this call the store's
         * access mode decides ({@link dev.vended.storage.AccessMode#READ} asks for {@code READ},
         * {@code READ_WRITE} for {@code READ_WRITE}), and {@code READ} when the store sets none; an
         * operation given here that disagrees with the store's access mode fails the open with an
         * {@code InvalidOptionsException} naming both.
         *
         * @param operation the operation
         * @return this builder
         */
        public Builder operation(Operation operation) {
            this.operation = Objects.requireNonNull(operation, "operation");
            return this;
        }

        /**
         * The storage location of a table given by id (to open it, and to name the Azure account
         * of a SAS token when the answer has no {@code url}).
         *
         * @param location e.g. {@code s3://bucket/sales/orders}
         * @return this builder
         */
        public Builder location(String location) {
            this.location = location == null || location.isEmpty() ? null : location;
            return this;
        }

        /**
         * A header sent with every request; its value is a secret that never appears in ids,
         * messages or {@code toString}. Setting a name again (in any case) replaces it.
         *
         * @param name the header name
         * @param value the header value
         * @return this builder
         */
        public Builder header(String name, String value) {
            LanceNamespaceStorageOptionsProvider.putHeader(headers, name, value);
            return this;
        }

        /**
         * Sends {@code Authorization: Bearer {token}} (a personal access token or an OAuth token).
         *
         * @param token the token
         * @return this builder
         */
        public Builder bearerToken(String token) {
            return header("Authorization", "Bearer " + Objects.requireNonNull(token, "token"));
        }

        /**
         * The timeout of one call, connection included (default 10 s).
         *
         * @param timeout a duration of at least 1 ms
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Builds the spec and checks it natively; sends no request.
         *
         * @return the spec
         * @throws IllegalArgumentException when the URI is not an http(s) URL, a table name is not
         *     {@code catalog.schema.table}, the id or path is empty, a header cannot be sent
         *     (named, value never quoted) or the timeout is below 1 ms
         */
        public UnityCatalogStorageOptionsProvider build() {
            return new UnityCatalogStorageOptionsProvider(
                    uri,
                    target,
                    name,
                    operation,
                    location,
                    null,
                    headers,
                    LanceNamespaceStorageOptionsProvider.timeoutMillis(timeout));
        }

        /** Prints the URI (redacted), the target and the header names. */
        @Override
        public String toString() {
            return "UnityCatalogStorageOptionsProvider.Builder{uri="
                    + Redaction.redactUri(uri)
                    + ", "
                    + target.name().toLowerCase(Locale.ROOT)
                    + "="
                    + name
                    + ", headers="
                    + headers.keySet()
                    + "}";
        }
    }
}
