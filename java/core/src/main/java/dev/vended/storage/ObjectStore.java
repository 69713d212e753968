package dev.vended.storage;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An object store (S3, local files, memory, ...) implemented natively by Rust {@code object_store},
 * whose credentials can be vended by a {@link StorageOptionsProvider} and are refreshed by the
 * native side before they expire.
 *
 * <pre>{@code
 * Map<String, String> options = catalog.describeTable("db.t").storageOptions(); // gen 1
 * try (ObjectStore store = ObjectStore.open("s3://bucket/tables/t/", options, catalogProvider)) {
 *     store.put("data/0.bin", bytes);
 *     byte[] back = store.get("data/0.bin");
 * }
 * }</pre>
 *
 * <h2>URIs and paths</h2>
 *
 * Supported URIs are those of {@code object_store}: {@code s3://bucket/prefix/}, {@code
 * file:///absolute/dir/}, {@code memory://}, and any other scheme the native library was built
 * with. Every path given to a method is relative to the URI's prefix, uses {@code /} as the
 * separator and has no leading slash.
 *
 * <h2>Credentials</h2>
 *
 * The initial options seed the credential cache: opening a store whose options already contain
 * valid credentials costs no provider call. The provider is called when the credentials come within
 * the lead time of {@code expires_at_millis} (default {@link #DEFAULT_LEAD_TIME}, never more than
 * half the credentials' lifetime), and once more when the endpoint rejects a request as
 * unauthenticated. Native stores are cached and shared between opens with equal URI, non-secret
 * options and credential source (see {@link StorageOptionsProvider#providerId()}).
 *
 * <h2>Threads and closing</h2>
 *
 * A store is thread-safe. {@link #close()} is idempotent and may be called while other threads are
 * inside calls: those calls complete normally, the native store is released when the last of them
 * returns, and every call that starts after {@code close()} throws {@link IllegalStateException}. A
 * store that becomes unreachable without being closed is released by a {@link Cleaner}; closing
 * explicitly is still recommended.
 *
 * <h2>Caching</h2>
 *
 * A store opened with a {@link Session} answers {@link #head} and small {@link #getRange} calls
 * from the session's caches when it can; see {@link Session} for what is cached and how to
 * invalidate it.
 *
 * <h2>Errors</h2>
 *
 * Each method documents what it throws. In short:
 *
 * <ul>
 *   <li>{@link ObjectNotFoundException}: the object does not exist;
 *   <li>{@link CredentialsException}: the endpoint refused the request even after one retry with
 *       freshly fetched credentials ({@code AccessDenied}, for example a key scoped to another
 *       prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or the provider failed (its
 *       throwable is the cause and the message names the provider);
 *   <li>{@link InvalidOptionsException}: the URI or the options cannot be used;
 *   <li>{@link StorageTimeoutException}: the provider did not answer in time;
 *   <li>{@link IllegalStateException}: the store is closed;
 *   <li>{@link StorageException}: anything else (I/O errors, unexpected endpoint answers, an
 *       internal error of the native library).
 * </ul>
 *
 * Every {@link StorageException} also carries a {@link StorageException#kind() kind} and {@link
 * StorageException#isRetryable() whether a retry may help}, decided by the native core. Messages
 * are one line; no message, {@code toString()} or log record contains a secret ({@link
 * Redaction}).
 */
public final class ObjectStore extends StoreOperations implements AutoCloseable {

    /** The refresh lead time used when none is given. */
    public static final Duration DEFAULT_LEAD_TIME = Duration.ofMinutes(5);

    /**
     * Releases stores and sessions that become unreachable without being closed. Its thread is the
     * JDK's own (a daemon created without this library's context): a thread created here with a
     * thread factory would inherit an access control context holding this library's protection
     * domain, and so keep the class loader that loaded the library reachable for ever (an
     * application server could never unload it).
     */
    static final Cleaner CLEANER = Cleaner.create();

    private final String uri;
    private final String printableUri;
    private final NativeHandle handle;
    private final Cleaner.Cleanable cleanable;

    private ObjectStore(String uri, long nativeHandle) {
        this.uri = uri;
        this.printableUri = Redaction.redactUri(uri);
        this.handle =
                new NativeHandle(
                        nativeHandle,
                        "ObjectStore is closed: " + printableUri,
                        NativeBridge::close);
        this.cleanable = CLEANER.register(this, handle);
    }

    // ---------------------------------------------------------------------------------------
    // Opening

    /**
     * Opens a store with static options (no provider): the credentials in {@code options} are used
     * until they expire.
     *
     * @param uri the store URI, e.g. {@code s3://bucket/prefix/}
     * @param options storage options ({@code null} means none); keys and values must not be null
     * @return the open store
     * @throws NullPointerException if {@code uri} is null or an option key is null
     * @throws InvalidOptionsException if the URI or the options cannot be used (unknown scheme, no
     *     bucket, an unknown {@code aws_} option, an access key id without its secret, an S3 URI
     *     without credentials, a malformed {@code expires_at_millis}, a null option value, ...)
     * @throws StorageException for other failures while building the native store
     */
    public static ObjectStore open(String uri, Map<String, String> options)
            throws StorageException {
        return open(uri, options, null, null);
    }

    /**
     * Opens a store whose credentials come from {@code provider}, with the default lead time.
     *
     * @param uri the store URI
     * @param options the initial storage options ({@code null} means none), e.g. the ones the
     *     catalog returned when the table was opened; they seed the credential cache
     * @param provider the credential source, or {@code null} for static options
     * @return the open store
     * @throws NullPointerException if {@code uri} is null or an option key is null
     * @throws InvalidOptionsException if the URI, the options or {@code provider.providerId()}
     *     cannot be used (see {@link #open(String, Map)})
     * @throws CredentialsException if the initial options hold no valid credentials and the
     *     provider fails (its throwable is the cause)
     * @throws StorageException for other failures while building the native store
     */
    public static ObjectStore open(
            String uri, Map<String, String> options, StorageOptionsProvider provider)
            throws StorageException {
        return open(uri, options, provider, null);
    }

    /**
     * Opens a store whose credentials come from {@code provider}.
     *
     * @param uri the store URI
     * @param options the initial storage options ({@code null} means none)
     * @param provider the credential source, or {@code null} for static options
     * @param leadTime how long before {@code expires_at_millis} to refresh, or {@code null} for
     *     {@link #DEFAULT_LEAD_TIME}; the native side caps it at half the credentials' lifetime
     * @return the open store
     * @throws NullPointerException if {@code uri} is null or an option key is null
     * @throws IllegalArgumentException if {@code leadTime} is negative
     * @throws InvalidOptionsException if the URI, the options or {@code provider.providerId()}
     *     cannot be used (see {@link #open(String, Map)})
     * @throws CredentialsException if the initial options hold no valid credentials and the
     *     provider fails (its throwable is the cause)
     * @throws StorageException for other failures while building the native store
     */
    public static ObjectStore open(
            String uri,
            Map<String, String> options,
            StorageOptionsProvider provider,
            Duration leadTime)
            throws StorageException {
        return open(uri, options, provider, leadTime, null);
    }

    /**
     * Opens a store whose credentials come from {@code provider} and whose {@link #head} and small
     * {@link #getRange} results are cached in {@code session}.
     *
     * <p>The store keeps using the session's caches until it is closed, even if the session is
     * closed first. Cached entries are keyed by this store's identity (scheme, bucket, non-secret
     * options and credential source) plus the object path, so stores with another credential source
     * never see them; see {@link Session}.
     *
     * @param uri the store URI
     * @param options the initial storage options ({@code null} means none)
     * @param provider the credential source, or {@code null} for static options
     * @param leadTime how long before {@code expires_at_millis} to refresh, or {@code null} for
     *     {@link #DEFAULT_LEAD_TIME}; the native side caps it at half the credentials' lifetime
     * @param session the caches to use, or {@code null} for none
     * @return the open store
     * @throws NullPointerException if {@code uri} is null or an option key is null
     * @throws IllegalArgumentException if {@code leadTime} is negative
     * @throws IllegalStateException if {@code session} is closed
     * @throws InvalidOptionsException if the URI, the options or {@code provider.providerId()}
     *     cannot be used (see {@link #open(String, Map)})
     * @throws CredentialsException if the initial options hold no valid credentials and the
     *     provider fails (its throwable is the cause)
     * @throws StorageException for other failures while building the native store
     */
    public static ObjectStore open(
            String uri,
            Map<String, String> options,
            StorageOptionsProvider provider,
            Duration leadTime,
            Session session)
            throws StorageException {
        Objects.requireNonNull(uri, "uri");
        long[] refresh = StoreSettings.refreshMillis(leadTime);
        return wrap(uri, StoreSettings.openHandle(uri, options, provider, refresh, session));
    }

    /** Wraps a handle {@link StoreSettings#openHandle} returned. */
    static ObjectStore wrap(String uri, long nativeHandle) {
        return new ObjectStore(uri, nativeHandle);
    }

    /**
     * Starts building a store.
     *
     * @param uri the store URI
     * @return a builder
     * @throws NullPointerException if {@code uri} is null
     */
    public static Builder builder(String uri) {
        return new Builder(uri);
    }

    /**
     * The version of the loaded native library.
     *
     * @return the native crate version, e.g. {@code 0.1.0}
     * @throws UnsatisfiedLinkError if the native library cannot be loaded
     */
    public static String nativeVersion() {
        NativeLoader.load();
        return NativeBridge.nativeVersion();
    }

    /**
     * Builds an {@link ObjectStore}: initial options, the provider, refresh timing ({@code
     * leadTime}, {@code staleWindow}, {@code providerTimeout}, {@code initialBackoff}, {@code
     * maxBackoff}), HTTP client and retry settings ({@code requestTimeout}, {@code
     * connectTimeout}, {@code maxRetries}, {@code retryTimeout}) and a session. Not thread-safe;
     * its {@code toString()} never shows a secret.
     */
    public static final class Builder extends ObjectStoreBuilder {
        private Builder(String uri) {
            super(uri);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Operations

    /**
     * Reads a whole object.
     *
     * @param path the object path, relative to the store's prefix
     * @return the object's bytes
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the object does not exist
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws StorageException for other failures
     */
    public byte[] get(String path) throws StorageException {
        Objects.requireNonNull(path, "path");
        // One array at the size the answer announces, filled chunk by chunk (one copy).
        return call(h -> nonNull(NativeBridge.getAll(h, path), "get"));
    }

    /**
     * Reads the bytes {@code [start, endExclusive)} of an object.
     *
     * @param path the object path, relative to the store's prefix
     * @param start the first byte to read
     * @param endExclusive one past the last byte to read
     * @return the requested bytes (fewer if the object ends before {@code endExclusive}, as the
     *     store reports it)
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalArgumentException if {@code start} is negative or {@code endExclusive < start}
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the object does not exist
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws InvalidOptionsException if {@code start} is at or past the end of the object (the
     *     message names the object's size)
     * @throws StorageException for other failures
     */
    public byte[] getRange(String path, long start, long endExclusive) throws StorageException {
        Objects.requireNonNull(path, "path");
        if (start < 0) {
            throw new IllegalArgumentException("start must not be negative: " + start);
        }
        if (endExclusive < start) {
            throw new IllegalArgumentException(
                    "endExclusive ("
                            + endExclusive
                            + ") must not be less than start ("
                            + start
                            + ")");
        }
        return call(h -> nonNull(NativeBridge.getRange(h, path, start, endExclusive), "getRange"));
    }

    /**
     * Writes an object, replacing any object at the same path.
     *
     * @param path the object path, relative to the store's prefix
     * @param data the bytes to write (copied before the call returns)
     * @throws NullPointerException if {@code path} or {@code data} is null
     * @throws IllegalStateException if the store is closed
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws StorageException for other failures
     */
    public void put(String path, byte[] data) throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
        call(
                h -> {
                    NativeBridge.put(h, path, data);
                    return null;
                });
    }

    /**
     * Reads an object's metadata.
     *
     * @param path the object path, relative to the store's prefix
     * @return the metadata
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the object does not exist
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws StorageException for other failures
     */
    @Override
    public ObjectMeta head(String path) throws StorageException {
        Objects.requireNonNull(path, "path");
        return call(h -> ObjectMeta.fromNative(NativeBridge.head(h, path), 0));
    }

    /**
     * The checksum the service stores for an object (one {@code HEAD}), with checksums on
     * (storage option {@code checksums}, the default): S3 {@code CRC64NVME} (or a full-object
     * {@code CRC32C}), Azure {@code MD5}, GCS {@code CRC32C}. A full-object checksum depends on the
     * bytes only, not on how they were uploaded: two copies of the same bytes have equal ones.
     *
     * @param path the object's path relative to the store's prefix
     * @return the stored checksum, or {@code null} when the service returns none (objects
     *     written without one, composite checksums, checksums off)
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException for other failures, as {@link #head}
     */
    public StoredChecksum storedChecksum(String path) throws StorageException {
        Objects.requireNonNull(path, "path");
        String[] v = call(h -> NativeBridge.storedChecksum(h, path));
        return v == null ? null : new StoredChecksum(v[0], v[1]);
    }

    /**
     * Lists every object under a prefix, recursively.
     *
     * @param prefix a path prefix relative to the store's prefix, matched at {@code /} boundaries
     *     (as {@code object_store} does), or {@code null} for everything
     * @return the objects' metadata, in the order the store returned them
     * @throws IllegalStateException if the store is closed
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws StorageException for other failures
     */
    public List<ObjectMeta> list(String prefix) throws StorageException {
        return ObjectMeta.listFromNative(call(h -> nonNull(NativeBridge.list(h, prefix), "list")));
    }

    /**
     * Deletes an object. Deleting a missing object is not an error on S3; some other stores (local
     * files) report {@link ObjectNotFoundException}.
     *
     * @param path the object path, relative to the store's prefix
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the store reports the object missing
     * @throws CredentialsException if the endpoint refuses the request even after one retry with
     *     fresh credentials ({@code AccessDenied}, e.g. the credentials are scoped to another
     *     prefix; {@code InvalidAccessKeyId}; {@code ExpiredToken}), or credentials could not be
     *     refreshed (the message names the provider; the provider's throwable is the cause)
     * @throws StorageTimeoutException if the credential provider did not answer in time
     * @throws StorageException for other failures
     */
    public void delete(String path) throws StorageException {
        Objects.requireNonNull(path, "path");
        call(
                h -> {
                    NativeBridge.delete(h, path);
                    return null;
                });
    }

    /**
     * The counters of this store's credential refresher (shared by every open of the same native
     * store).
     *
     * @return a snapshot of the counters
     * @throws IllegalStateException if the store is closed
     * @throws StorageException if the native side cannot report them
     */
    public RefreshStats refreshStats() throws StorageException {
        return call(h -> RefreshStats.fromNative(NativeBridge.refreshStats(h)));
    }

    /**
     * The counters of this store's HTTP requests and credential refreshes (shared by every open
     * of the same native store, that is of the same location, options and credential source).
     *
     * @return a snapshot of the counters
     * @throws IllegalStateException if the store is closed
     * @throws StorageException if the native side cannot report them
     */
    public RequestStats requestStats() throws StorageException {
        return call(h -> RequestStats.fromNative(NativeBridge.requestStats(h)));
    }

    /**
     * The URI this store was opened with.
     *
     * @return the URI, as given
     */
    public String uri() {
        return uri;
    }

    /**
     * Whether {@link #close()} has been called.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        return handle.isClosed();
    }

    /**
     * Closes this store. Idempotent. Calls in progress on other threads complete; the native store
     * (and its reference to the provider) is released when the last of them returns. Later calls
     * throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "ObjectStore{uri=" + printableUri + ", closed=" + isClosed() + "}";
    }

    /** For the stream classes: acquires the native handle (pair with {@link #releaseHandle}). */
    @Override
    long acquireHandle() {
        return handle.acquire();
    }

    @Override
    void releaseHandle() {
        handle.release();
    }

    // ---------------------------------------------------------------------------------------
    // Internals

    /** Makes {@code call} with the native handle acquired (see {@link HandleCall#with}). */
    private <T> T call(HandleCall<T> call) throws StorageException {
        return HandleCall.with(handle, this, call);
    }

    /**
     * Wraps a store handle the native side opened by other means (a catalog table opened by
     * name); closes the handle if its URI cannot be read.
     */
    static ObjectStore ofHandle(long handle) throws StorageException {
        if (handle == 0L) {
            throw new IllegalStateException("native library returned no store handle");
        }
        String uri;
        try {
            uri = NativeBridge.storeUri(handle);
        } catch (StorageException | RuntimeException e) {
            NativeBridge.close(handle);
            throw e;
        }
        return new ObjectStore(uri, handle);
    }

    /** See {@link StoreSettings#leadTimeMillis}. */
    static long leadTimeMillis(Duration leadTime) {
        return StoreSettings.leadTimeMillis(leadTime);
    }

    /** See {@link StoreSettings#nativeProviderId}. */
    static String nativeProviderId(StorageOptionsProvider provider) throws InvalidOptionsException {
        return StoreSettings.nativeProviderId(provider);
    }
}
