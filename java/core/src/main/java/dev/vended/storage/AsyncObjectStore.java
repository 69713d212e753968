package dev.vended.storage;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.function.IntFunction;

/**
 * Asynchronous operations on an {@link ObjectStore}, returning {@link CompletableFuture}s completed
 * by the native runtime.
 *
 * <p><b>How it works.</b> A call starts its request on the native (tokio) runtime and returns at
 * once: no Java thread waits for it. When the request ends, a native runtime thread makes one short
 * call into Java that only submits the completion to the <em>callback executor</em> (default {@link
 * ForkJoinPool#commonPool()}), then goes back to its I/O. On the callback executor the result is
 * copied into Java objects (or the exception built) and the future completed, so dependent stages
 * attached before completion ({@code thenApply}, {@code whenComplete}, ...) run there, never on a
 * native thread. (As for any {@code CompletableFuture}, a stage attached after completion runs on
 * the thread attaching it.) The callback executor's {@code execute} must not block; if it rejects
 * the completion (e.g. it was shut down) or runs it on the submitting thread, the completion runs on
 * {@link ForkJoinPool#commonPool()} instead. Each operation is the one the synchronous method uses,
 * with the same credential refresh and the same single retry with fresh credentials.
 *
 * <p><b>Bound.</b> At most {@link #maxInFlight()} calls (default {@value #DEFAULT_MAX_IN_FLIGHT})
 * are in flight at once per {@code AsyncObjectStore}, counted from the call until its future is
 * completed (or, when cancelled, until the native work has stopped). A call beyond the bound blocks
 * the calling thread until one finishes (back-pressure, interruptible: an interrupted caller gets a
 * future failed with {@link InterruptedException}, the interrupt flag set again).
 *
 * <p><b>Cancel.</b> {@code cancel} on a returned future completes it with {@link
 * java.util.concurrent.CancellationException} at once and stops the native task: its request is
 * abandoned (the connection is dropped, a response not yet received is never read) and its permit
 * comes back as soon as the native side has stopped. A request the server already received may
 * still take effect there (a PUT may be stored). Cancelling a dependent stage does not cancel the
 * call.
 *
 * <p><b>Errors.</b> The same exceptions as the corresponding {@link ObjectStore} method (the same
 * {@link StorageException} subclasses and {@link StorageException#kind()}, {@link
 * IllegalArgumentException}, {@link NullPointerException}, {@link IllegalStateException} for a
 * closed store), delivered as the future's exceptional completion, never thrown by the {@code
 * *Async} method itself.
 *
 * <p><b>Close.</b> {@link #close()} stops accepting calls (later calls, and calls still waiting at
 * the bound, return futures failed with {@link RejectedExecutionException}); calls in flight keep
 * running and complete their futures (cancel them to stop them). It does not close the store.
 * Closing the {@link ObjectStore} while calls are in flight is safe: each native task holds the
 * store until it ends; later calls fail with {@link IllegalStateException}.
 */
public final class AsyncObjectStore implements AutoCloseable {

    /** Calls in flight at once when no bound is given. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 64;

    private final ObjectStore store;
    private final Executor callbackExecutor;
    private final Semaphore permits;
    private final int maxInFlight;
    private volatile boolean closed;

    private AsyncObjectStore(ObjectStore store, Executor callbackExecutor, int maxInFlight) {
        this.store = Objects.requireNonNull(store, "store");
        this.callbackExecutor = Objects.requireNonNull(callbackExecutor, "callbackExecutor");
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1: " + maxInFlight);
        }
        this.maxInFlight = maxInFlight;
        this.permits = new Semaphore(maxInFlight);
    }

    /**
     * An async view of {@code store} with callbacks on {@link ForkJoinPool#commonPool()} and at
     * most {@value #DEFAULT_MAX_IN_FLIGHT} calls in flight.
     *
     * @param store the store (not closed by {@link #close()})
     * @return the async view
     */
    public static AsyncObjectStore of(ObjectStore store) {
        return new AsyncObjectStore(store, ForkJoinPool.commonPool(), DEFAULT_MAX_IN_FLIGHT);
    }

    /**
     * An async view of {@code store}.
     *
     * @param store the store (not closed by {@link #close()})
     * @param callbackExecutor where returned futures are completed (and so where dependent stages
     *     run); its {@code execute} must not block
     * @param maxInFlight calls in flight at once, at least 1
     * @return the async view
     * @throws IllegalArgumentException if {@code maxInFlight < 1}
     */
    public static AsyncObjectStore of(
            ObjectStore store, Executor callbackExecutor, int maxInFlight) {
        return new AsyncObjectStore(store, callbackExecutor, maxInFlight);
    }

    /**
     * The bound on calls in flight.
     *
     * @return calls
     */
    public int maxInFlight() {
        return maxInFlight;
    }

    /**
     * Calls currently in flight (started and not yet completed).
     *
     * @return calls
     */
    public int inFlight() {
        return maxInFlight - permits.availablePermits();
    }

    /**
     * The store the calls go to.
     *
     * @return the store
     */
    public ObjectStore store() {
        return store;
    }

    /**
     * {@link ObjectStore#get(String)}.
     *
     * @param path the object path
     * @return the object's bytes
     */
    public CompletableFuture<byte[]> getAsync(String path) {
        return call((h, s) -> AsyncNative.startGet(h, nonNull(path, "path"), s), r -> (byte[]) r);
    }

    /**
     * {@link ObjectStore#getRange(String, long, long)}.
     *
     * @param path the object path
     * @param start the first byte
     * @param endExclusive one past the last byte
     * @return the bytes
     */
    public CompletableFuture<byte[]> getRangeAsync(String path, long start, long endExclusive) {
        return call(
                (h, s) ->
                        AsyncNative.startGetRange(
                                h, nonNull(path, "path"), start, endExclusive, s),
                r -> (byte[]) r);
    }

    /**
     * {@link ObjectStore#getRanges(String, List)}: ranges close to each other are fetched with one
     * request.
     *
     * @param path the object path
     * @param ranges the ranges
     * @return one array per range, in order
     */
    public CompletableFuture<List<byte[]>> getRangesAsync(String path, List<ByteRange> ranges) {
        return getRanges(path, ranges, -1L, 1L);
    }

    /**
     * A vectored read with Hadoop's merge rule ({@code PositionedReadable.minSeekForVectorReads} /
     * {@code maxReadSizeForVectorReads}, as S3A applies them): ranges sorted by offset are fetched
     * with one ranged GET while the gap between them is below {@code minSeek} bytes and the merged
     * range stays at most {@code maxMerged} bytes; a longer range on its own is one GET, never
     * split. Up to 10 GETs run at once.
     *
     * @param path the object path
     * @param ranges the ranges (any order; none empty)
     * @param minSeek gaps of at least this many bytes are not fetched (0: only overlapping ranges
     *     share a GET)
     * @param maxMerged the largest merged GET, in bytes (at least 1)
     * @return one array per range, in the order of {@code ranges}
     * @throws IllegalArgumentException if {@code minSeek < 0} or {@code maxMerged < 1}
     */
    public CompletableFuture<List<byte[]>> getRangesAsync(
            String path, List<ByteRange> ranges, long minSeek, long maxMerged) {
        checkMerge(minSeek, maxMerged);
        return getRanges(path, ranges, minSeek, maxMerged);
    }

    /**
     * {@link #getRangesAsync(String, List, long, long)} into the caller's buffers: once every range
     * has been read, {@code allocate} is called on the thread that completes the future with each
     * range's length, in the order of {@code ranges}, and the range is copied from the network
     * buffers straight into the buffer it returned (heap or direct), at its position: one copy per
     * byte, no intermediate array. Each buffer is then flipped, as after {@code put}. Nothing is
     * allocated when the read fails or the future was cancelled first.
     *
     * @param path the object path
     * @param ranges the ranges (any order; none empty)
     * @param minSeek as {@link #getRangesAsync(String, List, long, long)}
     * @param maxMerged as {@link #getRangesAsync(String, List, long, long)}
     * @param allocate returns a writable buffer with at least the given number of bytes remaining
     * @return the buffers {@code allocate} returned, in the order of {@code ranges}; fails with
     *     {@link IllegalArgumentException} if a buffer is read-only or too small, or with what
     *     {@code allocate} threw
     * @throws IllegalArgumentException if {@code minSeek < 0} or {@code maxMerged < 1}
     * @throws NullPointerException if {@code allocate} is null
     */
    public CompletableFuture<List<ByteBuffer>> getRangesIntoAsync(
            String path,
            List<ByteRange> ranges,
            long minSeek,
            long maxMerged,
            IntFunction<ByteBuffer> allocate) {
        return getRangesIntoAsync(path, ranges, minSeek, maxMerged, null, allocate);
    }

    /**
     * {@link #getRangesIntoAsync(String, List, long, long, IntFunction)} pinned to one version of
     * the object: every GET carries {@code If-Match: ifMatch}, so ranges read after the object was
     * replaced fail instead of mixing versions (as a stream opened with {@link
     * ReadOptions#withPinnedETag} does). Without {@code ifMatch} the GETs must still agree on one
     * ETag among themselves.
     *
     * @param path the object path
     * @param ranges the ranges (any order; none empty)
     * @param minSeek as {@link #getRangesAsync(String, List, long, long)}
     * @param maxMerged as {@link #getRangesAsync(String, List, long, long)}
     * @param ifMatch the ETag exactly as {@link ObjectMeta#eTag()} gives it, or {@code null}
     * @param allocate as the method above
     * @return as the method above; fails with {@link PreconditionFailedException} if the object no
     *     longer has that ETag (or changed between the GETs)
     * @throws IllegalArgumentException as the method above
     */
    public CompletableFuture<List<ByteBuffer>> getRangesIntoAsync(
            String path,
            List<ByteRange> ranges,
            long minSeek,
            long maxMerged,
            String ifMatch,
            IntFunction<ByteBuffer> allocate) {
        checkMerge(minSeek, maxMerged);
        Objects.requireNonNull(allocate, "allocate");
        // Fixed now: the lengths that position the buffers at completion are the ones fetched,
        // whatever the caller does to its list meanwhile.
        List<ByteRange> fixed = ranges == null ? null : new ArrayList<>(ranges);
        return call(
                startRanges(path, fixed, minSeek, maxMerged, ifMatch),
                task -> {
                    List<ByteBuffer> buffers = new ArrayList<>();
                    AsyncNative.takeRangesInto(
                            task,
                            n -> {
                                ByteBuffer b = allocate.apply(n);
                                buffers.add(b);
                                return b;
                            });
                    for (int i = 0; i < buffers.size(); i++) {
                        ByteRange r = fixed.get(i);
                        ByteBuffer b = buffers.get(i);
                        b.position(b.position() + (int) (r.endExclusive() - r.start()));
                        b.flip();
                    }
                    return List.copyOf(buffers);
                },
                r -> castBuffers(r));
    }

    @SuppressWarnings("unchecked")
    private static List<ByteBuffer> castBuffers(Object raw) {
        return (List<ByteBuffer>) raw;
    }

    private static void checkMerge(long minSeek, long maxMerged) {
        if (minSeek < 0 || maxMerged < 1) {
            throw new IllegalArgumentException(
                    "minSeek must be >= 0 (was " + minSeek + ") and maxMerged >= 1 (was "
                            + maxMerged + ")");
        }
    }

    private CompletableFuture<List<byte[]>> getRanges(
            String path, List<ByteRange> ranges, long minSeek, long maxMerged) {
        return call(
                startRanges(path, ranges, minSeek, maxMerged, null), r -> List.of((byte[][]) r));
    }

    private static AsyncCall.Start startRanges(
            String path, List<ByteRange> ranges, long minSeek, long maxMerged, String ifMatch) {
        return (h, s) -> {
            Objects.requireNonNull(ranges, "ranges");
            long[] starts = new long[ranges.size()];
            long[] ends = new long[starts.length];
            for (int i = 0; i < starts.length; i++) {
                ByteRange r = Objects.requireNonNull(ranges.get(i), "range");
                starts[i] = r.start();
                ends[i] = r.endExclusive();
            }
            return AsyncNative.startGetRanges(
                    h, nonNull(path, "path"), starts, ends, minSeek, maxMerged, ifMatch, s);
        };
    }

    /**
     * {@link ObjectStore#put(String, byte[])}. {@code data} is copied before this method returns.
     *
     * @param path the object path
     * @param data the bytes
     * @return completes when the object is written
     */
    public CompletableFuture<Void> putAsync(String path, byte[] data) {
        return call(
                (h, s) ->
                        AsyncNative.startPut(
                                h, nonNull(path, "path"), nonNull(data, "data"), 0, null, s),
                r -> null);
    }

    /**
     * {@link ObjectStore#putIfAbsent(String, byte[])}. {@code data} is copied before this method
     * returns.
     *
     * @param path the object path
     * @param data the bytes
     * @return the write result; fails with {@link ObjectAlreadyExistsException} if present
     */
    public CompletableFuture<WriteResult> putIfAbsentAsync(String path, byte[] data) {
        return putIf(path, data, WriteOptions.MODE_CREATE, null);
    }

    /**
     * {@link ObjectStore#putIfMatch(String, byte[], String)}. {@code data} is copied before this
     * method returns.
     *
     * @param path the object path
     * @param data the bytes
     * @param eTag the ETag the object must have, as {@link ObjectMeta#eTag()} gives it
     * @return the write result; fails with {@link PreconditionFailedException} if the ETag differs
     *     or the object does not exist
     */
    public CompletableFuture<WriteResult> putIfMatchAsync(String path, byte[] data, String eTag) {
        return putIf(path, data, WriteOptions.MODE_IF_MATCH, eTag);
    }

    /**
     * {@link ObjectStore#head(String)}.
     *
     * @param path the object path
     * @return the metadata
     */
    public CompletableFuture<ObjectMeta> headAsync(String path) {
        return call(
                (h, s) -> AsyncNative.startHead(h, nonNull(path, "path"), s),
                r -> ObjectMeta.fromNative((String[]) r, 0));
    }

    /**
     * {@link ObjectStore#delete(String)}.
     *
     * @param path the object path
     * @return completes when deleted
     */
    public CompletableFuture<Void> deleteAsync(String path) {
        return call((h, s) -> AsyncNative.startDelete(h, nonNull(path, "path"), s), r -> null);
    }

    /**
     * {@link ObjectStore#list(String)}.
     *
     * @param prefix the prefix, or {@code null} for everything
     * @return every object under the prefix (an unmodifiable list)
     */
    public CompletableFuture<List<ObjectMeta>> listAsync(String prefix) {
        return call(
                (h, s) -> AsyncNative.startList(h, prefix, s),
                r -> ObjectMeta.listFromNative((String[]) r));
    }

    /**
     * {@link ObjectStore#copy(String, String)}.
     *
     * @param from the source path
     * @param to the destination path
     * @return completes when copied
     */
    public CompletableFuture<Void> copyAsync(String from, String to) {
        return copyOrRename(from, to, false, false);
    }

    /**
     * {@link ObjectStore#copyIfNotExists(String, String)}.
     *
     * @param from the source path
     * @param to the destination path
     * @return completes when copied; fails with {@link ObjectAlreadyExistsException} if {@code to}
     *     exists
     */
    public CompletableFuture<Void> copyIfNotExistsAsync(String from, String to) {
        return copyOrRename(from, to, true, false);
    }

    /**
     * {@link ObjectStore#rename(String, String)}.
     *
     * @param from the source path
     * @param to the destination path
     * @return completes when moved
     */
    public CompletableFuture<Void> renameAsync(String from, String to) {
        return copyOrRename(from, to, false, true);
    }

    /**
     * {@link ObjectStore#renameIfNotExists(String, String)}.
     *
     * @param from the source path
     * @param to the destination path
     * @return completes when moved; fails with {@link ObjectAlreadyExistsException} if {@code to}
     *     exists
     */
    public CompletableFuture<Void> renameIfNotExistsAsync(String from, String to) {
        return copyOrRename(from, to, true, true);
    }

    /**
     * Stops accepting calls; calls in flight keep running and complete. Idempotent. Does not close
     * the store.
     */
    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "AsyncObjectStore{store="
                + store
                + ", maxInFlight="
                + maxInFlight
                + ", inFlight="
                + inFlight()
                + ", closed="
                + closed
                + "}";
    }

    // ---------------------------------------------------------------------------------------

    private CompletableFuture<WriteResult> putIf(String path, byte[] data, int mode, String eTag) {
        return call(
                (h, s) ->
                        AsyncNative.startPut(
                                h,
                                nonNull(path, "path"),
                                nonNull(data, "data"),
                                mode,
                                mode == WriteOptions.MODE_IF_MATCH ? nonNull(eTag, "eTag") : null,
                                s),
                r -> WriteResult.fromNative((String[]) r));
    }

    private CompletableFuture<Void> copyOrRename(
            String from, String to, boolean ifNotExists, boolean rename) {
        return call(
                (h, s) ->
                        AsyncNative.startCopy(
                                h, nonNull(from, "from"), nonNull(to, "to"), ifNotExists, rename, s),
                r -> null);
    }

    private static <T> T nonNull(T value, String name) {
        return Objects.requireNonNull(value, name);
    }

    private <T> CompletableFuture<T> call(AsyncCall.Start start, AsyncCall.Decode<T> decode) {
        return call(start, AsyncNative::take, decode);
    }

    private <T> CompletableFuture<T> call(
            AsyncCall.Start start, AsyncCall.Take take, AsyncCall.Decode<T> decode) {
        AsyncCall<T> call = new AsyncCall<>(callbackExecutor, permits, take, decode);
        if (closed) {
            call.future.completeExceptionally(
                    new RejectedExecutionException("AsyncObjectStore is closed"));
            return call.future;
        }
        try {
            permits.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            call.future.completeExceptionally(e);
            return call.future;
        }
        if (closed) {
            // Closed while this call waited at the bound: it was never accepted.
            permits.release();
            call.future.completeExceptionally(
                    new RejectedExecutionException("AsyncObjectStore is closed"));
            return call.future;
        }
        long task;
        try {
            long h = store.acquireHandle();
            try {
                task = start.start(h, call);
            } finally {
                store.releaseHandle();
            }
        } catch (Throwable t) {
            // Not started (bad argument, closed store): no native task will report.
            permits.release();
            call.future.completeExceptionally(t);
            return call.future;
        }
        call.started(task);
        return call.future;
    }
}
