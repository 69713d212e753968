package dev.vended.storage;

import java.lang.ref.Reference;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Deferred commits on one {@link ObjectStore}: write objects whose multipart uploads are completed
 * later ({@link #openPendingOutput}), complete or abort them ({@link #commit}, {@link #abort}),
 * possibly in another JVM with another credential, and abort every upload recorded under a prefix
 * ({@link #abortUploadsUnder}). What an output committer needs to publish files without copying
 * them.
 *
 * <p>Stores: S3 and GCS (nothing visible until the commit); Azure (blocks staged, committed by the
 * commit; an abort removes nothing, Azure discards uncommitted blocks 7 days after staging). Local
 * files and memory stores have no upload ids: {@link #openPendingOutput} throws {@link
 * StorageException} ("not supported").
 *
 * <p>Finding uploads again: the library cannot list a bucket's multipart uploads, so {@link
 * #openPendingOutput(String, String, Consumer)} writes a <em>record</em> (the upload's pending
 * commit without parts) when the upload starts; {@link #abortUploadsUnder} aborts every recorded
 * upload. Give the bucket a lifecycle rule for uploads of processes that died before writing a
 * record.
 */
public final class PendingCommits {
    private final ObjectStore store;

    private PendingCommits(ObjectStore store) {
        this.store = store;
    }

    /**
     * Deferred commits on {@code store} (which stays owned by the caller).
     *
     * @param store the store
     * @return the operations
     */
    public static PendingCommits of(ObjectStore store) {
        return new PendingCommits(Objects.requireNonNull(store, "store"));
    }

    /**
     * Opens a pending output without a record; see {@link #openPendingOutput(String, String,
     * Consumer)}.
     *
     * @param path the object path, relative to the store's prefix
     * @return the stream
     * @throws StorageException as the full form
     */
    public PendingOutputStream openPendingOutput(String path) throws StorageException {
        return openPendingOutput(path, null, null);
    }

    /**
     * Starts a multipart upload for {@code path} (one request) and returns a stream whose {@code
     * close()} yields a {@link PendingCommit} instead of completing it.
     *
     * @param path the object path, relative to the store's prefix
     * @param record where to write the upload's record first (relative to the store's prefix), so
     *     that {@link #abortUploadsUnder} finds it; {@code null} for none
     * @param onClose called with the pending commit when the stream closes; may be null
     * @return the stream
     * @throws NullPointerException if {@code path} is null
     * @throws IllegalStateException if the store is closed
     * @throws InvalidOptionsException naming the path when it is not a valid object path
     * @throws CredentialsException if the endpoint refuses to start the upload or write the record
     * @throws StorageException for other failures, e.g. a store without upload ids
     */
    public PendingOutputStream openPendingOutput(
            String path, String record, Consumer<PendingCommit> onClose) throws StorageException {
        return openPendingOutput(path, record, onClose, WriteOptions.defaults());
    }

    /**
     * {@link #openPendingOutput(String, String, Consumer)} with the part size and the parts
     * uploading at once of {@code options} (its write mode is not used: the commit decides). The
     * stream holds at most {@code partSize * (maxConcurrency + 1)} bytes of data.
     *
     * @param path the object path, relative to the store's prefix
     * @param record as in the three-argument form; {@code null} for none
     * @param onClose called with the pending commit when the stream closes; may be null
     * @param options part size and concurrency
     * @return the stream
     * @throws NullPointerException if {@code path} or {@code options} is null
     * @throws InvalidOptionsException naming {@code part_size} for a part size outside the store's
     *     limits (S3: 5 MiB to 5 GiB)
     * @throws StorageException as the three-argument form
     */
    public PendingOutputStream openPendingOutput(
            String path, String record, Consumer<PendingCommit> onClose, WriteOptions options)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        long h = store.acquireHandle();
        long w;
        try {
            w = PendingNative.open(h, path, options.partSize(), options.maxConcurrency(), record);
        } finally {
            store.releaseHandle();
            Reference.reachabilityFence(store);
        }
        return new PendingOutputStream(path, w, onClose);
    }

    /**
     * Completes the upload: the object becomes visible. Signed with this store's current
     * credential (refreshed as usual), whoever started the upload.
     *
     * @param pending the pending commit
     * @return the object's ETag and version
     * @throws NullPointerException if {@code pending} is null
     * @throws IllegalStateException if the store is closed
     * @throws InvalidOptionsException naming {@code pending_commit} when the upload belongs to
     *     another bucket or container
     * @throws ObjectNotFoundException when the store no longer knows the upload (aborted, or
     *     committed already)
     * @throws CredentialsException if the endpoint refuses the request even after a refresh
     * @throws StorageException for other failures
     */
    public WriteResult commit(PendingCommit pending) throws StorageException {
        Objects.requireNonNull(pending, "pending");
        long h = store.acquireHandle();
        try {
            return WriteResult.fromNative(PendingNative.complete(h, pending.json()));
        } finally {
            store.releaseHandle();
            Reference.reachabilityFence(store);
        }
    }

    /**
     * Aborts the upload (its parts are deleted). An upload the store no longer knows counts as
     * aborted.
     *
     * @param pending the pending commit
     * @throws NullPointerException if {@code pending} is null
     * @throws IllegalStateException if the store is closed
     * @throws InvalidOptionsException as {@link #commit}
     * @throws CredentialsException if the endpoint refuses the request even after a refresh
     * @throws StorageException for other failures
     */
    public void abort(PendingCommit pending) throws StorageException {
        Objects.requireNonNull(pending, "pending");
        long h = store.acquireHandle();
        try {
            PendingNative.abort(h, pending.json());
        } finally {
            store.releaseHandle();
            Reference.reachabilityFence(store);
        }
    }

    /**
     * Aborts every upload recorded under {@code prefix} and deletes the records. Uploads committed
     * already are not touched.
     *
     * @param prefix a path prefix relative to the store's prefix (every object under it must be a
     *     record)
     * @return how many records were handled
     * @throws NullPointerException if {@code prefix} is null
     * @throws IllegalStateException if the store is closed
     * @throws InvalidOptionsException naming {@code pending_commit} for an object that is not a
     *     record (the other records are handled all the same)
     * @throws StorageException for the first abort, delete or listing that failed
     */
    public long abortUploadsUnder(String prefix) throws StorageException {
        Objects.requireNonNull(prefix, "prefix");
        long h = store.acquireHandle();
        try {
            return PendingNative.abortRecorded(h, prefix);
        } finally {
            store.releaseHandle();
            Reference.reachabilityFence(store);
        }
    }

    @Override
    public String toString() {
        return "PendingCommits{" + store + "}";
    }
}
