package dev.vended.storage;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.Objects;

/**
 * Caches shared by the stores a process opens with it: object metadata ({@link ObjectStore#head})
 * and small byte ranges ({@link ObjectStore#getRange}). Create one per process (or per job) and
 * pass it when opening stores:
 *
 * <pre>{@code
 * try (Session session = Session.builder().ttl(Duration.ofMinutes(1)).build()) {
 *     try (ObjectStore store = ObjectStore.builder("s3://bucket/tables/t1/")
 *             .options(options).provider(provider).session(session).open()) {
 *         ObjectMeta meta = store.head("data/0.lance");      // cached
 *         byte[] footer = store.getRange("data/0.lance", meta.size() - 64, meta.size()); // cached
 *     }
 * }
 * }</pre>
 *
 * <h2>What is cached</h2>
 *
 * <ul>
 *   <li>the result of {@link ObjectStore#head} (at most {@link Builder#metadataCapacity} entries);
 *   <li>the result of {@link ObjectStore#getRange} when the range is at most {@link
 *       Builder#maxRangeBytes} long (at most {@link Builder#rangeCapacityBytes} bytes in total).
 * </ul>
 *
 * {@link ObjectStore#get}, {@link ObjectStore#list} and longer ranges always go to the store. An
 * entry lives for the session's {@link Builder#ttl time to live} after it was written. Entries hold
 * portable data only (bytes and metadata), never credentials or a native store, so a credential
 * rotation can never leave a cached reader signing with old credentials.
 *
 * <h2>Cache keys</h2>
 *
 * An entry is keyed by the identity of the store that read it (scheme, bucket, the non-secret
 * options and the <b>credential source</b>: the provider object, or its overridden {@link
 * StorageOptionsProvider#providerId()}, or a keyed fingerprint of static credentials) plus the
 * object's full path (and the range). So a table read through one provider never answers another
 * table's reads, and a table re-opened with a new provider object (default {@code providerId()})
 * starts with cold entries; one re-opened with a provider of the same {@code providerId()} sees the
 * entries cached before. Keys never contain secrets.
 *
 * <p>A {@link ObjectStore#put} or {@link ObjectStore#delete} through a store drops that object's
 * entries of that store identity. Changes made elsewhere (another process, another credential
 * source) are seen once the entries expire or after {@link #invalidate(String)}.
 *
 * <h2>Threads and closing</h2>
 *
 * A session is thread-safe. {@link #close()} is idempotent; afterwards {@link #invalidate}, {@link
 * #stats()} and opening a store with the session throw {@link IllegalStateException}. Stores
 * already opened with it keep using its caches until they are closed; the caches' memory is
 * released once the session and all those stores are closed. A session that becomes unreachable
 * without being closed is released by a {@link Cleaner}.
 */
public final class Session implements AutoCloseable {

    /** Default most metadata entries: 100,000. */
    public static final long DEFAULT_METADATA_CAPACITY = 100_000L;

    /** Default most bytes of cached ranges: 64 MiB. */
    public static final long DEFAULT_RANGE_CAPACITY_BYTES = 64L << 20;

    /** Default longest cached range: 1 MiB. */
    public static final long DEFAULT_MAX_RANGE_BYTES = 1L << 20;

    /** Default time to live of an entry: 5 minutes. */
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(5);

    /** Longest time to live accepted: 100 years. */
    public static final Duration MAX_TTL = Duration.ofDays(36_500);

    private final NativeHandle handle;
    private final Cleaner.Cleanable cleanable;
    private final String description;

    private Session(long nativeHandle, String description) {
        this.handle =
                new NativeHandle(
                        nativeHandle,
                        "Session is closed: " + description,
                        NativeBridge::sessionClose);
        this.description = description;
        this.cleanable = ObjectStore.CLEANER.register(this, handle);
    }

    /**
     * Creates a session with the default settings (100,000 metadata entries, 64 MiB of ranges of at
     * most 1 MiB each, 5 minutes time to live).
     *
     * @return the new session
     * @throws UnsatisfiedLinkError if the native library cannot be loaded
     * @throws StorageException if the native side cannot create it
     */
    public static Session create() throws StorageException {
        return builder().build();
    }

    /**
     * Starts building a session.
     *
     * @return a builder with the default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Drops every entry whose object URI is {@code uriPrefix} or lies under it at a path-segment
     * boundary, whatever store (credential source) cached it. URIs are the objects' full URIs,
     * {@code scheme://bucket/path}, not paths relative to a store's prefix: {@code
     * invalidate("s3://bucket/tables/t1")} (or {@code ".../t1/"}) drops {@code
     * s3://bucket/tables/t1} and everything under {@code s3://bucket/tables/t1/}, but not {@code
     * s3://bucket/tables/t10/...}. Evictions counted by {@link #stats()} do not include these.
     *
     * @param uriPrefix the URI prefix, e.g. {@code s3://bucket/tables/t1}
     * @throws NullPointerException if {@code uriPrefix} is null
     * @throws IllegalStateException if this session is closed
     * @throws InvalidOptionsException if {@code uriPrefix} is empty
     * @throws StorageException if the native side fails
     */
    public void invalidate(String uriPrefix) throws StorageException {
        Objects.requireNonNull(uriPrefix, "uriPrefix");
        if (uriPrefix.isEmpty()) {
            throw new InvalidOptionsException(
                    "an invalidation prefix must not be empty; close the session to drop"
                            + " everything");
        }
        long h = handle.acquire();
        try {
            NativeBridge.sessionInvalidate(h, uriPrefix);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The caches' counters.
     *
     * @return a snapshot of hits, misses, evictions and entries
     * @throws IllegalStateException if this session is closed
     * @throws StorageException if the native side cannot report them
     */
    public SessionStats stats() throws StorageException {
        long h = handle.acquire();
        try {
            return SessionStats.fromNative(NativeBridge.sessionStats(h));
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
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
     * Closes this session. Idempotent. Stores already opened with it keep using its caches until
     * they are closed; later calls on the session, and opening stores with it, throw {@link
     * IllegalStateException}.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "Session{" + description + ", closed=" + isClosed() + "}";
    }

    /** Registers a call in flight (for {@link ObjectStore#open}); pair with {@link #release()}. */
    long acquire() {
        return handle.acquire();
    }

    void release() {
        handle.release();
        Reference.reachabilityFence(this);
    }

    /** Builds a {@link Session}; not thread-safe. */
    public static final class Builder {
        private long metadataCapacity = DEFAULT_METADATA_CAPACITY;
        private long rangeCapacityBytes = DEFAULT_RANGE_CAPACITY_BYTES;
        private long maxRangeBytes = DEFAULT_MAX_RANGE_BYTES;
        private Duration ttl = DEFAULT_TTL;

        private Builder() {}

        /**
         * Sets the most metadata entries kept.
         *
         * @param entries a positive number of entries
         * @return this builder
         * @throws IllegalArgumentException if {@code entries <= 0}
         */
        public Builder metadataCapacity(long entries) {
            this.metadataCapacity = positive(entries, "metadataCapacity");
            return this;
        }

        /**
         * Sets the most bytes of cached ranges kept (the sum of their lengths).
         *
         * @param bytes a positive number of bytes
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes <= 0}
         */
        public Builder rangeCapacityBytes(long bytes) {
            this.rangeCapacityBytes = positive(bytes, "rangeCapacityBytes");
            return this;
        }

        /**
         * Sets the longest range cached; longer {@link ObjectStore#getRange} calls always go to the
         * store.
         *
         * @param bytes a positive number of bytes
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes <= 0}
         */
        public Builder maxRangeBytes(long bytes) {
            this.maxRangeBytes = positive(bytes, "maxRangeBytes");
            return this;
        }

        /**
         * Sets how long an entry lives after it was written.
         *
         * @param ttl at least one millisecond and at most {@link #MAX_TTL}
         * @return this builder
         * @throws NullPointerException if {@code ttl} is null
         * @throws IllegalArgumentException if {@code ttl} is shorter than 1 ms or longer than
         *     {@link #MAX_TTL}
         */
        public Builder ttl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofMillis(1)) < 0 || ttl.compareTo(MAX_TTL) > 0) {
                throw new IllegalArgumentException(
                        "ttl must be between 1 ms and " + MAX_TTL + ", got " + ttl);
            }
            this.ttl = ttl;
            return this;
        }

        /**
         * Creates the session.
         *
         * @return the new session
         * @throws UnsatisfiedLinkError if the native library cannot be loaded
         * @throws StorageException if the native side cannot create it
         */
        public Session build() throws StorageException {
            NativeLoader.load();
            long h =
                    NativeBridge.sessionCreate(
                            metadataCapacity, rangeCapacityBytes, maxRangeBytes, ttl.toMillis());
            if (h == 0L) {
                throw new IllegalStateException("native library returned no session handle");
            }
            return new Session(h, describe());
        }

        private String describe() {
            return "metadataCapacity="
                    + metadataCapacity
                    + ", rangeCapacityBytes="
                    + rangeCapacityBytes
                    + ", maxRangeBytes="
                    + maxRangeBytes
                    + ", ttl="
                    + ttl;
        }

        @Override
        public String toString() {
            return "Session.Builder{" + describe() + "}";
        }

        private static long positive(long value, String name) {
            if (value <= 0) {
                throw new IllegalArgumentException(name + " must be positive, got " + value);
            }
            return value;
        }
    }
}
