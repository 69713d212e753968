package dev.vended.storage.catalog;

import dev.vended.storage.StorageOptionsProvider;

import java.io.InvalidObjectException;
import java.io.ObjectStreamException;
import java.io.Serializable;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Vends a table's storage options through the Iceberg REST catalog's {@code loadCredentials}
 * operation.
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
 * otherwise. The credential used is the one whose {@code prefix} is the longest string prefix of
 * the table location (as Iceberg's own clients choose; {@code s3a://} and {@code s3n://} count as
 * {@code s3://}). Its {@code config} is mapped to this library's storage options:
 *
 * <table>
 *   <caption>Key mapping</caption>
 *   <tr><th>Iceberg key</th><th>storage option</th></tr>
 *   <tr><td>{@code s3.access-key-id}</td><td>{@code aws_access_key_id}</td></tr>
 *   <tr><td>{@code s3.secret-access-key}</td><td>{@code aws_secret_access_key}</td></tr>
 *   <tr><td>{@code s3.session-token}</td><td>{@code aws_session_token}</td></tr>
 *   <tr><td>{@code s3.session-token-expires-at-ms}</td><td>{@code expires_at_millis}</td></tr>
 *   <tr><td>{@code gcs.oauth2.token}</td><td>{@code google_bearer_token}</td></tr>
 *   <tr><td>{@code gcs.oauth2.token-expires-at} (epoch ms)</td><td>{@code expires_at_millis}</td></tr>
 *   <tr><td>{@code adls.sas-token.{account}}</td><td>{@code azure_storage_sas_token}, and {@code
 *       azure_storage_account_name} = the first label of {@code {account}}</td></tr>
 *   <tr><td>{@code adls.sas-token-expires-at-ms.{account}}</td><td>{@code expires_at_millis}</td></tr>
 * </table>
 *
 * <p>Other keys ({@code s3.endpoint}, {@code client.region}, ...) are not mapped: the store's
 * endpoint and region are the caller's own options, which a refresh keeps. A credential without an
 * expiry is returned without {@code expires_at_millis}: the store uses it until the storage
 * endpoint rejects it, then fetches again.
 *
 * <pre>{@code
 * IcebergRestStorageOptionsProvider provider =
 *         IcebergRestStorageOptionsProvider.builder(
 *                         "https://catalog.example/api/catalog", List.of("db"), "orders",
 *                         "s3://warehouse/db/orders")
 *                 .prefix("prod")
 *                 .token(oauthToken)
 *                 .build();
 * Map<String, String> initial = new HashMap<>(Map.of("aws_region", "eu-west-1"));
 * initial.putAll(provider.fetchStorageOptions());
 * try (ObjectStore store = ObjectStore.open("s3://warehouse/db/orders", initial, provider)) { ... }
 * }</pre>
 *
 * <p>{@link #providerId()} is {@code
 * iceberg-rest:{uri}:{prefix}:{namespace}.{table}:{location}:auth={fingerprint}}, the fingerprint
 * being a keyed hash (HMAC-SHA256, random key per JVM) of the headers, token included. The provider
 * is {@link Serializable} (headers included: treat the serialized form as a secret; the HTTP client
 * is rebuilt on arrival). {@link #toString()}, the id and every exception message never contain a
 * header value. Failures are {@link CatalogException}s; the provider never retries by itself.
 * Instances are thread-safe.
 */
public final class IcebergRestStorageOptionsProvider
        implements StorageOptionsProvider, Serializable {

    private static final long serialVersionUID = 1L;

    /** The default separator of namespace parts in the path: the unit separator {@code 0x1F}. */
    public static final String DEFAULT_NAMESPACE_SEPARATOR = "\u001f";

    /** The default timeout of one call, connection included: 10 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final String CATALOG = "Iceberg REST";

    private final String uri;
    private final String prefix;
    private final ArrayList<String> namespace;
    private final String table;
    private final String location;
    private final String separator;
    private final LinkedHashMap<String, String> headers;
    private final long timeoutMillis;

    private final transient URI credentialsUri;
    private final transient String shown;
    private final transient String dotted;
    private final transient String providerId;
    private final transient CatalogHttp http;
    private final transient AtomicLong calls;

    private IcebergRestStorageOptionsProvider(
            String uri,
            String prefix,
            List<String> namespace,
            String table,
            String location,
            String separator,
            Map<String, String> headers,
            long timeoutMillis) {
        URI base = CatalogHttp.baseUri(uri, "the catalog URI");
        Objects.requireNonNull(namespace, "namespace");
        if (namespace.isEmpty() || namespace.stream().anyMatch(p -> p == null || p.isEmpty())) {
            throw new IllegalArgumentException(
                    "the namespace " + namespace + " must have at least one part and no empty part");
        }
        if (table == null || table.isEmpty()) {
            throw new IllegalArgumentException("the table name must not be empty");
        }
        if (location == null || location.isBlank()) {
            throw new IllegalArgumentException("the table location must not be empty");
        }
        if (separator == null || separator.isEmpty()) {
            throw new IllegalArgumentException("the namespace separator must not be empty");
        }
        if (timeoutMillis <= 0) {
            throw new IllegalArgumentException("the timeout must be positive");
        }
        CatalogHttp.validateHeaders(headers);
        String p = prefix == null ? "" : prefix.replaceAll("^/+|/+$", "");
        this.uri = uri;
        this.prefix = p;
        this.namespace = new ArrayList<>(namespace);
        this.table = table;
        this.location = location;
        this.separator = separator;
        this.headers = new LinkedHashMap<>(headers);
        this.timeoutMillis = timeoutMillis;
        List<String> segments = new ArrayList<>();
        segments.add("v1");
        for (String s : p.split("/")) {
            if (!s.isEmpty()) {
                segments.add(s);
            }
        }
        segments.addAll(
                List.of(
                        "namespaces",
                        String.join(separator, namespace),
                        "tables",
                        table,
                        "credentials"));
        this.credentialsUri = CatalogHttp.withSegments(base, segments);
        this.shown = CatalogHttp.displayUrl(base);
        this.dotted = String.join(".", namespace) + "." + table;
        this.providerId =
                "iceberg-rest:"
                        + shown
                        + ":"
                        + p
                        + ":"
                        + dotted
                        + ":"
                        + location
                        + ":auth="
                        + CatalogHttp.authId(this.headers);
        this.http = new CatalogHttp(CATALOG, this.headers, Duration.ofMillis(timeoutMillis));
        this.calls = new AtomicLong();
    }

    /**
     * Starts building a provider for table {@code table} in {@code namespace} of the catalog at
     * {@code uri} (its base URL, without {@code /v1}), whose data lives at {@code location} (the
     * table metadata's {@code location}).
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
     * Calls {@code loadCredentials} and returns the mapped options of the credential whose prefix
     * best matches the table location.
     *
     * @return the storage options (credentials, and {@code expires_at_millis} when the catalog
     *     sent an expiry)
     * @throws CatalogException for non-2xx answers (status, {@code error.message}, {@code
     *     error.type}), timeouts, connection failures, an answer that is not a {@code
     *     LoadCredentialsResponse}, no {@code storage-credentials}, or no credential whose prefix
     *     matches the location (the message lists the prefixes)
     * @throws InterruptedException if interrupted while waiting for the answer
     */
    @Override
    public Map<String, String> fetchStorageOptions() throws CatalogException, InterruptedException {
        calls.incrementAndGet();
        HttpRequest.Builder request = HttpRequest.newBuilder(credentialsUri).GET();
        Object answer = http.sendJson(request, operation(), IcebergRestStorageOptionsProvider::errorBody);
        if (!(answer instanceof Map)) {
            throw malformed(
                    "the answer is a JSON "
                            + Json.typeOf(answer)
                            + ", expected a LoadCredentialsResponse object");
        }
        Object list = ((Map<?, ?>) answer).get("storage-credentials");
        if (list == null) {
            throw missing("the answer has no storage-credentials");
        }
        if (!(list instanceof List)) {
            throw malformed(
                    "'storage-credentials' is a JSON " + Json.typeOf(list) + ", expected an array");
        }
        List<?> entries = (List<?>) list;
        if (entries.isEmpty()) {
            throw missing("the answer's storage-credentials list is empty");
        }
        String target = normalize(location);
        List<String> prefixes = new ArrayList<>();
        Object best = null;
        int bestLength = -1;
        for (int i = 0; i < entries.size(); i++) {
            Object e = entries.get(i);
            Object p = e instanceof Map ? ((Map<?, ?>) e).get("prefix") : null;
            if (!(p instanceof String)) {
                throw malformed("storage-credentials[" + i + "] has no string 'prefix'");
            }
            Object config = ((Map<?, ?>) e).get("config");
            if (config == null) {
                throw malformed("storage-credentials[" + i + "] has no 'config'");
            }
            prefixes.add((String) p);
            String np = normalize((String) p);
            if (target.startsWith(np) && np.length() > bestLength) {
                best = config;
                bestLength = np.length();
            }
        }
        if (best == null) {
            throw missing(
                    "no storage credential's prefix matches the table location "
                            + location
                            + " (prefixes: "
                            + prefixes
                            + ")");
        }
        String[] problem = new String[1];
        Map<String, String> config = CatalogHttp.stringMap(best, "config", problem);
        if (config == null) {
            throw malformed(problem[0]);
        }
        return mapConfig(config, location);
    }

    /** Maps Iceberg FileIO credential keys to storage options (see the class description). */
    static Map<String, String> mapConfig(Map<String, String> config, String location) {
        Map<String, String> out = new LinkedHashMap<>();
        String[][] simple = {
            {"s3.access-key-id", "aws_access_key_id"},
            {"s3.secret-access-key", "aws_secret_access_key"},
            {"s3.session-token", "aws_session_token"},
            {"s3.session-token-expires-at-ms", "expires_at_millis"},
            {"gcs.oauth2.token", "google_bearer_token"},
            {"gcs.oauth2.token-expires-at", "expires_at_millis"},
        };
        for (String[] m : simple) {
            String v = config.get(m[0]);
            if (v != null) {
                out.put(m[1], v);
            }
        }
        String sas = "adls.sas-token.";
        String sasExpires = "adls.sas-token-expires-at-ms.";
        TreeSet<String> accounts = new TreeSet<>();
        for (String k : config.keySet()) {
            if (k.startsWith(sas)) {
                accounts.add(k.substring(sas.length()));
            }
        }
        if (!accounts.isEmpty()) {
            String host = null;
            try {
                host = URI.create(location).getHost();
            } catch (IllegalArgumentException e) {
                // no host to match
            }
            String chosen = accounts.first();
            for (String a : accounts) {
                if (a.equals(host) || (host != null && firstLabel(a).equals(firstLabel(host)))) {
                    chosen = a;
                    break;
                }
            }
            out.put("azure_storage_sas_token", config.get(sas + chosen));
            out.put("azure_storage_account_name", firstLabel(chosen));
            String exp = config.get(sasExpires + chosen);
            if (exp != null) {
                out.put("expires_at_millis", exp);
            }
        }
        return out;
    }

    private static String firstLabel(String host) {
        int dot = host.indexOf('.');
        return dot < 0 ? host : host.substring(0, dot);
    }

    private static String normalize(String uri) {
        if (uri.startsWith("s3a://") || uri.startsWith("s3n://")) {
            return "s3://" + uri.substring(6);
        }
        return uri;
    }

    /**
     * {@code iceberg-rest:{uri}:{prefix}:{namespace}.{table}:{location}:auth={fingerprint}}; never
     * contains a header value.
     */
    @Override
    public String providerId() {
        return providerId;
    }

    /** How many {@code loadCredentials} calls this instance has sent (successful or not). */
    public long calls() {
        return calls.get();
    }

    /** The URL this provider calls (tokens travel in headers, never in the URL). */
    public String credentialsUrl() {
        return credentialsUri.toString();
    }

    /** The table location credentials are chosen for. */
    public String location() {
        return location;
    }

    @Override
    public String toString() {
        return "IcebergRestStorageOptionsProvider{uri="
                + shown
                + ", prefix="
                + prefix
                + ", table="
                + dotted
                + ", location="
                + location
                + ", headers="
                + headers.keySet()
                + ", timeoutMillis="
                + timeoutMillis
                + "}";
    }

    private String operation() {
        return "load credentials of table '" + dotted + "' at " + shown;
    }

    private CatalogException malformed(String message) {
        return http.error(CatalogException.Kind.MALFORMED_RESPONSE, operation(), 200, null, message);
    }

    private CatalogException missing(String message) {
        return http.error(CatalogException.Kind.MISSING_FIELD, operation(), 200, null, message);
    }

    /** {@code [message, type]} of an {@code IcebergErrorResponse}. */
    private static String[] errorBody(Object body) {
        if (body instanceof Map) {
            Object e = ((Map<?, ?>) body).get("error");
            if (e instanceof Map) {
                return new String[] {CatalogHttp.text(e, "message"), CatalogHttp.text(e, "type")};
            }
            if (e instanceof String) {
                return new String[] {(String) e, null};
            }
            return new String[] {CatalogHttp.text(body, "message"), null};
        }
        return new String[] {null, null};
    }

    /** Rebuilds the transient state (HTTP client, id, counters) after deserialization. */
    private Object readResolve() throws ObjectStreamException {
        try {
            return new IcebergRestStorageOptionsProvider(
                    uri, prefix, namespace, table, location, separator, headers, timeoutMillis);
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
         * Sends {@code Authorization: Bearer {token}}.
         *
         * @param token the OAuth2 token
         * @return this builder
         */
        public Builder token(String token) {
            return header("Authorization", "Bearer " + Objects.requireNonNull(token, "token"));
        }

        /**
         * A header sent with every request; its value is a secret that never appears in ids,
         * messages or {@code toString}. Setting a name again replaces it.
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
         * @throws IllegalArgumentException when the URI is not an http(s) URL, the namespace is
         *     empty or has an empty part, the table or location is empty, the separator is empty,
         *     a header cannot be sent (named, value never quoted) or the timeout is not positive
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
                    timeout.toMillis());
        }
    }
}
