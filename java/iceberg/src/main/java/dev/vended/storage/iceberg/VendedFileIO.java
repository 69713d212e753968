package dev.vended.storage.iceberg;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.IcebergCredentials;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.catalog.IcebergRestStorageOptionsProvider;

import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.StorageCredential;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.io.SupportsStorageCredentials;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;

/**
 * Iceberg's {@code FileIO} on vended-storage stores: S3 ({@code s3://}, {@code s3a://}), Azure
 * ({@code abfss://}, {@code az://}, ...) and GCS ({@code gs://}) in one instance, with the
 * credentials an Iceberg REST catalog vends refreshed natively. Set it as {@code io-impl} in the
 * catalog's properties.
 *
 * <p><b>Credentials.</b> {@link #initialize} receives the catalog's properties merged with the
 * table's {@code loadTable} config, and (Iceberg 1.10+) {@link #setCredentials} the table's {@code
 * storage-credentials}. Each location is served by one store per (bucket or container, covering
 * storage credential): its credential source is an {@link IcebergRestStorageOptionsProvider}
 * started from that config and those credentials (first answer without a catalog call) and
 * refreshed by the native library through the refresh endpoint the config names ({@code
 * client.refresh-credentials-endpoint}, {@code adls.refresh-credentials-endpoint}, {@code
 * gcs.oauth2.refresh-credentials-endpoint}), with the catalog's {@code token} and {@code header.*}
 * properties. The native side maps the Iceberg keys, picks the credential for a location (the
 * store too, through {@link IcebergCredentials#coveringPrefix}), picks the credential of a refresh
 * answer and decides when to refresh. A location no storage credential covers gets a store whose
 * provider starts from the config's own credential keys; with a refresh endpoint that store is
 * one per table location (the path before its {@code /metadata/} or {@code /data/} segment), so
 * that a refresh answer with a credential per table prefix ({@code s3://b/wh/t1/}) covers it; a
 * single entry is taken as Iceberg's own {@code VendedCredentialsProvider} takes it. A catalog
 * {@code uri} that is not HTTP (JDBC, Hive) is fine beside an absolute refresh endpoint. With
 * neither storage credentials nor a
 * refresh endpoint a store is static: the config's own credential keys ({@code s3.access-key-id},
 * ... of a catalog that puts static keys in its config), else the endpoint options and {@code
 * vended-storage.*} options alone (a catalog that vends nothing, e.g. JDBC).
 *
 * <p><b>Endpoint options.</b> {@code s3.endpoint} (plain {@code http://} allowed), {@code
 * client.region} and {@code s3.path-style-access} are mapped to the store's options; any property
 * {@code vended-storage.<option>} is passed as storage option {@code <option>} (e.g. {@code
 * vended-storage.azure_storage_use_emulator}).
 *
 * <p><b>Serialization.</b> Only the properties and storage credentials are serialized (Spark ships
 * the FileIO to executors); stores are opened lazily in each JVM. Equal specs share one native
 * store and credential cache per JVM (the library's store registry), so executors refresh about
 * once per credential lifetime, not once per task. {@link #close()} releases this instance's
 * stores.
 *
 * <p><b>Limits.</b> {@link #listPrefix} and {@link #deletePrefix} match whole path segments (a
 * prefix {@code s3://b/t} lists {@code s3://b/t/...}, never {@code s3://b/t10}); file creation
 * times are last-modified times. Iceberg tells a FileIO no table, so refreshes go to the refresh
 * endpoint of the config only: storage credentials vended without one serve until they expire,
 * then the store fails naming the missing endpoint key.
 */
public class VendedFileIO
        implements SupportsPrefixOperations, SupportsBulkOperations, SupportsStorageCredentials {

    private static final long serialVersionUID = 1L;

    /** Properties with this prefix are passed to the stores as storage options, prefix removed. */
    public static final String OPTION_PREFIX = "vended-storage.";

    /** Iceberg's REST catalog URI property. */
    static final String CATALOG_URI = "uri";

    private static final String[] REFRESH_KEYS = {
        "client.refresh-credentials-endpoint",
        "adls.refresh-credentials-endpoint",
        "gcs.oauth2.refresh-credentials-endpoint"
    };

    /** @serial The properties given to {@link #initialize}. */
    private HashMap<String, String> properties = new HashMap<>();

    /** @serial The storage credentials: prefix to config, in the order given. */
    private LinkedHashMap<String, HashMap<String, String>> credentials = new LinkedHashMap<>();

    private transient volatile Map<String, ObjectStore> stores = new ConcurrentHashMap<>();
    private transient volatile boolean closed;

    /** For {@code io-impl}: call {@link #initialize} before use. */
    public VendedFileIO() {}

    @Override
    public void initialize(Map<String, String> props) {
        HashMap<String, String> copy = new HashMap<>();
        if (props != null) {
            props.forEach((k, v) -> {
                if (k != null && v != null) {
                    copy.put(k, v);
                }
            });
        }
        this.properties = copy;
    }

    @Override
    public Map<String, String> properties() {
        return Collections.unmodifiableMap(properties);
    }

    @Override
    public void setCredentials(List<StorageCredential> list) {
        LinkedHashMap<String, HashMap<String, String>> copy = new LinkedHashMap<>();
        if (list != null) {
            for (StorageCredential c : list) {
                copy.put(c.prefix(), new HashMap<>(c.config()));
            }
        }
        this.credentials = copy;
        releaseStores();
    }

    @Override
    public List<StorageCredential> credentials() {
        List<StorageCredential> out = new ArrayList<>();
        credentials.forEach((p, c) -> out.add(StorageCredential.create(p, c)));
        return out;
    }

    @Override
    public InputFile newInputFile(String path) {
        return new VendedInputFile(this, path, -1);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
        return new VendedInputFile(this, path, length);
    }

    @Override
    public OutputFile newOutputFile(String path) {
        return new VendedOutputFile(this, path);
    }

    @Override
    public void deleteFile(String path) {
        StoreRoute route = StoreRoute.of(path);
        try {
            storeFor(path, route).delete(route.key());
        } catch (ObjectNotFoundException e) {
            // Iceberg's FileIOs treat deleting a missing file as done.
        } catch (StorageException e) {
            throw new UncheckedIOException("VendedFileIO: cannot delete " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Iterable<FileInfo> listPrefix(String prefix) {
        StoreRoute route = StoreRoute.of(prefix);
        ObjectStore store = storeFor(prefix, route);
        String key = route.key();
        return () -> {
            try {
                return store.listStream(key.isEmpty() ? null : key)
                        .map(m -> new FileInfo(route.locationOf(m.path()), m.size(), m.lastModifiedMillis()))
                        .iterator();
            } catch (StorageException e) {
                throw new UncheckedIOException("VendedFileIO: cannot list " + prefix + ": " + e.getMessage(), e);
            }
        };
    }

    @Override
    public void deletePrefix(String prefix) {
        List<String> paths = new ArrayList<>();
        for (FileInfo f : listPrefix(prefix)) {
            paths.add(f.location());
        }
        deleteFiles(paths);
    }

    /**
     * Deletes the files concurrently (at most {@link AsyncObjectStore#DEFAULT_MAX_IN_FLIGHT} per
     * store at once); missing files count as deleted.
     *
     * @throws BulkDeletionFailureException with the number of files that could not be deleted,
     *     after trying all of them
     */
    @Override
    public void deleteFiles(Iterable<String> paths) throws BulkDeletionFailureException {
        Map<ObjectStore, AsyncObjectStore> async = new HashMap<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        List<String> failedPaths = Collections.synchronizedList(new ArrayList<>());
        try {
            for (String path : paths) {
                StoreRoute route = StoreRoute.of(path);
                ObjectStore store = storeFor(path, route);
                AsyncObjectStore a = async.computeIfAbsent(store, AsyncObjectStore::of);
                pending.add(
                        a.deleteAsync(route.key())
                                .exceptionally(
                                        t -> {
                                            Throwable cause = t instanceof CompletionException ? t.getCause() : t;
                                            if (!(cause instanceof ObjectNotFoundException)) {
                                                failedPaths.add(path);
                                            }
                                            return null;
                                        }));
            }
            CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).join();
        } finally {
            async.values().forEach(AsyncObjectStore::close);
        }
        if (!failedPaths.isEmpty()) {
            throw new BulkDeletionFailureException(failedPaths.size());
        }
    }

    @Override
    public void close() {
        closed = true;
        releaseStores();
    }

    private void releaseStores() {
        Map<String, ObjectStore> old = stores;
        stores = new ConcurrentHashMap<>();
        if (old != null) {
            old.values().forEach(ObjectStore::close);
        }
    }

    /**
     * The store serving {@code location} (opened on first use in this JVM).
     *
     * @throws UncheckedIOException naming the location when the store cannot be opened
     * @throws IllegalStateException after {@link #close()}
     */
    ObjectStore storeFor(String location, StoreRoute route) {
        if (closed) {
            throw new IllegalStateException("VendedFileIO is closed (" + location + ")");
        }
        List<String> prefixes = new ArrayList<>(credentials.keySet());
        int covering = IcebergCredentials.coveringPrefix(location, prefixes);
        String credentialPrefix = covering < 0 ? null : prefixes.get(covering);
        if (credentialPrefix == null && refreshEndpointSet()) {
            // A config-only credential refreshed through the endpoint: the store is keyed by the
            // table location, which the endpoint's per-table answers cover (C28), never by the
            // bucket root, which no answer with per-table prefixes covers.
            credentialPrefix = tableLocationOf(location);
        }
        String cacheKey = route.root() + "\n" + (credentialPrefix == null ? "" : credentialPrefix);
        ObjectStore store = stores.get(cacheKey);
        if (store != null && !store.isClosed()) {
            return store;
        }
        synchronized (this) {
            store = stores.get(cacheKey);
            if (store == null || store.isClosed()) {
                store = open(location, route, credentialPrefix);
                stores.put(cacheKey, store);
            }
            return store;
        }
    }

    private ObjectStore open(String location, StoreRoute route, String credentialPrefix) {
        try {
            Map<String, String> options = storeOptions();
            return ObjectStore.open(route.root(), options, provider(route, credentialPrefix, options));
        } catch (StorageException | RuntimeException e) {
            throw new UncheckedIOException(
                    new IOException(
                            "VendedFileIO: cannot open the store for " + location + ": " + e.getMessage(), e));
        }
    }

    private boolean refreshEndpointSet() {
        for (String key : REFRESH_KEYS) {
            if (properties.containsKey(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The table location of an Iceberg path: what comes before its last {@code /metadata/} or
     * {@code /data/} segment (Iceberg's layout: {@code <table>/metadata/...}, {@code
     * <table>/data/...}), else the path's parent directory, else the path itself. A refresh
     * answer's storage credential for the table (its prefix is the table location or above it)
     * covers it.
     */
    static String tableLocationOf(String location) {
        int start = location.indexOf("://");
        int authorityEnd = start < 0 ? -1 : location.indexOf('/', start + 3);
        if (authorityEnd < 0) {
            return location;
        }
        int cut = Math.max(location.lastIndexOf("/metadata/"), location.lastIndexOf("/data/"));
        if (cut > authorityEnd) {
            return location.substring(0, cut);
        }
        int parent = location.lastIndexOf('/', location.length() - 2);
        return parent > authorityEnd ? location.substring(0, parent) : location;
    }

    /** The store options besides credentials (endpoint, region, path style, pass-through). */
    Map<String, String> storeOptions() {
        Map<String, String> o = new HashMap<>();
        String endpoint = properties.get("s3.endpoint");
        if (endpoint != null) {
            o.put("aws_endpoint", endpoint);
            if (endpoint.toLowerCase(Locale.ROOT).startsWith("http://")) {
                o.put("aws_allow_http", "true");
            }
        }
        String region = properties.get("client.region");
        if (region != null) {
            o.put("aws_region", region);
        }
        String pathStyle = properties.get("s3.path-style-access");
        if (pathStyle != null) {
            o.put("aws_virtual_hosted_style_request", Boolean.toString(!Boolean.parseBoolean(pathStyle)));
        }
        properties.forEach((k, v) -> {
            if (k.startsWith(OPTION_PREFIX) && k.length() > OPTION_PREFIX.length()) {
                o.put(k.substring(OPTION_PREFIX.length()), v);
            }
        });
        return o;
    }

    /**
     * The catalog provider for a store, or {@code null} for a static store. The provider is built
     * for the store's location alone (Iceberg tells a FileIO no table): its refreshes go to the
     * config's refresh endpoint, its first answer is the covering storage credential or the
     * config's credential keys. With neither storage credentials nor a refresh endpoint there is
     * nothing to refresh: the config's own credential keys (e.g. {@code s3.access-key-id} of a
     * catalog that vends static keys), mapped natively, are added to {@code options}, and the
     * store is static.
     */
    private StorageOptionsProvider provider(
            StoreRoute route, String credentialPrefix, Map<String, String> options)
            throws StorageException {
        String location = credentialPrefix != null ? credentialPrefix : route.root();
        boolean refreshable = !credentials.isEmpty();
        for (String key : REFRESH_KEYS) {
            refreshable |= properties.containsKey(key);
        }
        // The catalog URI only resolves a relative refresh endpoint; a non-REST catalog's 'uri'
        // (jdbc:, thrift:) is not read when there is nothing to refresh.
        String uri = refreshable ? properties.getOrDefault(CATALOG_URI, "") : "";
        IcebergRestStorageOptionsProvider.Builder b =
                IcebergRestStorageOptionsProvider.builderForLocation(uri, location)
                        .loadTableConfig(catalogConfig());
        credentials.forEach(b::storageCredential);
        String token = properties.get("token");
        if (token != null) {
            b.token(token);
        }
        properties.forEach((k, v) -> {
            if (k.startsWith("header.") && k.length() > "header.".length()) {
                b.header(k.substring("header.".length()), v);
            }
        });
        String planId = properties.get("rest-scan-plan-id");
        if (planId != null) {
            b.planId(planId);
        }
        IcebergRestStorageOptionsProvider provider = b.build();
        if (refreshable) {
            return provider;
        }
        // No endpoint and no table: this fetch makes no call; it returns the config's credential
        // keys, or fails (nothing to serve) when there are none.
        Map<String, String> fixed;
        try {
            fixed = provider.fetchStorageOptions();
        } catch (IOException e) { // CatalogException or StorageException
            fixed = null; // no credential in the config: the endpoint options (and vended-storage.*) alone
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageException("VendedFileIO: interrupted while opening the store for " + location, e);
        }
        if (fixed != null) {
            fixed.forEach(options::putIfAbsent); // explicit vended-storage.* options win
        }
        return null;
    }

    /** The storage keys of the config ({@code s3.*}, {@code adls.*}, {@code gcs.*}, {@code client.*}). */
    private Map<String, String> catalogConfig() {
        Map<String, String> c = new HashMap<>();
        properties.forEach((k, v) -> {
            if (k.startsWith("s3.") || k.startsWith("adls.") || k.startsWith("gcs.") || k.startsWith("client.")) {
                c.put(k, v);
            }
        });
        return c;
    }

    /**
     * Restores the configuration; stores are opened again on first use in this JVM.
     *
     * @param in the stream
     * @throws IOException if reading fails
     * @throws ClassNotFoundException if a class of the serialized form is missing
     */
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        stores = new ConcurrentHashMap<>();
        if (properties == null) {
            properties = new HashMap<>();
        }
        if (credentials == null) {
            credentials = new LinkedHashMap<>();
        }
    }

    @Override
    public String toString() {
        return "VendedFileIO{stores=" + stores.size() + ", credentialPrefixes=" + credentials.keySet() + "}";
    }
}
