package dev.vended.storage;

import dev.vended.storage.catalog.CatalogException;

import java.io.Serializable;
import java.time.Duration;
import java.util.Map;

/**
 * A credential provider that is only the <em>spec</em> of a catalog table (the catalog's URL, the
 * table, headers, timeout); the catalog protocol itself is implemented once, by the native library.
 *
 * <p>The subclasses are {@link dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider},
 * {@link dev.vended.storage.catalog.IcebergRestStorageOptionsProvider} and {@link
 * dev.vended.storage.catalog.UnityCatalogStorageOptionsProvider}; other subclasses are not
 * supported (the native library knows only the kinds those describe, and refuses others
 * with an {@link IllegalArgumentException}).
 *
 * <p>A store opened with a spec as its provider ({@link ObjectStore#open(String, Map,
 * StorageOptionsProvider)} and its overloads) gets the native catalog provider the spec describes:
 * credential refreshes call the catalog from native code, with no call into the JVM. {@link
 * #fetchStorageOptions()} called from Java makes one catalog call through the same native code.
 *
 * <p>{@link #providerId()} is computed natively once per instance: equal specs have equal ids
 * within one JVM (so deserialized copies share one native store and credential cache), and the id
 * never contains a header value. Instances are immutable and thread-safe.
 */
public abstract class CatalogSpecProvider implements StorageOptionsProvider, Serializable {

    private static final long serialVersionUID = 1L;

    private transient volatile String providerId;

    /** For the catalog specs of {@code dev.vended.storage.catalog}. */
    protected CatalogSpecProvider() {}

    /**
     * The spec's kind, as the native library names it: {@code lance-namespace} or {@code
     * iceberg-rest}.
     *
     * @return the kind
     */
    protected abstract String catalogKind();

    /**
     * The spec as flat string keys, in the form the native library reads (see {@code
     * crates/core/src/catalog/spec.rs}). Values of {@code header.<Name>} keys and {@code
     * bearer_token} are secrets: never print them.
     *
     * @return a new map; neither keys nor values are {@code null}
     */
    protected abstract Map<String, String> catalogSpec();

    /**
     * Checks the spec natively (URL, parts, header names and values, timeout) and computes its id.
     * Call it at the end of a subclass constructor.
     *
     * @throws IllegalArgumentException naming what is wrong (never a header value)
     */
    protected final void validate() {
        providerId();
    }

    /**
     * The id of the credential source (catalog, table, a keyed fingerprint of the headers), computed
     * natively once per instance; equal specs give equal ids within one JVM.
     *
     * @return the id; never contains a header value
     * @throws IllegalArgumentException if the spec is not valid (only possible for a spec that
     *     was not built by its builder, e.g. a tampered serialized form)
     */
    @Override
    public final String providerId() {
        String id = providerId;
        if (id == null) {
            String[][] spec = nativeSpec();
            try {
                id = NativeBridge.catalogProviderId(catalogKind(), spec[0], spec[1]);
            } catch (InvalidOptionsException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } catch (StorageException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
            if (id == null) {
                throw new IllegalStateException("native catalogProviderId returned null");
            }
            providerId = id;
        }
        return id;
    }

    /**
     * Asks the catalog once for the table's storage options (through the native implementation).
     *
     * @return the vended options, including {@code expires_at_millis} when they expire; {@code
     *     null} when the catalog vends none
     * @throws CatalogException when the catalog call fails (kind, HTTP status, the catalog's own
     *     message; never a header value)
     * @throws InterruptedException if the calling thread is interrupted before the call
     * @throws StorageException if the native library fails otherwise
     */
    @Override
    public Map<String, String> fetchStorageOptions()
            throws CatalogException, StorageException, InterruptedException {
        checkInterrupt();
        String[][] spec = nativeSpec();
        String[] pairs = NativeBridge.catalogFetch(catalogKind(), spec[0], spec[1]);
        return pairs == null ? null : pairsToMap(pairs, 0);
    }

    /**
     * One Lance Namespace {@code DescribeTable} call.
     *
     * @return {@code [location, table_uri, present, k1, v1, k2, v2, ...]}: the first two may be
     *     {@code null}; {@code present} is {@code null} when the answer had no {@code
     *     storage_options}
     * @throws CatalogException when the call fails
     * @throws InterruptedException if the calling thread is interrupted before the call
     * @throws StorageException if the native library fails otherwise
     */
    protected final String[] describeTableNative()
            throws CatalogException, StorageException, InterruptedException {
        checkInterrupt();
        String[][] spec = nativeSpec();
        String[] answer = NativeBridge.catalogDescribeTable(spec[0], spec[1]);
        if (answer == null || answer.length < 3 || (answer.length - 3) % 2 != 0) {
            throw new IllegalStateException("native catalogDescribeTable returned a malformed answer");
        }
        return answer;
    }

    /**
     * The table of a Unity Catalog spec: one {@code getTable} call for a table given by name, none
     * for one given by id.
     *
     * @return {@code [table_id, storage_location]}; the location may be {@code null}
     * @throws CatalogException when {@code getTable} fails or its answer has no {@code table_id}
     * @throws InterruptedException if the calling thread is interrupted before the call
     * @throws StorageException if the native library fails otherwise (a path spec has no table:
     *     an {@link InvalidOptionsException})
     */
    protected final String[] unityTableNative()
            throws CatalogException, StorageException, InterruptedException {
        checkInterrupt();
        String[][] spec = nativeSpec();
        String[] answer = NativeBridge.catalogUnityTable(spec[0], spec[1]);
        if (answer == null || answer.length != 2 || answer[0] == null) {
            throw new IllegalStateException("native catalogUnityTable returned a malformed answer");
        }
        return answer;
    }

    /**
     * Opens a Lance Namespace table's store by name with one describe call, natively: the store's
     * URI is the answer's {@code table_uri} (else {@code location}); its initial options are {@code
     * clientOptions} overlaid by the vended ones (vended credentials replace the caller's as a set;
     * the caller's SSE-C key and SSE-KMS key id are kept unless the catalog vends its own); the
     * native catalog provider refreshes them.
     *
     * @param clientOptions the caller's own options, may be {@code null}
     * @param leadTime the refresh lead time, or {@code null} for the default
     * @return the open store
     * @throws CatalogException when the describe call fails or its answer lacks the location or
     *     the storage options
     * @throws InterruptedException if the calling thread is interrupted before the call
     * @throws StorageException when the store cannot be opened
     */
    protected final ObjectStore openTableNative(Map<String, String> clientOptions, Duration leadTime)
            throws CatalogException, StorageException, InterruptedException {
        long lead = ObjectStore.leadTimeMillis(leadTime);
        String[][] options = flatten(clientOptions, "storage option");
        checkInterrupt();
        String[][] spec = nativeSpec();
        long[] refresh = lead < 0 ? null : new long[] {lead, -1, -1, -1, -1};
        long handle =
                NativeBridge.catalogOpenTable(spec[0], spec[1], options[0], options[1], refresh, 0L);
        return ObjectStore.ofHandle(handle);
    }

    /** {@link #catalogSpec()} as parallel key and value arrays. */
    final String[][] nativeSpec() {
        return flatten(catalogSpec(), "catalog spec key");
    }

    private static String[][] flatten(Map<String, String> map, String what) {
        if (map == null) {
            return new String[][] {new String[0], new String[0]};
        }
        String[] keys = new String[map.size()];
        String[] values = new String[keys.length];
        int i = 0;
        for (Map.Entry<String, String> e : map.entrySet()) {
            if (i == keys.length) {
                throw new java.util.ConcurrentModificationException("the map changed");
            }
            if (e.getKey() == null) {
                throw new NullPointerException("a null " + what);
            }
            if (e.getValue() == null) {
                throw new NullPointerException(what + " '" + e.getKey() + "' has a null value");
            }
            keys[i] = e.getKey();
            values[i] = e.getValue();
            i++;
        }
        if (i != keys.length) {
            throw new java.util.ConcurrentModificationException("the map changed");
        }
        return new String[][] {keys, values};
    }

    /**
     * {@code k1, v1, k2, v2, ...} from {@code start} as a map, in that order.
     *
     * @param pairs the flat pairs
     * @param start the index of the first key
     * @return a new mutable map
     */
    protected static Map<String, String> pairsToMap(String[] pairs, int start) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (int i = start; i + 1 < pairs.length; i += 2) {
            out.put(pairs[i], pairs[i + 1]);
        }
        return out;
    }

    private static void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before the catalog call");
        }
    }
}
