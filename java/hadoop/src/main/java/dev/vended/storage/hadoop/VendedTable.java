package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.Redaction;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A table handle for connectors: created on the driver from <b>one</b> catalog call, shipped to
 * executors by Java serialization, opened there with {@link #open()}.
 *
 * <pre>{@code
 * // driver
 * VendedTable table = VendedTable.lance(
 *         LanceNamespaceStorageOptionsProvider.builder(catalogUrl, "db", "orders").build(),
 *         Map.of("aws_region", "us-east-1"));
 * rdd.mapPartitions(rows -> { try (ObjectStore store = table.open()) { ... } });
 * }</pre>
 *
 * <p>The handle holds the table's location, its credential source (a catalog spec such as {@link
 * LanceNamespaceStorageOptionsProvider}, or any {@link Serializable} provider), the caller's
 * non-secret client options and a <b>snapshot</b> of the storage options the catalog vended when
 * the handle was created.
 *
 * <h2>On executors</h2>
 *
 * {@link #open()} returns a new {@link ObjectStore} handle on the JVM's one native store for this
 * table: every deserialized copy of one handle (every task) uses the same provider instance in a
 * JVM, so the native store and its credential cache are shared, and a JVM makes about one provider
 * call per credential lifetime. While the snapshot is valid it seeds the store (no catalog call at
 * all); a snapshot that arrives expired is dropped, and the first request in the JVM fetches once
 * while concurrent requests of every task wait for that one refresh instead of each calling the
 * catalog.
 *
 * <h2>Secrets</h2>
 *
 * The serialized form contains the snapshot's credentials and the spec's headers in clear, so that
 * executors can use them: treat it as a secret (Spark encrypts it only with {@code
 * spark.io.encryption.enabled} / {@code spark.network.crypto.enabled}). {@link #toString()} shows
 * neither.
 */
public final class VendedTable implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The credential source of each handle id in this JVM: the first copy's provider. */
    private static final ConcurrentHashMap<String, StorageOptionsProvider> PROVIDERS =
            new ConcurrentHashMap<>();

    /** One store per handle id kept open in this JVM, so that its native store stays shared. */
    private static final ConcurrentHashMap<String, ObjectStore> ANCHORS = new ConcurrentHashMap<>();

    /** @serial Identifies this handle and its copies (random, created on the driver). */
    private final String id;
    /** @serial The table's URI. */
    private final String location;
    /** @serial The credential source; must be serializable. */
    private final StorageOptionsProvider provider;
    /** @serial The caller's own options (endpoint, region, ...). */
    private final LinkedHashMap<String, String> clientOptions;
    /** @serial The vended options at creation (secrets), or empty. */
    private final LinkedHashMap<String, String> snapshot;
    /** @serial Expiry of the snapshot, epoch milliseconds, or {@code Long.MAX_VALUE}. */
    private final long snapshotExpiresAtMillis;
    /** @serial Refresh lead time in milliseconds, or {@code -1} for the library's default. */
    private final long leadTimeMillis;

    private VendedTable(
            String location,
            StorageOptionsProvider provider,
            Map<String, String> clientOptions,
            Map<String, String> snapshot,
            Duration leadTime) {
        if (!(provider instanceof Serializable)) {
            throw new IllegalArgumentException(
                    "the provider must be Serializable to travel with the table: "
                            + provider.getClass().getName());
        }
        this.id = UUID.randomUUID().toString();
        this.location = Objects.requireNonNull(location, "location");
        this.provider = provider;
        this.clientOptions =
                new LinkedHashMap<>(clientOptions == null ? Map.of() : clientOptions);
        this.snapshot = new LinkedHashMap<>(snapshot == null ? Map.of() : snapshot);
        this.snapshotExpiresAtMillis = expiry(this.snapshot);
        this.leadTimeMillis = leadTime == null ? -1 : leadTime.toMillis();
    }

    private static long expiry(Map<String, String> options) {
        String v = options.get("expires_at_millis");
        if (v == null) {
            return Long.MAX_VALUE;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "expires_at_millis of the vended options is not epoch milliseconds: '" + v + "'");
        }
    }

    /**
     * A handle on a Lance Namespace table: one {@code DescribeTable} call gives the location and
     * the snapshot.
     *
     * @param spec the catalog table
     * @param clientOptions the caller's own options (endpoint, region, allow-http), may be null
     * @return the handle
     * @throws IOException if the describe call fails or its answer has no location or no {@code
     *     storage_options}
     */
    public static VendedTable lance(
            LanceNamespaceStorageOptionsProvider spec, Map<String, String> clientOptions)
            throws IOException {
        return lance(spec, clientOptions, null);
    }

    /**
     * As {@link #lance(LanceNamespaceStorageOptionsProvider, Map)}, with a refresh lead time.
     *
     * @param spec the catalog table
     * @param clientOptions the caller's own options, may be null
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @return the handle
     * @throws IOException if the describe call fails or its answer lacks a location or options
     */
    public static VendedTable lance(
            LanceNamespaceStorageOptionsProvider spec,
            Map<String, String> clientOptions,
            Duration leadTime)
            throws IOException {
        LanceNamespaceStorageOptionsProvider.TableDescription d;
        try {
            d = spec.describeTable();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while describing " + spec);
        }
        if (d.uri() == null || d.storageOptions() == null) {
            throw new IOException(
                    "the describe answer for " + spec + " has no location or no storage_options");
        }
        return new VendedTable(d.uri(), spec, clientOptions, d.storageOptions(), leadTime);
    }

    /**
     * A handle on a table whose credentials come from {@code provider}: one {@code
     * fetchStorageOptions()} call gives the snapshot.
     *
     * @param location the table's URI, e.g. {@code s3://bucket/warehouse/orders/}
     * @param provider the credential source; must be {@link Serializable}
     * @param clientOptions the caller's own options, may be null
     * @param leadTime how long before expiry to refresh, or {@code null} for the default
     * @return the handle
     * @throws IllegalArgumentException if the provider is not serializable
     * @throws IOException if the provider fails
     */
    public static VendedTable of(
            String location,
            StorageOptionsProvider provider,
            Map<String, String> clientOptions,
            Duration leadTime)
            throws IOException {
        Objects.requireNonNull(provider, "provider");
        if (!(provider instanceof Serializable)) {
            throw new IllegalArgumentException(
                    "the provider must be Serializable: " + provider.getClass().getName());
        }
        Map<String, String> snapshot;
        try {
            snapshot = provider.fetchStorageOptions();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while fetching options for " + location);
        } catch (Exception e) {
            throw new IOException("the provider failed: " + e, e);
        }
        return new VendedTable(location, provider, clientOptions, snapshot, leadTime);
    }

    /**
     * Opens the table's store in this JVM (see the class description). Close the returned handle;
     * the JVM's native store stays shared with other handles.
     *
     * @return a store rooted at {@link #location()}
     * @throws IOException if the store cannot be opened (for an expired snapshot: the provider's
     *     failure)
     */
    public ObjectStore open() throws IOException {
        StorageOptionsProvider shared = PROVIDERS.computeIfAbsent(id, k -> provider);
        Duration lead = leadTimeMillis < 0 ? null : Duration.ofMillis(leadTimeMillis);
        Map<String, String> options = new LinkedHashMap<>(clientOptions);
        if (snapshotUsable()) {
            options.putAll(snapshot);
        }
        // else the snapshot expired in transit (or is about to): open without it; the first
        // request of the JVM's store fetches once, concurrent requests wait for that refresh.
        ObjectStore anchor = ANCHORS.get(id);
        if (anchor == null) {
            synchronized (ANCHORS) {
                anchor = ANCHORS.get(id);
                if (anchor == null) {
                    // Held open for the life of the JVM: the native store of a provider compared
                    // by identity lives only while a handle is open, and tasks come and go.
                    anchor = ObjectStore.open(location, options, shared, lead);
                    ANCHORS.put(id, anchor);
                }
            }
        }
        return ObjectStore.open(location, options, shared, lead);
    }

    /** Whether the snapshot still has a reasonable part of its life (5 s, or the lead time) left. */
    private boolean snapshotUsable() {
        if (snapshot.isEmpty()) {
            return false;
        }
        long margin = Math.max(5_000L, leadTimeMillis < 0 ? 0 : Math.min(leadTimeMillis, 60_000L));
        return snapshotExpiresAtMillis == Long.MAX_VALUE
                || System.currentTimeMillis() + margin < snapshotExpiresAtMillis;
    }

    /**
     * The table's URI.
     *
     * @return the location the handle was created with (or the catalog gave)
     */
    public String location() {
        return location;
    }

    /**
     * When the snapshot's credentials expire.
     *
     * @return epoch milliseconds, or {@link Long#MAX_VALUE} when they do not expire
     */
    public long snapshotExpiresAtMillis() {
        return snapshotExpiresAtMillis;
    }

    /**
     * The non-secret client options.
     *
     * @return an unmodifiable view
     */
    public Map<String, String> clientOptions() {
        return Collections.unmodifiableMap(clientOptions);
    }

    @Override
    public String toString() {
        return "VendedTable{location="
                + Redaction.redactUri(location)
                + ", provider="
                + provider.getClass().getName()
                + ", snapshotExpiresAtMillis="
                + snapshotExpiresAtMillis
                + ", clientOptions="
                + Redaction.redact(clientOptions)
                + "}";
    }
}
