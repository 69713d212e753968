package dev.vended.storage.catalog;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.Redaction;
import dev.vended.storage.StorageException;
import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
import java.io.Serializable;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Vends a table's storage options through the Lance Namespace REST {@code DescribeTable} operation.
 *
 * <p>Protocol (the Lance Namespace REST specification, {@code lance-namespace} 0.13; reference
 * server: PyPI {@code pylance} 14.0.2, {@code lance.namespace.RestAdapter}):
 *
 * <pre>
 * POST {endpoint}/v1/table/{id}/describe        id = the table id's parts joined by "$"
 * Content-Type: application/json
 * {"id": ["db", "orders"], "vend_credentials": true, "with_table_uri": true}
 *
 * 200 {"location": "s3://bucket/db/orders.lance", "table_uri": "...",
 *      "storage_options": {"aws_access_key_id": "...", ..., "expires_at_millis": "1767225600000"}}
 * 404 {"error": "table id 'db$orders'", "code": 4}     (ErrorResponse; 4 = TableNotFound)
 * </pre>
 *
 * <p>{@link #fetchStorageOptions()} returns {@code storage_options} (keys as this library uses
 * them, {@code expires_at_millis} in epoch milliseconds). Catalogs usually vend only credentials;
 * the endpoint, region and allow-http a store needs are the caller's own options, which a refresh
 * keeps. {@link #openTable(Map)} opens a table by name with a single describe call.
 *
 * <pre>{@code
 * LanceNamespaceStorageOptionsProvider provider =
 *         LanceNamespaceStorageOptionsProvider.builder("https://lance.example", "db", "orders")
 *                 .bearerToken(token)
 *                 .build();
 * try (ObjectStore store = provider.openTable(Map.of("aws_region", "us-east-1"))) {
 *     byte[] manifest = store.get("_versions/1.manifest");
 * }
 * }</pre>
 *
 * <h2>Identity, serialization, secrets</h2>
 *
 * {@link #providerId()} is {@code lance-namespace:{endpoint}:{id joined by the
 * delimiter}:auth={fingerprint}}, the fingerprint being a keyed hash (HMAC-SHA256, random key per
 * JVM) of the headers, or {@code none} without headers: deserialized copies in one JVM (every Spark
 * task of a job) share one native store and one credential cache, and two tenants with different
 * tokens for the same table never do. The provider is {@link Serializable}: its configuration
 * (headers included, so treat the serialized form as a secret) travels; the HTTP client is rebuilt
 * on arrival. {@link #toString()}, {@link #providerId()} and every exception message never contain
 * a header value.
 *
 * <p>Failures are {@link CatalogException}s carrying the HTTP status and the catalog's {@code
 * error} and {@code code}; the provider never retries by itself (see {@link CatalogException}).
 * Instances are thread-safe.
 */
public final class LanceNamespaceStorageOptionsProvider
        implements StorageOptionsProvider, Serializable {

    private static final long serialVersionUID = 1L;

    /** The default delimiter joining the table id's parts in the path: {@code $}. */
    public static final String DEFAULT_DELIMITER = "$";

    /** The default timeout of one describe call, connection included: 10 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final String CATALOG = "Lance Namespace";

    private final String endpoint;
    private final ArrayList<String> tableId;
    private final String delimiter;
    private final LinkedHashMap<String, String> headers;
    private final long timeoutMillis;

    private final transient URI describeUri;
    private final transient String shownEndpoint;
    private final transient String joinedId;
    private final transient String providerId;
    private final transient CatalogHttp http;
    private final transient AtomicLong calls;

    private LanceNamespaceStorageOptionsProvider(
            String endpoint,
            List<String> tableId,
            String delimiter,
            Map<String, String> headers,
            long timeoutMillis) {
        URI base = CatalogHttp.baseUri(endpoint, "the namespace endpoint");
        Objects.requireNonNull(tableId, "tableId");
        if (tableId.isEmpty()) {
            throw new IllegalArgumentException("the table id must have at least one part");
        }
        if (delimiter == null || delimiter.isEmpty()) {
            throw new IllegalArgumentException("the table id delimiter must not be empty");
        }
        for (String part : tableId) {
            if (part == null || part.isEmpty()) {
                throw new IllegalArgumentException("the table id " + tableId + " has an empty part");
            }
            if (part.contains(delimiter)) {
                throw new IllegalArgumentException(
                        "the table id part '" + part + "' contains the delimiter '" + delimiter + "'");
            }
        }
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("the timeout must be positive");
        }
        CatalogHttp.validateHeaders(headers);
        this.endpoint = endpoint;
        this.tableId = new ArrayList<>(tableId);
        this.delimiter = delimiter;
        this.headers = new LinkedHashMap<>(headers);
        this.timeoutMillis = timeoutMillis;
        this.joinedId = String.join(delimiter, tableId);
        this.shownEndpoint = CatalogHttp.displayUrl(base);
        this.describeUri =
                CatalogHttp.withSegments(base, List.of("v1", "table", joinedId, "describe"));
        this.providerId =
                "lance-namespace:"
                        + shownEndpoint
                        + ":"
                        + joinedId
                        + ":auth="
                        + CatalogHttp.authId(this.headers);
        this.http = new CatalogHttp(CATALOG, this.headers, Duration.ofMillis(timeoutMillis));
        this.calls = new AtomicLong();
    }

    /**
     * Starts building a provider for table {@code tableId} (its parts, outermost namespace first)
     * of the namespace server at {@code endpoint} (e.g. {@code http://127.0.0.1:2333}; a base path
     * is kept).
     *
     * @param endpoint the namespace REST endpoint
     * @param tableId the table id's parts, e.g. {@code "db", "orders"}
     * @return a builder
     */
    public static Builder builder(String endpoint, String... tableId) {
        return new Builder(endpoint, Arrays.asList(tableId));
    }

    /**
     * Starts building a provider.
     *
     * @param endpoint the namespace REST endpoint
     * @param tableId the table id's parts, outermost namespace first
     * @return a builder
     */
    public static Builder builder(String endpoint, List<String> tableId) {
        return new Builder(endpoint, tableId);
    }

    /**
     * Calls {@code DescribeTable} once.
     *
     * @return the table's location, URI and vended storage options
     * @throws CatalogException for a non-2xx answer (404 when the table does not exist), a
     *     timeout, a connection failure, or an answer that is not a JSON object with string-valued
     *     {@code storage_options}
     * @throws InterruptedException if interrupted while waiting for the answer
     */
    public TableDescription describeTable() throws CatalogException, InterruptedException {
        calls.incrementAndGet();
        String operation = operation();
        String body =
                "{\"id\":"
                        + Json.stringArray(tableId)
                        + ",\"vend_credentials\":true,\"with_table_uri\":true}";
        HttpRequest.Builder request =
                HttpRequest.newBuilder(describeUri)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body));
        Object answer = http.sendJson(request, operation, LanceNamespaceStorageOptionsProvider::errorBody);
        if (!(answer instanceof Map)) {
            throw malformed(
                    "the answer is a JSON " + Json.typeOf(answer) + ", expected an object");
        }
        Map<?, ?> m = (Map<?, ?>) answer;
        String location = string(m, "location");
        String tableUri = string(m, "table_uri");
        Map<String, String> options = null;
        Object so = m.get("storage_options");
        if (so != null) {
            String[] problem = new String[1];
            options = CatalogHttp.stringMap(so, "storage_options", problem);
            if (options == null) {
                throw malformed(problem[0]);
            }
        }
        return new TableDescription(location, tableUri, options);
    }

    /**
     * Calls {@code DescribeTable} and returns its {@code storage_options}.
     *
     * @return the vended options, including {@code expires_at_millis} when they expire
     * @throws CatalogException as {@link #describeTable()}, and of kind {@link
     *     CatalogException.Kind#MISSING_FIELD} when the answer has no {@code storage_options}
     * @throws InterruptedException if interrupted while waiting for the answer
     */
    @Override
    public Map<String, String> fetchStorageOptions() throws CatalogException, InterruptedException {
        TableDescription d = describeTable();
        if (d.storageOptions() == null) {
            throw missing(MISSING_STORAGE_OPTIONS);
        }
        return new LinkedHashMap<>(d.storageOptions());
    }

    /**
     * Opens the table's store by name with one describe call (no second call at open), refreshing
     * credentials with the default lead time. See {@link #openTable(Map, Duration)}.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, ...), may be
     *     {@code null}
     * @return the open store; close it
     * @throws CatalogException when describe fails or its answer has no location or no {@code
     *     storage_options}
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if interrupted while waiting for the catalog
     */
    public ObjectStore openTable(Map<String, String> clientOptions)
            throws IOException, InterruptedException {
        return openTable(clientOptions, null);
    }

    /**
     * Opens the table's store by name with one describe call: the store's URI is the answer's
     * {@code table_uri} (else {@code location}); its initial options are {@code clientOptions}
     * overlaid by the vended {@code storage_options} (vended credentials replace any credentials in
     * {@code clientOptions} as a set); this provider refreshes them before they expire.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, ...), may be
     *     {@code null}
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @return the open store; close it
     * @throws CatalogException when describe fails or its answer has no location or no {@code
     *     storage_options}
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if interrupted while waiting for the catalog
     */
    public ObjectStore openTable(Map<String, String> clientOptions, Duration leadTime)
            throws IOException, InterruptedException {
        TableDescription d = describeTable();
        String uri = d.uri();
        if (uri == null) {
            throw missing("the answer has neither table_uri nor location");
        }
        if (d.storageOptions() == null) {
            throw missing(MISSING_STORAGE_OPTIONS);
        }
        return ObjectStore.open(uri, merge(clientOptions, d.storageOptions()), this, leadTime);
    }

    /** {@code mine} overlaid by {@code vended}; vended credentials replace mine as a set. */
    static Map<String, String> merge(Map<String, String> mine, Map<String, String> vended) {
        Map<String, String> out = new LinkedHashMap<>();
        if (mine != null) {
            out.putAll(mine);
        }
        boolean vendsCredentials = false;
        for (String k : vended.keySet()) {
            vendsCredentials |= isCredentialKey(k);
        }
        if (vendsCredentials) {
            out.keySet().removeIf(LanceNamespaceStorageOptionsProvider::isCredentialKey);
        }
        out.putAll(vended);
        return out;
    }

    private static boolean isCredentialKey(String key) {
        return key.equals("aws_access_key_id")
                || key.equals("expires_at_millis")
                || Redaction.isSecretKey(key);
    }

    private static final String MISSING_STORAGE_OPTIONS =
            "the answer has no storage_options (does the namespace vend credentials for this"
                    + " table?)";

    /**
     * {@code lance-namespace:{endpoint}:{id}:auth={fingerprint}}; never contains a header value.
     */
    @Override
    public String providerId() {
        return providerId;
    }

    /** How many describe calls this instance has sent (successful or not). */
    public long describeCalls() {
        return calls.get();
    }

    /** The table id's parts. */
    public List<String> tableId() {
        return Collections.unmodifiableList(tableId);
    }

    /** The endpoint as printed (no user info, query or trailing slash). */
    public String endpoint() {
        return shownEndpoint;
    }

    @Override
    public String toString() {
        return "LanceNamespaceStorageOptionsProvider{endpoint="
                + shownEndpoint
                + ", tableId="
                + tableId
                + ", delimiter="
                + delimiter
                + ", headers="
                + headers.keySet()
                + ", timeoutMillis="
                + timeoutMillis
                + "}";
    }

    private String operation() {
        return "describe table '" + joinedId + "' at " + shownEndpoint;
    }

    private CatalogException malformed(String message) {
        return http.error(CatalogException.Kind.MALFORMED_RESPONSE, operation(), 200, null, message);
    }

    private CatalogException missing(String message) {
        return http.error(CatalogException.Kind.MISSING_FIELD, operation(), 200, null, message);
    }

    private String string(Map<?, ?> m, String key) throws CatalogException {
        Object v = m.get(key);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw malformed("'" + key + "' is a JSON " + Json.typeOf(v) + ", expected a string");
    }

    /** {@code [error, code]} of a Lance Namespace {@code ErrorResponse}. */
    private static String[] errorBody(Object body) {
        String message = CatalogHttp.text(body, "error");
        if (message == null || message.isEmpty()) {
            message = CatalogHttp.text(body, "detail");
        }
        String code = CatalogHttp.text(body, "code");
        if (code != null) {
            try {
                int c = Integer.parseInt(code);
                if (c >= 0 && c < CODE_NAMES.length) {
                    code = c + " " + CODE_NAMES[c];
                }
            } catch (NumberFormatException e) {
                // keep as is
            }
        }
        return new String[] {message, code};
    }

    /** Names of the Lance Namespace error codes ({@code ErrorResponse.code}). */
    private static final String[] CODE_NAMES = {
        "Unsupported",
        "NamespaceNotFound",
        "NamespaceAlreadyExists",
        "NamespaceNotEmpty",
        "TableNotFound",
        "TableAlreadyExists",
        "TableIndexNotFound",
        "TableIndexAlreadyExists",
        "TableTagNotFound",
        "TableTagAlreadyExists",
        "TransactionNotFound",
        "TableVersionNotFound",
        "TableColumnNotFound",
        "InvalidInput",
        "ConcurrentModification",
        "PermissionDenied",
        "Unauthenticated",
        "ServiceUnavailable",
        "Internal",
        "InvalidTableState",
        "TableSchemaValidationError",
        "Throttling",
        "TableBranchNotFound",
        "TableBranchAlreadyExists",
    };

    /** Rebuilds the transient state (HTTP client, id, counters) after deserialization. */
    private Object readResolve() throws ObjectStreamException {
        try {
            return new LanceNamespaceStorageOptionsProvider(
                    endpoint, tableId, delimiter, headers, timeoutMillis);
        } catch (RuntimeException e) {
            InvalidObjectException ex = new InvalidObjectException(e.getMessage());
            ex.initCause(e);
            throw ex;
        }
    }

    /** What {@code DescribeTable} answered (the fields this library uses). */
    public static final class TableDescription {
        private final String location;
        private final String tableUri;
        private final Map<String, String> storageOptions;

        TableDescription(String location, String tableUri, Map<String, String> storageOptions) {
            this.location = location;
            this.tableUri = tableUri;
            this.storageOptions =
                    storageOptions == null ? null : Collections.unmodifiableMap(storageOptions);
        }

        /** {@code location}: where the table's data lives, or {@code null}. */
        public String location() {
            return location;
        }

        /** {@code table_uri}: the table's complete URI when the server returned one. */
        public String tableUri() {
            return tableUri;
        }

        /** The URI to open the table at: {@code table_uri} if present, else {@code location}. */
        public String uri() {
            if (tableUri != null && !tableUri.isEmpty()) {
                return tableUri;
            }
            return location == null || location.isEmpty() ? null : location;
        }

        /** The vended {@code storage_options} (unmodifiable), or {@code null} when absent. */
        public Map<String, String> storageOptions() {
            return storageOptions;
        }

        /** Prints the options with secret values redacted. */
        @Override
        public String toString() {
            return "TableDescription{location="
                    + location
                    + ", tableUri="
                    + tableUri
                    + ", storageOptions="
                    + Redaction.redact(storageOptions)
                    + "}";
        }
    }

    /** Builds a {@link LanceNamespaceStorageOptionsProvider}; not thread-safe. */
    public static final class Builder {
        private final String endpoint;
        private final List<String> tableId;
        private String delimiter = DEFAULT_DELIMITER;
        private final LinkedHashMap<String, String> headers = new LinkedHashMap<>();
        private Duration timeout = DEFAULT_TIMEOUT;

        private Builder(String endpoint, List<String> tableId) {
            this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
            this.tableId = new ArrayList<>(Objects.requireNonNull(tableId, "tableId"));
        }

        /**
         * The delimiter joining the table id's parts in the path (default {@code $}).
         *
         * @param delimiter a non-empty string
         * @return this builder
         */
        public Builder delimiter(String delimiter) {
            this.delimiter = delimiter;
            return this;
        }

        /**
         * A header sent with every request (e.g. {@code x-api-key}); its value is a secret that
         * never appears in ids, messages or {@code toString}. Setting a name again replaces it.
         *
         * @param name the header name
         * @param value the header value
         * @return this builder
         */
        public Builder header(String name, String value) {
            headers.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Sends {@code Authorization: Bearer {token}}.
         *
         * @param token the token
         * @return this builder
         */
        public Builder bearerToken(String token) {
            return header("Authorization", "Bearer " + Objects.requireNonNull(token, "token"));
        }

        /**
         * The timeout of one describe call, connection included (default 10 s).
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Builds the provider; sends no request.
         *
         * @return the provider
         * @throws IllegalArgumentException when the endpoint is not an http(s) URL, the table id
         *     is empty or has an empty part or a part containing the delimiter, the delimiter is
         *     empty, a header cannot be sent (named, value never quoted) or the timeout is not
         *     positive
         */
        public LanceNamespaceStorageOptionsProvider build() {
            return new LanceNamespaceStorageOptionsProvider(
                    endpoint, tableId, delimiter, headers, timeout.toMillis());
        }

        @Override
        public String toString() {
            return "LanceNamespaceStorageOptionsProvider.Builder{endpoint="
                    + Redaction.redactUri(endpoint)
                    + ", tableId="
                    + tableId
                    + ", headers="
                    + headers.keySet()
                    + "}";
        }
    }
}
