package dev.vended.storage.hadoop;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ByteRange;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.IntFunction;
import java.util.function.LongConsumer;

import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.VectoredReadUtils;

/**
 * The vectored reads ({@code PositionedReadable.readVectored}) of one {@link VendedInputStream}:
 * one native {@code getRanges} call per {@link #read}, on the store's async view, so no Java
 * thread waits for the requests. The native side ({@code object_store}'s {@code get_ranges})
 * merges ranges less than {@link #COALESCE_GAP} apart into one ranged GET and runs up to 10 GETs
 * at once; each range comes back as its own Java array, which is copied into the caller's buffer.
 */
final class VectoredReads {

    /** Ranges closer than this are fetched with one GET (object_store's coalescing): 1 MiB. */
    static final int COALESCE_GAP = 1 << 20;

    /** What {@code maxReadSizeForVectorReads} advertises: 8 MiB (advisory, see there). */
    static final int MAX_MERGED_READ = 8 << 20;

    private final ObjectStore store;
    private final String path;
    private final long length;
    private final String uri;
    private final LongConsumer delivered;
    private AsyncObjectStore async;

    /**
     * @param store the store holding the object
     * @param path the object's path in the store
     * @param length the object's length (ranges past it fail with {@link EOFException})
     * @param uri the path, for messages
     * @param delivered called with each range's length once its future is completed with bytes
     */
    VectoredReads(ObjectStore store, String path, long length, String uri, LongConsumer delivered) {
        this.store = store;
        this.path = path;
        this.length = length;
        this.uri = uri;
        this.delivered = delivered;
    }

    private synchronized AsyncObjectStore async() {
        if (async == null) {
            async = AsyncObjectStore.of(store);
        }
        return async;
    }

    /**
     * Validates the ranges, sets every range's future and starts the fetch.
     *
     * @param ranges the ranges
     * @param allocate the buffer allocator, called on a completion thread
     * @return the number of ranges
     * @throws EOFException if a range has a negative offset
     * @throws IllegalArgumentException if a range has a negative length or two ranges overlap
     * @throws NullPointerException if an argument or a range is null
     */
    int read(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
            throws EOFException {
        Objects.requireNonNull(allocate, "allocate");
        List<? extends FileRange> sorted =
                VectoredReadUtils.validateAndSortRanges(ranges, Optional.empty());
        List<FileRange> fetched = new ArrayList<>(sorted.size());
        List<CompletableFuture<ByteBuffer>> futures = new ArrayList<>(sorted.size());
        List<ByteRange> wanted = new ArrayList<>(sorted.size());
        for (FileRange r : sorted) {
            CompletableFuture<ByteBuffer> f = new CompletableFuture<>();
            r.setData(f);
            long end = r.getOffset() + r.getLength();
            if (end > length) {
                f.completeExceptionally(
                        new EOFException(
                                String.format(
                                        "range [%d, %d) is past the end of %s (%d bytes)",
                                        r.getOffset(), end, uri, length)));
            } else if (r.getLength() == 0) {
                deliver(f, new byte[0], allocate);
            } else {
                fetched.add(r);
                futures.add(f);
                wanted.add(new ByteRange(r.getOffset(), end));
            }
        }
        if (!wanted.isEmpty()) {
            async().getRangesAsync(path, wanted)
                    .whenComplete(
                            (parts, error) -> {
                                for (int i = 0; i < futures.size(); i++) {
                                    if (error != null) {
                                        futures.get(i).completeExceptionally(translate(error));
                                    } else {
                                        deliver(futures.get(i), parts.get(i), allocate);
                                    }
                                }
                            });
        }
        return sorted.size();
    }

    /** Copies {@code bytes} into a buffer from {@code allocate} and completes {@code f} with it. */
    private void deliver(
            CompletableFuture<ByteBuffer> f, byte[] bytes, IntFunction<ByteBuffer> allocate) {
        try {
            ByteBuffer b = allocate.apply(bytes.length);
            b.put(bytes);
            b.flip();
            f.complete(b);
            delivered.accept(bytes.length);
        } catch (RuntimeException | Error e) {
            f.completeExceptionally(e);
        }
    }

    /** The exception a range's future fails with: the cause, a missing object as Hadoop's. */
    private Throwable translate(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof ObjectNotFoundException) {
            FileNotFoundException fnf = new FileNotFoundException(uri + " no longer exists");
            fnf.initCause(e);
            return fnf;
        }
        return e;
    }
}
