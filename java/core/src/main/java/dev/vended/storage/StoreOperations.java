package dev.vended.storage;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The streaming, listing-as-stream, conditional and server-side operations of {@link ObjectStore}
 * (reads into the caller's memory and vectored reads: {@link ReadOperations}): kept apart so neither file grows past a readable size. Every method here is public
 * API of {@code ObjectStore}, its only subclass; this class is public so that the documentation of
 * those methods is linkable, and cannot be subclassed outside this package (its constructor is
 * package-private).
 */
public abstract class StoreOperations extends ReadOperations {

    /** For {@link ObjectStore} only. */
    StoreOperations() {}

    /**
     * Reads an object's metadata; see {@link ObjectStore#head(String)}.
     *
     * @param path the object path, relative to the store's prefix
     * @return the metadata
     * @throws StorageException as {@link ObjectStore#head(String)}
     */
    public abstract ObjectMeta head(String path) throws StorageException;

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
     * @throws StorageException as {@link ObjectStore#head(String)}
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
     * @throws StorageException as {@link ObjectStore#head(String)}
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
        return new SeekableObjectInputStream((ObjectStore) this, path, length, eTag, options);
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
        long h = acquireHandle();
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
            releaseHandle();
            Reference.reachabilityFence(this);
        }
        return new MultipartOutputStream(path, w);
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
        long h = acquireHandle();
        try {
            return new ObjectListing(NativeBridge.listOpen(h, prefix), pageSize);
        } finally {
            releaseHandle();
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
     * @throws StorageException as {@link ObjectStore#list(String)}
     */
    public ListResult listWithDelimiter(String prefix) throws StorageException {
        String[][] r;
        long h = acquireHandle();
        try {
            r = nonNull(NativeBridge.listWithDelimiter(h, prefix), "listWithDelimiter");
        } finally {
            releaseHandle();
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
     * @throws StorageException as {@link ObjectStore#put(String, byte[])}
     */
    public WriteResult putIfAbsent(String path, byte[] data) throws StorageException {
        return putIf(path, data, WriteOptions.MODE_CREATE, null);
    }

    /**
     * Writes a table format's commit file (a Delta log entry, for example): one atomic create-only
     * PUT carrying a per-write id in the object's user metadata, so that of racing writers exactly
     * one succeeds. Unlike {@link #putIfAbsent}, a retried attempt whose first attempt was stored
     * (its answer lost) succeeds: a refused attempt reads the object back (one GET) and takes it as
     * its own when it carries this write's id (or, on an endpoint that drops user metadata, no id
     * and the same bytes). Before the store's first commit the endpoint is checked, once per store,
     * to honour create-only writes: a probe object next to {@code path} is written twice with the
     * condition and deleted.
     *
     * @param path the commit's path, relative to the store's prefix
     * @param data the bytes (copied before the call returns)
     * @return the commit's ETag and version, and whether a retry was recognised as this write's
     * @throws ObjectAlreadyExistsException if another writer's object is at the path
     * @throws StorageException of kind {@code IO} if the endpoint ignores create-only conditions
     *     (its message names the endpoint and the safe alternatives; nothing was written), or as
     *     {@link ObjectStore#put(String, byte[])}
     */
    public CommitResult putCommit(String path, byte[] data) throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
        long h = acquireHandle();
        try {
            return CommitResult.fromNative(NativeBridge.putCommit(h, path, data));
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Replaces an object only if its ETag is {@code eTag} (one atomic conditional PUT).
     *
     * @param path the object path, relative to the store's prefix
     * @param data the bytes (copied before the call returns)
     * @param eTag the expected ETag, exactly as {@link ObjectMeta#eTag()} gives it
     * @return the new object's ETag and version
     * @throws NullPointerException if an argument is null
     * @throws PreconditionFailedException if the object's ETag differs or the object does not
     *     exist (the same exception whether the server answers 412 or 404; S3-compatible servers
     *     differ)
     * @throws StorageException as {@link ObjectStore#put(String, byte[])}
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
     * @throws StorageException as {@link ObjectStore#put(String, byte[])}
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

    private WriteResult putIf(String path, byte[] data, int mode, String eTag)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
        long h = acquireHandle();
        try {
            return WriteResult.fromNative(
                    NativeBridge.putIf(h, path, data, 0, data.length, mode, eTag));
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
    }

    private void copyOrRename(String from, String to, boolean ifNotExists, boolean rename)
            throws StorageException {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        long h = acquireHandle();
        try {
            if (rename) {
                NativeBridge.renameObject(h, from, to, ifNotExists);
            } else {
                NativeBridge.copyObject(h, from, to, ifNotExists);
            }
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
    }
}
