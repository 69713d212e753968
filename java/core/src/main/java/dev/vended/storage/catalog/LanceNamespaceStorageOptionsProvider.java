package dev.vended.storage.catalog;

import dev.vended.storage.AccessMode;
import dev.vended.storage.CatalogSpecProvider;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.Redaction;
import dev.vended.storage.StorageException;

import java.io.IOException;
import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
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
 * The spec of a table served by a Lance Namespace REST catalog, whose {@code DescribeTable}
 * operation vends the table's storage options. The protocol is implemented once, natively (Rust,
 * {@code crates/core/src/catalog/lance.rs}); this class only holds the endpoint, the table id, the
 * headers and the timeout.
 *
 * <p>Protocol (the Lance Namespace REST specification, {@code lance-namespace} 0.13; reference
 * server: PyPI {@code pylance} 14.0.2, {@code lance.namespace.RestAdapter}):
 *
 * <pre>
 * POST {endpoint}/v1/table/{id}/describe        id = the table id's parts joined by "$"
 * {"id": ["db", "orders"], "vend_credentials": true, "with_table_uri": true}
 *
 * 200 {"location": "s3://bucket/db/orders.lance", "table_uri": "...",
 *      "storage_options": {"aws_access_key_id": "...", ..., "expires_at_millis": "1767225600000"}}
 * 404 {"error": "table id 'db$orders'", "code": 4}     (ErrorResponse; 4 = TableNotFound)
 * </pre>
 *
 * <pre>{@code
 * LanceNamespaceStorageOptionsProvider table =
 *         LanceNamespaceStorageOptionsProvider.builder("https://lance.example", "db", "orders")
 *                 .bearerToken(token)
 *                 .build();
 * try (ObjectStore store = table.openTable(Map.of("aws_region", "us-east-1"))) {
 *     byte[] manifest = store.get("_versions/1.manifest");
 * }
 * }</pre>
 *
 * <h2>Refreshes run natively</h2>
 *
 * A store opened with this spec, by {@link #openTable(Map, Duration)} or by passing it to {@link
 * ObjectStore#open(String, Map, dev.vended.storage.StorageOptionsProvider)}, gets the native
 * provider this spec describes: its credential refreshes call the catalog from native code and
 * never call back into the JVM ({@link #fetchStorageOptions()} of this object is not used by it).
 * Catalogs usually vend only credentials; the endpoint, region and allow-http a store needs are the
 * caller's own options, which a refresh keeps.
 *
 * <h2>Identity, serialization, secrets</h2>
 *
 * {@link #providerId()} is {@code lance-namespace:{endpoint}:{id joined by the
 * delimiter}:auth={fingerprint}}, the fingerprint being a keyed hash (random key per process) of
 * the headers, or {@code none} without headers: deserialized copies in one JVM (every Spark task of
 * a job) share one native store and one credential cache, and two tenants with different tokens for
 * the same table never do.
 *
 * <p>The spec is {@link java.io.Serializable} and its serialized form <b>contains the header values
 * (bearer token, API keys) in clear</b>, so that a copy shipped to another JVM (a Spark executor)
 * can still call the catalog. Serializing it is the caller's choice: treat the bytes as a secret
 * (encrypted transport, no persistent storage). {@link #toString()}, {@link #providerId()} and
 * every exception message never contain a header value.
 *
 * <p>Failures are {@link CatalogException}s carrying the HTTP status and the catalog's {@code
 * error} and {@code code}; a call is never retried by itself (see {@link CatalogException}).
 * Instances are immutable and thread-safe.
 */
public final class LanceNamespaceStorageOptionsProvider extends CatalogSpecProvider {

    private static final long serialVersionUID = 1L;

    /** The default delimiter joining the table id's parts in the path: {@code $}. */
    public static final String DEFAULT_DELIMITER = "$";

    /** The default timeout of one describe call, connection included: 10 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final String KIND = "lance-namespace";

    /** @serial The namespace endpoint as given. */
    private final String endpoint;
    /** @serial The table id's parts. */
    private final ArrayList<String> tableId;
    /** @serial The delimiter of the parts. */
    private final String delimiter;
    /** @serial Headers (name, value); the values are secrets. */
    private final LinkedHashMap<String, String> headers;
    /** @serial The timeout of one call, milliseconds. */
    private final long timeoutMillis;

    private final transient AtomicLong calls = new AtomicLong();

    private LanceNamespaceStorageOptionsProvider(
            String endpoint,
            List<String> tableId,
            String delimiter,
            Map<String, String> headers,
            long timeoutMillis) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.tableId = new ArrayList<>(Objects.requireNonNull(tableId, "tableId"));
        if (delimiter == null || delimiter.isEmpty()) {
            throw new IllegalArgumentException("the table id delimiter must not be empty");
        }
        this.delimiter = delimiter;
        for (String part : this.tableId) {
            Objects.requireNonNull(part, "a table id part");
            // The flat spec joins the parts with the delimiter: a part holding it would be split.
            if (part.contains(delimiter)) {
                throw new IllegalArgumentException(
                        "the table id part '" + part + "' contains the delimiter '" + delimiter + "'");
            }
        }
        this.headers = new LinkedHashMap<>(headers);
        this.timeoutMillis = timeoutMillis;
        validate();
    }

    /**
     * Starts building the spec of table {@code tableId} (its parts, outermost namespace first) of
     * the namespace server at {@code endpoint} (e.g. {@code http://127.0.0.1:2333}; a base path is
     * kept).
     *
     * @param endpoint the namespace REST endpoint
     * @param tableId the table id's parts, e.g. {@code "db", "orders"}
     * @return a builder
     */
    public static Builder builder(String endpoint, String... tableId) {
        return new Builder(endpoint, Arrays.asList(tableId));
    }

    /**
     * Starts building the spec of a table.
     *
     * @param endpoint the namespace REST endpoint
     * @param tableId the table id's parts, outermost namespace first
     * @return a builder
     */
    public static Builder builder(String endpoint, List<String> tableId) {
        return new Builder(endpoint, tableId);
    }

    @Override
    protected String catalogKind() {
        return KIND;
    }

    @Override
    protected Map<String, String> catalogSpec() {
        Map<String, String> spec = new LinkedHashMap<>();
        spec.put("endpoint", endpoint);
        spec.put("table_id", String.join(delimiter, tableId));
        spec.put("delimiter", delimiter);
        spec.put("timeout_millis", Long.toString(timeoutMillis));
        headers.forEach((name, value) -> spec.put("header." + name, value));
        return spec;
    }

    /**
     * Calls {@code DescribeTable} once. The call is shared with the concurrent describes and
     * {@link #openTable opens} of the same table (endpoint, table id and headers) in this process,
     * and after a failed one that failure is remembered natively for a backoff (the credential
     * refresher's schedule: 1 s doubling to 30 s; 30 s at once when {@link
     * CatalogException#isRetryable() not retryable}): until then this method throws it again at
     * once, without calling the catalog, its message saying when the next attempt is.
     *
     * @return the table's location, URI and vended storage options
     * @throws CatalogException for a non-2xx answer (404 when the table does not exist), a
     *     timeout, a connection failure, or an answer that is not a JSON object with string-valued
     *     {@code storage_options}; during the backoff after such a failure, that failure (same
     *     kind, status and code)
     * @throws StorageException if the native library fails otherwise
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public TableDescription describeTable()
            throws CatalogException, StorageException, InterruptedException {
        calls.incrementAndGet();
        String[] answer = describeTableNative();
        Map<String, String> options = answer[2] == null ? null : pairsToMap(answer, 3);
        return new TableDescription(answer[0], answer[1], options);
    }

    /**
     * Calls {@code DescribeTable} once and returns its {@code storage_options}.
     *
     * @return the vended options, including {@code expires_at_millis} when they expire
     * @throws CatalogException as {@link #describeTable()}, and of kind {@link
     *     CatalogException.Kind#MISSING_FIELD} when the answer has no {@code storage_options}
     * @throws StorageException if the native library fails otherwise
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    @Override
    public Map<String, String> fetchStorageOptions()
            throws CatalogException, StorageException, InterruptedException {
        calls.incrementAndGet();
        return super.fetchStorageOptions();
    }

    /**
     * Opens the table's store by name with one describe call, refreshing credentials with the
     * default lead time. See {@link #openTable(Map, Duration)}.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, encryption
     *     keys, ...), may be {@code null}
     * @return the open store; close it
     * @throws CatalogException when describe fails (or failed recently, see {@link
     *     #describeTable()}) or its answer has no location or no {@code storage_options}
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public ObjectStore openTable(Map<String, String> clientOptions)
            throws IOException, InterruptedException {
        return openTable(clientOptions, null);
    }

    /**
     * Opens the table's store by name with one describe call (the answer seeds the credentials, so
     * opening costs no second call): the store's URI is the answer's {@code table_uri} (else {@code
     * location}); its initial options are {@code clientOptions} overlaid by the vended {@code
     * storage_options}: vended credentials replace any credentials in {@code clientOptions} as a
     * set, every other option of the caller is kept unless the catalog vends it, and the caller's
     * {@code aws_sse_customer_key_base64} and {@code aws_sse_kms_key_id} are always kept. The
     * native provider this spec describes refreshes the credentials before they expire, without
     * calling into the JVM. The describe is shared and a failed one remembered as {@link
     * #describeTable()}'s.
     *
     * @param clientOptions the caller's own options (endpoint, region, allow-http, encryption
     *     keys, ...), may be {@code null}
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @return the open store; close it
     * @throws CatalogException when describe fails (or failed recently, see {@link
     *     #describeTable()}) or its answer has no location or no {@code storage_options}
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public ObjectStore openTable(Map<String, String> clientOptions, Duration leadTime)
            throws IOException, InterruptedException {
        calls.incrementAndGet();
        return openTableNative(clientOptions, leadTime);
    }

    /**
     * Opens the table's store by name as {@link #openTable(Map, Duration)} does, for reading or
     * for reading and writing: {@code accessMode} becomes the store's {@code access_mode} option.
     * A {@link AccessMode#READ} store refuses writes itself and is a store of its own, with its
     * own credentials; Lance Namespace's {@code DescribeTable} has no read/write parameter, so the
     * catalog vends what the caller may do either way.
     *
     * @param clientOptions the caller's own options, may be {@code null}
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @param accessMode the mode, or {@code null} for the options' / the default ({@link
     *     AccessMode#READ_WRITE})
     * @return the open store; close it
     * @throws CatalogException as {@link #openTable(Map, Duration)}
     * @throws StorageException when the store cannot be opened
     * @throws InterruptedException if the calling thread is interrupted before the call
     */
    public ObjectStore openTable(
            Map<String, String> clientOptions, Duration leadTime, AccessMode accessMode)
            throws IOException, InterruptedException {
        Map<String, String> options =
                clientOptions == null ? new LinkedHashMap<>() : new LinkedHashMap<>(clientOptions);
        if (accessMode != null) {
            options.put(AccessMode.OPTION, accessMode.optionValue());
        }
        return openTable(options, leadTime);
    }

    /**
     * How many describe calls were made through this object from Java ({@link #describeTable()},
     * {@link #fetchStorageOptions()}, {@link #openTable}), successful or not. The refreshes of a
     * store opened with this spec run natively and are not counted here: see {@link
     * ObjectStore#refreshStats()}. A deserialized copy starts at 0.
     *
     * @return the count
     */
    public long describeCalls() {
        return calls.get();
    }

    /**
     * The table id's parts.
     *
     * @return an unmodifiable list
     */
    public List<String> tableId() {
        return Collections.unmodifiableList(tableId);
    }

    /**
     * The endpoint, with any user info and query redacted.
     *
     * @return a printable form of the endpoint
     */
    public String endpoint() {
        return Redaction.redactUri(endpoint);
    }

    /** Prints the endpoint, the table id and the header names (never their values). */
    @Override
    public String toString() {
        return "LanceNamespaceStorageOptionsProvider{endpoint="
                + Redaction.redactUri(endpoint)
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

    /**
     * Checks the deserialized spec as the builder does, with a fresh call counter.
     *
     * @return the checked spec
     * @throws ObjectStreamException (an {@link InvalidObjectException}) when it is not valid
     */
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

        /**
         * {@code location}: where the table's data lives.
         *
         * @return the location, or {@code null}
         */
        public String location() {
            return location;
        }

        /**
         * {@code table_uri}: the table's complete URI when the server returned one.
         *
         * @return the URI, or {@code null}
         */
        public String tableUri() {
            return tableUri;
        }

        /**
         * The URI to open the table at: {@code table_uri} if present, else {@code location}.
         *
         * @return the URI, or {@code null} when the answer had neither
         */
        public String uri() {
            if (tableUri != null && !tableUri.isEmpty()) {
                return tableUri;
            }
            return location == null || location.isEmpty() ? null : location;
        }

        /**
         * The vended {@code storage_options}.
         *
         * @return an unmodifiable map, or {@code null} when the answer had none
         */
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
         * never appears in ids, messages or {@code toString}. Setting a name again (in any case)
         * replaces it.
         *
         * @param name the header name
         * @param value the header value
         * @return this builder
         */
        public Builder header(String name, String value) {
            putHeader(headers, name, value);
            return this;
        }

        /**
         * Sends {@code Authorization: Bearer {token}} (replaces any {@code Authorization} header).
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
         * @param timeout a positive duration of at least 1 ms
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
         * @throws IllegalArgumentException when the endpoint is not an http(s) URL, the table id
         *     is empty or has an empty part or a part containing the delimiter, the delimiter is
         *     empty, a header cannot be sent (named, value never quoted) or the timeout is not at
         *     least 1 ms
         */
        public LanceNamespaceStorageOptionsProvider build() {
            return new LanceNamespaceStorageOptionsProvider(
                    endpoint, tableId, delimiter, headers, timeoutMillis(timeout));
        }

        /** Prints the endpoint (redacted), the table id and the header names. */
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

    /** Puts a header, replacing one of the same name in any case. */
    static void putHeader(Map<String, String> headers, String name, String value) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        headers.keySet().removeIf(n -> n.equalsIgnoreCase(name));
        headers.put(name, value);
    }

    /** The timeout in whole milliseconds; the native side refuses values below 1 ms. */
    static long timeoutMillis(Duration timeout) {
        try {
            return timeout.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
