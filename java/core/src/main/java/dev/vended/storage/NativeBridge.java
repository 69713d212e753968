package dev.vended.storage;

import dev.vended.storage.catalog.CatalogException;

/**
 * The JNI entry points of {@code libvended_storage}. This class is the contract with the Rust side:
 * names, parameter types and return types must match the exported functions exactly.
 *
 * <p>Every method may throw a {@link StorageException} subclass (constructed by the native side
 * through its package-private {@code (String, Throwable, String kind, boolean retryable)}
 * constructor, with the core's {@link StorageException.Kind} name), {@link
 * IllegalStateException} for a closed or unknown handle, or a {@link RuntimeException} for an internal failure (a Rust panic never
 * crosses into the JVM). Arguments are validated by {@link ObjectStore} before they get here; the
 * native side checks them again and never crashes on bad input.
 */
final class NativeBridge {

    static {
        NativeLoader.load();
    }

    private NativeBridge() {}

    /**
     * Opens (or reuses from the native registry) a store.
     *
     * @param uri the store URI, e.g. {@code s3://bucket/prefix/}
     * @param optionKeys option keys, parallel to {@code optionValues}
     * @param optionValues option values
     * @param provider the credential provider, or {@code null} for static options
     * @param providerId the provider's overridden id, or {@code null} to key by the provider's
     *     object identity
     * @param refreshMillis {@code {leadTime, staleWindow, providerTimeout, initialBackoff,
     *     maxBackoff}} in milliseconds, {@code -1} = the default; {@code null} = all defaults. The
     *     core validates them (each 1 ms to one day, initial backoff at most max backoff) and
     *     throws {@link InvalidOptionsException} naming the setting
     * @param sessionHandle a native session handle, or {@code 0} for none
     * @return a handle, never {@code 0}
     */
    static native long open(
            String uri,
            String[] optionKeys,
            String[] optionValues,
            StorageOptionsProvider provider,
            String providerId,
            long[] refreshMillis,
            long sessionHandle)
            throws StorageException;

    /**
     * {@link #open(String, String[], String[], StorageOptionsProvider, String, long[], long)} with
     * only a lead time.
     *
     * @param leadTimeMillis refresh lead time in milliseconds; negative for the default
     */
    static long open(
            String uri,
            String[] optionKeys,
            String[] optionValues,
            StorageOptionsProvider provider,
            String providerId,
            long leadTimeMillis,
            long sessionHandle)
            throws StorageException {
        long[] refresh = leadTimeMillis < 0 ? null : new long[] {leadTimeMillis, -1, -1, -1, -1};
        return open(uri, optionKeys, optionValues, provider, providerId, refresh, sessionHandle);
    }

    static native byte[] get(long handle, String path) throws StorageException;

    static native byte[] getRange(long handle, String path, long start, long endExclusive)
            throws StorageException;

    static native void put(long handle, String path, byte[] data) throws StorageException;

    /** Returns {@code {eTag|null, version|null, "true"|"false" (recognised retry)}}. */
    static native String[] putCommit(long handle, String path, byte[] data)
            throws StorageException;

    /** Returns {@code {path, size, lastModifiedMillis, eTag|null, version|null}}. */
    static native String[] head(long handle, String path) throws StorageException;

    /** Returns {@code {algorithm, base64}} of the stored checksum, or {@code null}. */
    static native String[] storedChecksum(long handle, String path) throws StorageException;

    /** Returns 5 strings per object, laid out as {@link #head}; {@code prefix} may be null. */
    static native String[] list(long handle, String prefix) throws StorageException;

    static native void delete(long handle, String path) throws StorageException;

    /**
     * Returns {@code {fetches, failures, lastRefreshMillis, expiresAtMillis, staleWaits,
     * generation, endpointRejections, authRefetches, backoffRejections, clockOffsetMillis}} (see
     * {@link RefreshStats}).
     */
    static native long[] refreshStats(long handle) throws StorageException;

    /**
     * Returns {@code {requests, get, head, put, post, delete, retryableFailures, throttled,
     * credentialRefreshes}} (see {@link RequestStats}).
     */
    static native long[] requestStats(long handle) throws StorageException;

    /** Sets (null or empty: clears) the calling thread's audit context (see {@link AuditContext}). */
    static native void setAuditContext(String context);

    /** Releases the handle; unknown or already closed handles are ignored. */
    static native void close(long handle);

    static native String nativeVersion();

    /**
     * Creates a session (metadata and range caches). A value {@code <= 0} selects the default:
     * 100,000 entries, 64 MiB, 1 MiB, 5 minutes.
     *
     * @return a handle, never {@code 0}
     * @throws IllegalArgumentException if {@code ttlMillis} is longer than the caches support
     */
    static native long sessionCreate(
            long metadataCapacity, long rangeCapacityBytes, long maxRangeBytes, long ttlMillis)
            throws StorageException;

    /**
     * Drops the session's entries whose URI is {@code uriPrefix} or lies under it at a {@code /}
     * boundary.
     *
     * @throws InvalidOptionsException for an empty prefix
     */
    static native void sessionInvalidate(long session, String uriPrefix) throws StorageException;

    /** Returns {@code {hits, misses, evictions, entries}}. */
    static native long[] sessionStats(long session) throws StorageException;

    /**
     * Releases the session handle (stores opened with it keep their reference); unknown or already
     * closed handles are ignored.
     */
    static native void sessionClose(long session);

    // ---------------------------------------------------------------------------------------
    // Catalog specs (crates/jni/src/catalog.rs): a kind ("lance-namespace", "iceberg-rest") and
    // flat keys as crates/core/src/catalog/spec.rs reads them; the protocols run natively.

    /**
     * The id of the provider a catalog spec describes (no request is sent).
     *
     * @throws InvalidOptionsException naming the bad key (never a value)
     */
    static native String catalogProviderId(String kind, String[] keys, String[] values)
            throws StorageException;

    /**
     * One {@code fetch_storage_options()} call of the spec's provider.
     *
     * @return {@code key, value} pairs sorted by key, or {@code null} for none
     */
    static native String[] catalogFetch(String kind, String[] keys, String[] values)
            throws CatalogException, StorageException;

    /**
     * One Lance Namespace {@code DescribeTable} call (a {@code lance-namespace} spec).
     *
     * @return {@code [location, table_uri, present, k1, v1, ...]}; {@code present} is {@code
     *     null} when the answer has no {@code storage_options}
     */
    static native String[] catalogDescribeTable(String[] keys, String[] values)
            throws CatalogException, StorageException;

    /**
     * Opens a Lance Namespace table by name with one describe call (a {@code lance-namespace}
     * spec).
     *
     * @param refreshMillis {@code {leadTime, staleWindow, providerTimeout, initialBackoff,
     *     maxBackoff}} in milliseconds, {@code -1} = the default; {@code null} = all defaults
     * @param sessionHandle a native session handle, or {@code 0} for none
     * @return a store handle, never {@code 0}
     */
    static native long catalogOpenTable(
            String[] keys,
            String[] values,
            String[] optionKeys,
            String[] optionValues,
            long[] refreshMillis,
            long sessionHandle)
            throws CatalogException, StorageException;

    /**
     * The table of a Unity Catalog spec ({@code unity-catalog}): one {@code getTable} call for a
     * table given by name, none for one given by id.
     *
     * @return {@code [table_id, storage_location]}; the location may be {@code null}
     */
    static native String[] catalogUnityTable(String[] keys, String[] values)
            throws CatalogException, StorageException;

    /**
     * Opens (or reuses) a store like {@link #open}, whose provider is the catalog provider the
     * spec describes, built natively: refreshes make no upcall.
     *
     * @param refreshMillis as for {@link #open(String, String[], String[],
     *     StorageOptionsProvider, String, long[], long)}
     * @param sessionHandle a native session handle, or {@code 0} for none
     * @return a handle, never {@code 0}
     */
    static native long openWithCatalog(
            String uri,
            String[] optionKeys,
            String[] optionValues,
            String catalogKind,
            String[] specKeys,
            String[] specValues,
            long[] refreshMillis,
            long sessionHandle)
            throws StorageException;

    /** The URI the store was opened at. */
    static native String storeUri(long handle) throws StorageException;

    // ---------------------------------------------------------------------------------------
    // Data plane (crates/jni/src/streams/mod.rs, whose top comment documents each call): ranged
    // reads into Java buffers, whole objects into presized arrays, vectored reads, the multipart
    // writer handle, listing iterators, conditional puts, server-side copies and renames.

    static native int readRange(
            long store, String path, long position, String ifMatch, byte[] buf, int off, int len)
            throws StorageException;

    static native int readRangeDirect(
            long store,
            String path,
            long position,
            String ifMatch,
            java.nio.ByteBuffer buf,
            int off,
            int len)
            throws StorageException;

    static native byte[] getAll(long store, String path) throws StorageException;

    static native long getInto(long store, String path, byte[] buf, int off, int len)
            throws StorageException;

    static native long getIntoDirect(
            long store, String path, java.nio.ByteBuffer buf, int off, int len)
            throws StorageException;

    static native long readerOpen(
            long store, String path, long position, long end, String ifMatch)
            throws StorageException;

    static native int readerRead(long reader, byte[] buf, int off, int len)
            throws StorageException;

    static native int readerReadDirect(long reader, java.nio.ByteBuffer buf, int off, int len)
            throws StorageException;

    static native void readerClose(long reader) throws StorageException;

    // A stream's block lent by the native side (crates/jni/src/streams/blocks.rs); only
    // NativeBlock holds these handles and buffers.

    static native long readRangeBlock(
            long store, String path, long position, String ifMatch, int len)
            throws StorageException;

    static native long readerReadBlock(long reader, int len) throws StorageException;

    static native java.nio.ByteBuffer[] blockBuffers(long block) throws StorageException;

    static native void blockRelease(long block) throws StorageException;

    static native byte[][] getRanges(long store, String path, long[] starts, long[] ends)
            throws StorageException;

    /** {@code mode}: 0 overwrite, 1 create only, 2 if the ETag is {@code eTag}. */
    static native long writerOpen(
            long store, String path, long partSize, int maxConcurrency, int mode, String eTag)
            throws StorageException;

    static native void writerWrite(long writer, byte[] b, int off, int len)
            throws StorageException;

    static native void writerWriteDirect(long writer, java.nio.ByteBuffer b, int off, int len)
            throws StorageException;

    /** Returns {@code {eTag, version}}; releases the handle, also when it fails. */
    static native String[] writerClose(long writer) throws StorageException;

    /** A no-op on a closed or unknown handle. */
    static native void writerAbort(long writer) throws StorageException;

    static native long listOpen(long store, String prefix) throws StorageException;

    /** 5 strings per object, as {@link #head}; an empty array at the end. */
    static native String[] listNext(long lister, int maxEntries) throws StorageException;

    static native void listClose(long lister);

    /** Returns {@code {objects (5 strings each), commonPrefixes}}. */
    static native String[][] listWithDelimiter(long store, String prefix)
            throws StorageException;

    static native String[] putIf(
            long store, String path, byte[] data, int off, int len, int mode, String eTag)
            throws StorageException;

    static native void copyObject(long store, String from, String to, boolean ifNotExists)
            throws StorageException;

    static native void renameObject(long store, String from, String to, boolean ifNotExists)
            throws StorageException;
}
