package dev.vended.storage.catalog;

import dev.vended.storage.CatalogSpecProvider;
import dev.vended.storage.Redaction;
import dev.vended.storage.StorageException;

import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The spec of a table served by an Iceberg REST catalog, whose {@code loadCredentials} operation
 * vends the table's storage credentials. The protocol is implemented once, natively (Rust, {@code
 * crates/core/src/catalog/iceberg/}); this class only holds the catalog URI, prefix, namespace,
 * table, location, headers and timeout, and what the catalog returned with the table.
 *
 * <p>Protocol (the Apache Iceberg REST catalog OpenAPI specification, {@code
 * open-api/rest-catalog-open-api.yaml}):
 *
 * <pre>
 * GET {uri}/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials
 * Authorization: Bearer {token}
 *
 * 200 LoadCredentialsResponse
 *     {"storage-credentials": [{"prefix": "s3://bucket/wh/db/orders", "config": {
 *         "s3.access-key-id": "...", "s3.secret-access-key": "...", "s3.session-token": "...",
 *         "s3.session-token-expires-at-ms": "1767225600000"}}, ...]}
 * 404 IcebergErrorResponse
 *     {"error": {"message": "Table does not exist: db.orders", "type": "NoSuchTableException", "code": 404}}
 * </pre>
 *
 * <p>{@code {prefix}} is the catalog's optional path prefix (left out when unset); a multi-level
 * namespace joins its parts with the unit separator {@code 0x1F} (sent as {@code %1F}) unless set
 * otherwise. The credential used is the one whose {@code prefix} is the longest prefix of the table
 * location ({@code s3a://} and {@code s3n://} count as {@code s3://}); its {@code config} is mapped
 * to this library's storage options ({@code s3.access-key-id} to {@code aws_access_key_id}, {@code
 * s3.session-token-expires-at-ms} to {@code expires_at_millis}, {@code gcs.oauth2.token} to {@code
 * google_bearer_token}, {@code adls.sas-token.{account}} to {@code azure_storage_sas_token} and
 * {@code azure_storage_account_name}, ...; the native documentation has the full table). Other keys
 * ({@code s3.endpoint}, {@code client.region}, ...) are not mapped: the store's endpoint and region
 * are the caller's own options, which a refresh keeps.
 *
 * <pre>{@code
 * IcebergRestStorageOptionsProvider table =
 *         IcebergRestStorageOptionsProvider.builder(
 *                         "https://catalog.example/api/catalog", List.of("db"), "orders",
 *                         "s3://warehouse/db/orders")
 *                 .prefix("prod")
 *                 .bearerToken(oauthToken)
 *                 .build();
 * Map<String, String> initial = new HashMap<>(Map.of("aws_region", "eu-west-1"));
 * initial.putAll(table.fetchStorageOptions());
 * try (ObjectStore store = ObjectStore.open("s3://warehouse/db/orders", initial, table)) { ... }
 * }</pre>
 *
 * <p><b>Starting from {@code loadTable}.</b> What the catalog returned with the table may be given
 * too: the {@code config} map and the {@code storage-credentials} of the {@code LoadTableResult}
 * of {@code loadTable} or of a stage-create ({@link Builder#loadTableConfig(Map)}, {@link
 * Builder#storageCredential(String, Map)}), the {@code plan-id} of the scan plan that vended the
 * credentials ({@link Builder#planId(String)}), and whether the table is stage-created and not
 * committed yet ({@link Builder#staged(boolean)}). Then:
 *
 * <ul>
 *   <li>the first answer is the most specific storage credential covering the location (none
 *       covering it fails at build), or, without storage credentials, the credential keys of
 *       {@code config}; no catalog call is made for it, and it is skipped (the catalog called
 *       instead) when a store would refuse it: expired, or expiring within the store's minimum
 *       remaining lifetime (default 500 ms), as a cached {@code loadTable} answer may be;
 *   <li>refreshes call the endpoint {@code config} names for the location's cloud: {@code
 *       client.refresh-credentials-endpoint} (S3), {@code adls.refresh-credentials-endpoint}
 *       (ADLS), {@code gcs.oauth2.refresh-credentials-endpoint} (GCS), an absolute URL or a path
 *       under the catalog URI and its path ({@code v1/...} and {@code /v1/...} both mean {@code
 *       {uri}/v1/...}); else {@code loadCredentials};
 *   <li>with a plan id every refresh sends {@code ?planId={id}};
 *   <li>for a staged table a {@code 404} names the staged table and is retried at the fast pace,
 *       so the stage-create credentials serve until they expire and the refresh succeeds once
 *       the create commits;
 *   <li>a malformed expiry ({@code s3.session-token-expires-at-ms}, {@code
 *       gcs.oauth2.token-expires-at}, {@code adls.sas-token-expires-at-ms.{account}}) fails with
 *       a message that names the key, never the value.
 * </ul>
 *
 * <p>{@link #fetchStorageOptions()} runs a fresh native provider each time, so with a first
 * answer it returns that answer (no call) until it expires; a store opened with the spec returns
 * it once and refreshes through the catalog afterwards.
 *
 * <p>A store opened with this spec as its provider gets the native provider the spec describes:
 * its refreshes call the catalog from native code, never back into the JVM.
 *
 * <p>{@link #providerId()} is {@code
 * iceberg-rest:{uri}:{prefix}:{namespace}.{table}:{location}:auth={fingerprint}}, the fingerprint
 * being a keyed hash (random key per process) of the headers, token included, followed by {@code
 * :plan={id}} with a plan id and {@code :staged} for a staged table.
 *
 * <p>The spec is {@link java.io.Serializable} and its serialized form <b>contains the header values
 * (the token) in clear</b>, so that a copy shipped to another JVM (a Spark executor) can still call
 * the catalog, and the vended credentials given to the builder. Serializing it is the caller's
 * choice: treat the bytes as a secret. {@link #toString()}, the id and every exception message
 * never contain a header value, a config value or a credential. Failures are
 * {@link CatalogException}s; a call is never retried by itself. Instances are immutable and
 * thread-safe.
 */
public final class IcebergRestStorageOptionsProvider extends CatalogSpecProvider {

    private static final long serialVersionUID = 1L;

    /** The default separator of namespace parts in the path: the unit separator {@code 0x1F}. */
    public static final String DEFAULT_NAMESPACE_SEPARATOR = "\u001f";

    /** The default timeout of one call, connection included: 10 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final String KIND = "iceberg-rest";

    /** @serial The catalog base URL as given. */
    private final String uri;
    /** @serial The catalog path prefix, empty for none. */
    private final String prefix;
    /** @serial The namespace's parts. */
    private final ArrayList<String> namespace;
    /** @serial The table name. */
    private final String table;
    /** @serial The table location. */
    private final String location;
    /** @serial The separator of namespace parts. */
    private final String separator;
    /** @serial Headers (name, value); the values are secrets. */
    private final LinkedHashMap<String, String> headers;
    /** @serial The timeout of one call, milliseconds. */
    private final long timeoutMillis;
    /** @serial The loadTable {@code config} map; values may be secrets. May be null (old form). */
    private final LinkedHashMap<String, String> loadTableConfig;
    /** @serial The storage credentials' prefixes. May be null (old form). */
    private final ArrayList<String> credentialPrefixes;
    /** @serial The storage credentials' configs (secrets), by index. May be null (old form). */
    private final ArrayList<LinkedHashMap<String, String>> credentialConfigs;
    /** @serial The scan plan id, empty for none. May be null (old form). */
    private final String planId;
    /** @serial Whether the table is stage-created and not committed yet. */
    private final boolean staged;

    private final transient AtomicLong calls = new AtomicLong();

    private IcebergRestStorageOptionsProvider(
            String uri,
            String prefix,
            List<String> namespace,
            String table,
            String location,
            String separator,
            Map<String, String> headers,
            long timeoutMillis,
            Map<String, String> loadTableConfig,
            List<String> credentialPrefixes,
            List<? extends Map<String, String>> credentialConfigs,
            String planId,
            boolean staged) {
        this.uri = Objects.requireNonNull(uri, "uri");
        this.prefix = prefix == null ? "" : prefix;
        this.namespace = new ArrayList<>(Objects.requireNonNull(namespace, "namespace"));
        this.table = Objects.requireNonNull(table, "table");
        this.location = Objects.requireNonNull(location, "location");
        if (separator == null || separator.isEmpty()) {
            throw new IllegalArgumentException("the namespace separator must not be empty");
        }
        this.separator = separator;
        for (String part : this.namespace) {
            Objects.requireNonNull(part, "a namespace part");
            // The flat spec joins the parts with the separator: a part holding it would be split.
            if (part.contains(separator)) {
                throw new IllegalArgumentException(
                        "the namespace part '" + part + "' contains the namespace separator");
            }
        }
        this.headers = new LinkedHashMap<>(headers);
        this.timeoutMillis = timeoutMillis;
        this.loadTableConfig =
                loadTableConfig == null ? new LinkedHashMap<>() : new LinkedHashMap<>(loadTableConfig);
        this.credentialPrefixes =
                credentialPrefixes == null ? new ArrayList<>() : new ArrayList<>(credentialPrefixes);
        this.credentialConfigs = new ArrayList<>();
        if (credentialConfigs != null) {
            for (Map<String, String> c : credentialConfigs) {
                this.credentialConfigs.add(new LinkedHashMap<>(Objects.requireNonNull(c, "config")));
            }
        }
        if (this.credentialPrefixes.size() != this.credentialConfigs.size()) {
            throw new IllegalArgumentException("each storage credential needs a prefix and a config");
        }
        this.planId = planId == null ? "" : planId;
        this.staged = staged;
        validate();
    }

    /**
     * Starts building the spec of table {@code table} in {@code namespace} of the catalog at {@code
     * uri} (its base URL, without {@code /v1}), whose data lives at {@code location} (the table
     * metadata's {@code location}).
     *
     * @param uri the catalog base URL
     * @param namespace the namespace's parts, outermost first
     * @param table the table name
     * @param location the table location, e.g. {@code s3://bucket/wh/db/orders}
     * @return a builder
     */
    public static Builder builder(
            String uri, List<String> namespace, String table, String location) {
        return new Builder(uri, namespace, table, location);
    }

    /**
     * Starts building the spec of data at {@code location} without naming its table, as an
     * Iceberg {@code FileIO} has it (Iceberg never tells a {@code FileIO} the table): the refresh
     * endpoint of the {@link Builder#loadTableConfig(Map) loadTable config} for the location's
     * cloud is the whole address of refreshes (absolute, or a path resolved against {@code uri});
     * the first answer is the covering {@link Builder#storageCredential(String, Map) storage
     * credential} or the config's own credential keys. Without a refresh endpoint the first
     * answer is served (static until it expires or is rejected) and a later fetch fails naming the
     * missing endpoint key. Messages and {@link #providerId()} name the location and the endpoint
     * ({@code iceberg-rest:{uri}:{prefix}:endpoint={endpoint}:{location}:auth={fingerprint}}).
     * {@link Builder#prefix(String)} and {@link Builder#namespaceSeparator(String)} are not used.
     *
     * @param uri the catalog base URL; may be empty when the endpoint is absolute or there is none
     * @param location the data location, e.g. {@code s3://bucket/wh/db/orders}
     * @return a builder
     */
    public static Builder builderForLocation(String uri, String location) {
        return new Builder(uri, List.of(), "", location);
    }

    @Override
    protected String catalogKind() {
        return KIND;
    }

    @Override
    protected Map<String, String> catalogSpec() {
        Map<String, String> spec = new LinkedHashMap<>();
        spec.put("uri", uri);
        if (!prefix.isEmpty()) {
            spec.put("prefix", prefix);
        }
        // Neither namespace nor table (builderForLocation): the refresh endpoint is the address.
        if (!namespace.isEmpty() || !table.isEmpty()) {
            spec.put("namespace", String.join(separator, namespace));
            spec.put("table", table);
        }
        spec.put("namespace_separator", separator);
        spec.put("location", location);
        spec.put("timeout_millis", Long.toString(timeoutMillis));
        headers.forEach((name, value) -> spec.put("header." + name, value));
        loadTableConfig.forEach((key, value) -> spec.put("config." + key, value));
        for (int i = 0; i < credentialPrefixes.size(); i++) {
            String entry = "storage_credential." + i + ".";
            spec.put(entry + "prefix", credentialPrefixes.get(i));
            credentialConfigs.get(i).forEach((key, value) -> spec.put(entry + "config." + key, value));
        }
        if (!planId.isEmpty()) {
            spec.put("plan_id", planId);
        }
        if (staged) {
            spec.put("staged", "true");
        }
        return spec;
    }

    /**
     * Calls {@code loadCredentials} once and returns the mapped options of the credential whose
     * prefix best matches the table location.
     *
     * @return the storage options (credentials, and {@code expires_at_millis} when the catalog
     *     sent an expiry)
     * @throws CatalogException for non-2xx answers (status, {@code error.message}, {@code
     *     error.type}), timeouts, connection failures, an answer that is not a {@code
     *     LoadCredentialsResponse}, no {@code storage-credentials}, or no credential whose prefix
     *     matches the location (the message lists the prefixes)
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
     * How many times {@link #fetchStorageOptions()} was called on this object from Java,
     * successful or not: each is one {@code loadCredentials} (or refresh endpoint) call, except
     * those answered by the first answer given to the builder. The refreshes of a store opened with this spec
     * run natively and are not counted here: see {@link
     * dev.vended.storage.ObjectStore#refreshStats()}. A deserialized copy starts at 0.
     *
     * @return the count
     */
    public long calls() {
        return calls.get();
    }

    /**
     * The table location credentials are chosen for.
     *
     * @return the location as given
     */
    public String location() {
        return location;
    }

    /** Prints the URI (redacted), prefix, table, location and header names (never values). */
    @Override
    public String toString() {
        return "IcebergRestStorageOptionsProvider{uri="
                + Redaction.redactUri(uri)
                + ", prefix="
                + prefix
                + ", namespace="
                + namespace
                + ", table="
                + table
                + ", location="
                + location
                + ", headers="
                + headers.keySet()
                + ", timeoutMillis="
                + timeoutMillis
                + ", loadTableConfig="
                + loadTableConfig.keySet()
                + ", storageCredentials="
                + credentialPrefixes
                + ", planId="
                + planId
                + ", staged="
                + staged
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
            return new IcebergRestStorageOptionsProvider(
                    uri,
                    prefix,
                    namespace,
                    table,
                    location,
                    separator,
                    headers,
                    timeoutMillis,
                    loadTableConfig,
                    credentialPrefixes,
                    credentialConfigs,
                    planId,
                    staged);
        } catch (RuntimeException e) {
            InvalidObjectException ex = new InvalidObjectException(e.getMessage());
            ex.initCause(e);
            throw ex;
        }
    }

    /** Builds an {@link IcebergRestStorageOptionsProvider}; not thread-safe. */
    public static final class Builder {
        private final String uri;
        private final List<String> namespace;
        private final String table;
        private final String location;
        private String prefix = "";
        private String separator = DEFAULT_NAMESPACE_SEPARATOR;
        private final LinkedHashMap<String, String> headers = new LinkedHashMap<>();
        private Duration timeout = DEFAULT_TIMEOUT;
        private final LinkedHashMap<String, String> loadTableConfig = new LinkedHashMap<>();
        private final ArrayList<String> credentialPrefixes = new ArrayList<>();
        private final ArrayList<LinkedHashMap<String, String>> credentialConfigs = new ArrayList<>();
        private String planId = "";
        private boolean staged;

        private Builder(String uri, List<String> namespace, String table, String location) {
            this.uri = Objects.requireNonNull(uri, "uri");
            this.namespace = new ArrayList<>(Objects.requireNonNull(namespace, "namespace"));
            this.table = Objects.requireNonNull(table, "table");
            this.location = Objects.requireNonNull(location, "location");
        }

        /**
         * The catalog's path prefix (the {@code prefix} of its {@code /v1/config} answer).
         *
         * @param prefix e.g. {@code "warehouse1"}; empty or {@code null} for none
         * @return this builder
         */
        public Builder prefix(String prefix) {
            this.prefix = prefix == null ? "" : prefix;
            return this;
        }

        /**
         * Sends {@code Authorization: Bearer {token}} (replaces any {@code Authorization} header).
         *
         * @param token the OAuth2 token
         * @return this builder
         */
        public Builder bearerToken(String token) {
            return header("Authorization", "Bearer " + Objects.requireNonNull(token, "token"));
        }

        /**
         * The same as {@link #bearerToken(String)}.
         *
         * @param token the OAuth2 token
         * @return this builder
         */
        public Builder token(String token) {
            return bearerToken(token);
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
         * The separator of namespace parts in the path, as the catalog advertises in {@code
         * namespace-separator} (decoded); default {@code 0x1F}.
         *
         * @param separator a non-empty string
         * @return this builder
         */
        public Builder namespaceSeparator(String separator) {
            this.separator = separator;
            return this;
        }

        /**
         * The timeout of one call, connection included (default 10 s).
         *
         * @param timeout a positive duration of at least 1 ms
         * @return this builder
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * The {@code config} map of the table's {@code LoadTableResult} ({@code loadTable} or a
         * stage-create): its refresh endpoint for the location's cloud is where refreshes go, and
         * its credential keys are the first answer when no storage credential is given. Replaces
         * an earlier config. Its values are treated as secrets.
         *
         * @param config the map as returned (copied)
         * @return this builder
         */
        public Builder loadTableConfig(Map<String, String> config) {
            loadTableConfig.clear();
            Objects.requireNonNull(config, "config")
                    .forEach(
                            (key, value) ->
                                    loadTableConfig.put(
                                            Objects.requireNonNull(key, "a config key"),
                                            Objects.requireNonNull(value, "config value of " + key)));
            return this;
        }

        /**
         * Adds one entry of the {@code storage-credentials} of the table's {@code
         * LoadTableResult} (or of a scan plan): the most specific prefix covering the location is
         * the first answer. Its config values are treated as secrets.
         *
         * @param prefix the entry's {@code prefix}, e.g. {@code s3://bucket/wh/db/orders}
         * @param config the entry's {@code config} (copied)
         * @return this builder
         */
        public Builder storageCredential(String prefix, Map<String, String> config) {
            LinkedHashMap<String, String> copy = new LinkedHashMap<>();
            Objects.requireNonNull(config, "config")
                    .forEach(
                            (key, value) ->
                                    copy.put(
                                            Objects.requireNonNull(key, "a config key"),
                                            Objects.requireNonNull(value, "config value of " + key)));
            credentialPrefixes.add(Objects.requireNonNull(prefix, "prefix"));
            credentialConfigs.add(copy);
            return this;
        }

        /**
         * The scan plan ({@code planTableScan}'s {@code plan-id}) that vended the credentials:
         * refreshes send {@code ?planId={id}}.
         *
         * @param planId the plan id; empty or {@code null} for none
         * @return this builder
         */
        public Builder planId(String planId) {
            this.planId = planId == null ? "" : planId;
            return this;
        }

        /**
         * Whether the table is stage-created (a create transaction not committed yet): a {@code
         * 404} on refresh then names the staged table and is retried at the fast pace.
         *
         * @param staged {@code true} for a staged table
         * @return this builder
         */
        public Builder staged(boolean staged) {
            this.staged = staged;
            return this;
        }

        /**
         * Builds the spec and checks it natively; sends no request.
         *
         * @return the spec
         * @throws IllegalArgumentException when the URI is not an http(s) URL, the namespace is
         *     empty or has an empty part or a part containing the separator, the table or location
         *     is empty, the separator is empty, a header cannot be sent (named, value never
         *     quoted), the timeout is not at least 1 ms, the refresh endpoint of the location's
         *     cloud is not an http(s) URL or a path, no storage credential covers the location, or
         *     the first answer's expiry is not epoch milliseconds (the key named, never a value)
         */
        public IcebergRestStorageOptionsProvider build() {
            return new IcebergRestStorageOptionsProvider(
                    uri,
                    prefix,
                    namespace,
                    table,
                    location,
                    separator,
                    headers,
                    LanceNamespaceStorageOptionsProvider.timeoutMillis(timeout),
                    loadTableConfig,
                    credentialPrefixes,
                    credentialConfigs,
                    planId,
                    staged);
        }

        /** Prints the URI (redacted), table and header names. */
        @Override
        public String toString() {
            return "IcebergRestStorageOptionsProvider.Builder{uri="
                    + Redaction.redactUri(uri)
                    + ", namespace="
                    + namespace
                    + ", table="
                    + table
                    + ", headers="
                    + headers.keySet()
                    + "}";
        }
    }
}
