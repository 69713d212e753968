package dev.vended.storage;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
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
 */
public final class ObjectStore implements AutoCloseable {

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
        int n = options == null ? 0 : options.size();
        String[] keys = new String[n];
        String[] values = new String[n];
        if (options != null) {
            int i = 0;
            for (Map.Entry<String, String> e : options.entrySet()) {
                if (i == n) {
                    throw new java.util.ConcurrentModificationException("options changed");
                }
                String key = e.getKey();
                if (key == null) {
                    throw new NullPointerException("options contains a null key");
                }
                String value = e.getValue();
                if (value == null) {
                    throw new InvalidOptionsException(
                            "storage option '" + key + "' has a null value");
                }
                keys[i] = key;
                values[i] = value;
                i++;
            }
            if (i != n) {
                throw new java.util.ConcurrentModificationException("options changed");
            }
        }
        long leadMillis = leadTimeMillis(leadTime);
        String providerId = provider == null ? null : nativeProviderId(provider);
        NativeLoader.load();
        long h;
        if (session == null) {
            h = openNative(uri, keys, values, provider, providerId, leadMillis, 0L);
        } else {
            long sessionHandle = session.acquire();
            try {
                h = openNative(uri, keys, values, provider, providerId, leadMillis, sessionHandle);
            } finally {
                session.release();
            }
        }
        if (h == 0L) {
            throw new IllegalStateException("native library returned no store handle");
        }
        return new ObjectStore(uri, h);
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

    /** Builds an {@link ObjectStore}; not thread-safe. */
    public static final class Builder {
        private final String uri;
        private final Map<String, String> options = new LinkedHashMap<>();
        private StorageOptionsProvider provider;
        private Duration leadTime;
        private Session session;

        private Builder(String uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
        }

        /**
         * Adds initial storage options (later values replace earlier ones).
         *
         * @param options options to add; {@code null} adds nothing
         * @return this builder
         */
        public Builder options(Map<String, String> options) {
            if (options != null) {
                this.options.putAll(options);
            }
            return this;
        }

        /**
         * Adds one initial storage option.
         *
         * @param key the option key
         * @param value the option value
         * @return this builder
         */
        public Builder option(String key, String value) {
            options.put(Objects.requireNonNull(key, "key"), value);
            return this;
        }

        /**
         * Sets the credential provider.
         *
         * @param provider the provider, or {@code null} for static options
         * @return this builder
         */
        public Builder provider(StorageOptionsProvider provider) {
            this.provider = provider;
            return this;
        }

        /**
         * Sets the refresh lead time.
         *
         * @param leadTime the lead time, or {@code null} for {@link #DEFAULT_LEAD_TIME}
         * @return this builder
         */
        public Builder leadTime(Duration leadTime) {
            this.leadTime = leadTime;
            return this;
        }

        /**
         * Sets the session whose caches the store uses.
         *
         * @param session the session, or {@code null} for none
         * @return this builder
         */
        public Builder session(Session session) {
            this.session = session;
            return this;
        }

        /**
         * Opens the store; see {@link ObjectStore#open(String, Map, StorageOptionsProvider,
         * Duration, Session)}.
         *
         * @return the open store
         * @throws IllegalStateException if the session is closed
         * @throws StorageException as {@link ObjectStore#open(String, Map, StorageOptionsProvider,
         *     Duration, Session)}
         */
        public ObjectStore open() throws StorageException {
            return ObjectStore.open(uri, options, provider, leadTime, session);
        }

        @Override
        public String toString() {
            return "ObjectStore.Builder{uri="
                    + Redaction.redactUri(uri)
                    + ", options="
                    + Redaction.redact(options)
                    + ", provider="
                    + (provider == null ? "none" : provider.getClass().getName())
                    + ", leadTime="
                    + leadTime
                    + ", session="
                    + session
                    + "}";
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
        long h = handle.acquire();
        try {
            // One array at the size the answer announces, filled chunk by chunk (one copy).
            return nonNull(NativeBridge.getAll(h, path), "get");
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
     * @throws StorageException for other failures, including a range that starts past the end of
     *     the object
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
        long h = handle.acquire();
        try {
            return nonNull(NativeBridge.getRange(h, path, start, endExclusive), "getRange");
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
        long h = handle.acquire();
        try {
            NativeBridge.put(h, path, data);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
    public ObjectMeta head(String path) throws StorageException {
        Objects.requireNonNull(path, "path");
        long h = handle.acquire();
        try {
            return ObjectMeta.fromNative(NativeBridge.head(h, path), 0);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
        String[] flat;
        long h = handle.acquire();
        try {
            flat = nonNull(NativeBridge.list(h, prefix), "list");
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
        if (flat.length % ObjectMeta.NATIVE_FIELDS != 0) {
            throw new IllegalStateException(
                    "native library returned a malformed listing of " + flat.length + " strings");
        }
        List<ObjectMeta> out = new ArrayList<>(flat.length / ObjectMeta.NATIVE_FIELDS);
        for (int i = 0; i < flat.length; i += ObjectMeta.NATIVE_FIELDS) {
            out.add(ObjectMeta.fromNative(flat, i));
        }
        return Collections.unmodifiableList(out);
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
        long h = handle.acquire();
        try {
            NativeBridge.delete(h, path);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
        long h = handle.acquire();
        try {
            return RefreshStats.fromNative(NativeBridge.refreshStats(h));
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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

    // ---------------------------------------------------------------------------------------
    // Streams, vectored reads, listings as streams, conditional and server-side operations
    // (issue 12). Every request is signed natively with the credential current when it is sent.

    /**
     * Opens a seekable stream over one object, with {@link ReadOptions#defaults()}: sends one HEAD
     * for the length and ETag.
     *
     * @param path the object path, relative to the store's prefix
     * @return the stream (close it)
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException as {@link #head(String)}
     */
    public SeekableObjectInputStream openInput(String path) throws StorageException {
        return openInput(path, ReadOptions.defaults());
    }

    /**
     * Opens a seekable stream over one object; see {@link SeekableObjectInputStream}.
     *
     * @param path the object path, relative to the store's prefix
     * @param options block size, ETag pinning, a length already known (then no HEAD is sent)
     * @return the stream (close it)
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if the store is closed
     * @throws ObjectNotFoundException if the object does not exist (HEAD)
     * @throws StorageException as {@link #head(String)}
     */
    public SeekableObjectInputStream openInput(String path, ReadOptions options)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        long length = options.knownLength();
        String eTag = options.knownETag();
        if (length < 0) {
            ObjectMeta meta = head(path);
            length = meta.size();
            eTag = meta.eTag();
        }
        return new SeekableObjectInputStream(this, path, length, eTag, options);
    }

    /**
     * Opens a stream that writes one object with {@link WriteOptions#defaults()}.
     *
     * @param path the object path, relative to the store's prefix
     * @return the stream; the object is visible once {@link MultipartOutputStream#close()} returns
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws StorageException if the native writer cannot be created
     */
    public MultipartOutputStream openOutput(String path) throws StorageException {
        return openOutput(path, WriteOptions.defaults());
    }

    /**
     * Opens a stream that writes one object; see {@link MultipartOutputStream}. The stream keeps
     * the store's connection and credentials until it is closed or aborted, even if the store is
     * closed first.
     *
     * @param path the object path, relative to the store's prefix
     * @param options part size, concurrency, create-only / if-match
     * @return the stream; the object is visible once {@link MultipartOutputStream#close()} returns
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if the store is closed
     * @throws InvalidOptionsException naming {@code part_size} for a part size the store refuses
     *     (S3: below 5 MiB or above 5 GiB), or naming the path when it is not a valid object path
     * @throws StorageException for other failures
     */
    public MultipartOutputStream openOutput(String path, WriteOptions options)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        long h = handle.acquire();
        long w;
        try {
            w =
                    NativeBridge.writerOpen(
                            h,
                            path,
                            options.partSize(),
                            options.maxConcurrency(),
                            options.mode(),
                            options.ifMatch());
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
        return new MultipartOutputStream(path, w);
    }

    /**
     * Reads a whole object into {@code dst}, from its position; the position advances by the
     * object's size. A direct buffer is filled natively (no intermediate Java array); a heap buffer
     * through its array. One copy from the network buffer in both cases.
     *
     * @param path the object path, relative to the store's prefix
     * @param dst the destination, with at least the object's size remaining
     * @return the object's size in bytes
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws InvalidOptionsException if the object is larger than {@code dst.remaining()} (nothing
     *     is copied)
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException as {@link #get(String)}
     */
    public long get(String path, java.nio.ByteBuffer dst) throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("the destination ByteBuffer is read-only");
        }
        long size;
        long h = handle.acquire();
        try {
            if (dst.isDirect()) {
                size = NativeBridge.getIntoDirect(h, path, dst, dst.position(), dst.remaining());
            } else if (dst.hasArray()) {
                size =
                        NativeBridge.getInto(
                                h,
                                path,
                                dst.array(),
                                dst.arrayOffset() + dst.position(),
                                dst.remaining());
            } else {
                throw new IllegalArgumentException(
                        "the destination ByteBuffer is neither direct nor array-backed");
            }
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
        dst.position(dst.position() + (int) size);
        return size;
    }

    /**
     * Reads several ranges of one object; ranges close to each other are fetched with one request.
     *
     * @param path the object path, relative to the store's prefix
     * @param ranges the ranges; each must lie within the object
     * @return one array per range, in the order given
     * @throws NullPointerException if an argument or a range is null
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException as {@link #getRange(String, long, long)}, including a range past
     *     the end of the object
     */
    public List<byte[]> getRanges(String path, List<ByteRange> ranges) throws StorageException {
        Objects.requireNonNull(ranges, "ranges");
        long[][] flat = new long[ranges.size()][];
        for (int i = 0; i < flat.length; i++) {
            ByteRange r = Objects.requireNonNull(ranges.get(i), "range");
            flat[i] = new long[] {r.start(), r.endExclusive()};
        }
        return List.of(getRanges(path, flat));
    }

    /**
     * Reads several ranges of one object given as {@code {start, endExclusive}} pairs; see {@link
     * #getRanges(String, List)}.
     *
     * @param path the object path, relative to the store's prefix
     * @param ranges {@code ranges[i] = {start, endExclusive}}
     * @return one array per range, in order
     * @throws IllegalArgumentException if a pair is not two longs with {@code 0 <= start < end}
     * @throws StorageException as {@link #getRanges(String, List)}
     */
    public byte[][] getRanges(String path, long[][] ranges) throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(ranges, "ranges");
        long[] starts = new long[ranges.length];
        long[] ends = new long[ranges.length];
        for (int i = 0; i < ranges.length; i++) {
            long[] r = ranges[i];
            if (r == null || r.length != 2) {
                throw new IllegalArgumentException(
                        "range " + i + " must be {start, endExclusive}");
            }
            new ByteRange(r[0], r[1]); // validates
            starts[i] = r[0];
            ends[i] = r[1];
        }
        if (ranges.length == 0) {
            return new byte[0][];
        }
        long h = handle.acquire();
        try {
            return nonNull(NativeBridge.getRanges(h, path, starts, ends), "getRanges");
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Lists every object under a prefix lazily, page by page; see {@link ObjectListing}. Close the
     * stream when stopping early (try-with-resources).
     *
     * @param prefix a path prefix (matched at {@code /} boundaries), or {@code null} for everything
     * @return a lazy stream; closing it releases the native listing
     * @throws IllegalStateException if the store is closed
     * @throws StorageException if the listing cannot be created; failures of later pages are
     *     thrown by the stream as {@link UncheckedStorageException}
     */
    public java.util.stream.Stream<ObjectMeta> listStream(String prefix) throws StorageException {
        return listIterator(prefix, 0).stream();
    }

    /**
     * Lists every object under a prefix lazily, {@code pageSize} objects per native call.
     *
     * @param prefix a path prefix (matched at {@code /} boundaries), or {@code null} for everything
     * @param pageSize objects per page, or {@code 0} for the default (1000)
     * @return the listing (close it when stopping early)
     * @throws IllegalArgumentException if {@code pageSize} is negative
     * @throws IllegalStateException if the store is closed
     * @throws StorageException if the listing cannot be created
     */
    public ObjectListing listIterator(String prefix, int pageSize) throws StorageException {
        if (pageSize < 0) {
            throw new IllegalArgumentException("pageSize must not be negative: " + pageSize);
        }
        long h = handle.acquire();
        try {
            return new ObjectListing(NativeBridge.listOpen(h, prefix), pageSize);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Lists one level under a prefix with the {@code /} delimiter: the objects directly under it
     * and its "directories".
     *
     * @param prefix a path prefix, or {@code null} for the store's root
     * @return objects and common prefixes
     * @throws IllegalStateException if the store is closed
     * @throws StorageException as {@link #list(String)}
     */
    public ListResult listWithDelimiter(String prefix) throws StorageException {
        String[][] r;
        long h = handle.acquire();
        try {
            r = nonNull(NativeBridge.listWithDelimiter(h, prefix), "listWithDelimiter");
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
        if (r.length != 2 || r[0].length % ObjectMeta.NATIVE_FIELDS != 0) {
            throw new IllegalStateException("native library returned a malformed listing");
        }
        List<ObjectMeta> objects = new ArrayList<>(r[0].length / ObjectMeta.NATIVE_FIELDS);
        for (int i = 0; i < r[0].length; i += ObjectMeta.NATIVE_FIELDS) {
            objects.add(ObjectMeta.fromNative(r[0], i));
        }
        return new ListResult(objects, List.of(r[1]));
    }

    /**
     * Writes an object only if none exists at the path (one atomic conditional PUT).
     *
     * @param path the object path, relative to the store's prefix
     * @param data the bytes (copied before the call returns)
     * @return the new object's ETag and version
     * @throws ObjectAlreadyExistsException if an object exists at the path
     * @throws StorageException as {@link #put(String, byte[])}
     */
    public WriteResult putIfAbsent(String path, byte[] data) throws StorageException {
        return putIf(path, data, WriteOptions.MODE_CREATE, null);
    }

    /**
     * Replaces an object only if its ETag is {@code eTag} (one atomic conditional PUT).
     *
     * @param path the object path, relative to the store's prefix
     * @param data the bytes (copied before the call returns)
     * @param eTag the expected ETag, exactly as {@link ObjectMeta#eTag()} gives it
     * @return the new object's ETag and version
     * @throws NullPointerException if an argument is null
     * @throws PreconditionFailedException if the object's ETag differs
     * @throws ObjectNotFoundException if the object does not exist (some stores report this as
     *     {@link PreconditionFailedException})
     * @throws StorageException as {@link #put(String, byte[])}
     */
    public WriteResult putIfMatch(String path, byte[] data, String eTag) throws StorageException {
        Objects.requireNonNull(eTag, "eTag");
        return putIf(path, data, WriteOptions.MODE_IF_MATCH, eTag);
    }

    /**
     * Copies an object server-side, replacing any object at {@code to}.
     *
     * @param from the source path
     * @param to the destination path
     * @throws ObjectNotFoundException if {@code from} does not exist
     * @throws StorageException as {@link #put(String, byte[])}
     */
    public void copy(String from, String to) throws StorageException {
        copyOrRename(from, to, false, false);
    }

    /**
     * Copies an object server-side unless an object exists at {@code to}. On S3 the store must be
     * opened with {@code aws_copy_if_not_exists} (e.g. {@code multipart}).
     *
     * @param from the source path
     * @param to the destination path
     * @throws ObjectAlreadyExistsException if an object exists at {@code to}
     * @throws InvalidOptionsException on S3 without {@code aws_copy_if_not_exists}
     * @throws StorageException as {@link #copy(String, String)}
     */
    public void copyIfNotExists(String from, String to) throws StorageException {
        copyOrRename(from, to, true, false);
    }

    /**
     * Moves an object (S3 has no rename: a server-side copy, then a delete of {@code from}; not
     * atomic).
     *
     * @param from the source path
     * @param to the destination path
     * @throws ObjectNotFoundException if {@code from} does not exist
     * @throws StorageException as {@link #copy(String, String)}
     */
    public void rename(String from, String to) throws StorageException {
        copyOrRename(from, to, false, true);
    }

    /**
     * Moves an object unless an object exists at {@code to}; see {@link #copyIfNotExists}.
     *
     * @param from the source path
     * @param to the destination path
     * @throws ObjectAlreadyExistsException if an object exists at {@code to}
     * @throws StorageException as {@link #copyIfNotExists(String, String)}
     */
    public void renameIfNotExists(String from, String to) throws StorageException {
        copyOrRename(from, to, true, true);
    }

    /** For the stream classes: acquires the native handle (pair with {@link #releaseHandle}). */
    long acquireHandle() {
        return handle.acquire();
    }

    void releaseHandle() {
        handle.release();
    }

    private WriteResult putIf(String path, byte[] data, int mode, String eTag)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
        long h = handle.acquire();
        try {
            return WriteResult.fromNative(
                    NativeBridge.putIf(h, path, data, 0, data.length, mode, eTag));
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    private void copyOrRename(String from, String to, boolean ifNotExists, boolean rename)
            throws StorageException {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        long h = handle.acquire();
        try {
            if (rename) {
                NativeBridge.renameObject(h, from, to, ifNotExists);
            } else {
                NativeBridge.copyObject(h, from, to, ifNotExists);
            }
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Internals

    private static <T> T nonNull(T value, String operation) {
        if (value == null) {
            throw new IllegalStateException("native " + operation + " returned null");
        }
        return value;
    }

    /**
     * {@link NativeBridge#open}, or for a {@link CatalogSpecProvider} {@link
     * NativeBridge#openWithCatalog}: the native side then builds the catalog provider itself, so
     * refreshes make no upcall into the JVM.
     */
    private static long openNative(
            String uri,
            String[] keys,
            String[] values,
            StorageOptionsProvider provider,
            String providerId,
            long leadMillis,
            long sessionHandle)
            throws StorageException {
        if (provider instanceof CatalogSpecProvider) {
            CatalogSpecProvider spec = (CatalogSpecProvider) provider;
            String[][] flat = spec.nativeSpec();
            return NativeBridge.openWithCatalog(
                    uri, keys, values, spec.catalogKind(), flat[0], flat[1], leadMillis, sessionHandle);
        }
        return NativeBridge.open(uri, keys, values, provider, providerId, leadMillis, sessionHandle);
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

    static long leadTimeMillis(Duration leadTime) {
        if (leadTime == null) {
            return -1L;
        }
        if (leadTime.isNegative()) {
            throw new IllegalArgumentException("leadTime must not be negative: " + leadTime);
        }
        try {
            return leadTime.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * The provider id to pass to the native side: {@code null} when the provider keeps the default
     * {@link StorageOptionsProvider#providerId()} (the native side then keys by object identity),
     * else the provider's own id.
     */
    static String nativeProviderId(StorageOptionsProvider provider) throws InvalidOptionsException {
        Method method;
        try {
            method = provider.getClass().getMethod("providerId");
        } catch (NoSuchMethodException e) {
            return null; // unreachable: the interface declares it
        }
        if (method.getDeclaringClass() == StorageOptionsProvider.class) {
            return null;
        }
        String id;
        try {
            id = provider.providerId();
        } catch (Exception | AssertionError e) {
            throw new InvalidOptionsException(
                    "providerId() of provider " + provider.getClass().getName() + " threw " + e, e);
        }
        if (id == null || id.isBlank()) {
            throw new InvalidOptionsException(
                    "providerId() of provider "
                            + provider.getClass().getName()
                            + " returned "
                            + (id == null ? "null" : "a blank string")
                            + "; return a stable non-blank id or do not override it");
        }
        return id;
    }
}
