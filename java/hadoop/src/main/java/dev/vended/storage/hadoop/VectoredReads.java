package dev.vended.storage.hadoop;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ByteRange;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.SeekableObjectInputStream;

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
import java.util.function.Consumer;
import java.util.function.IntFunction;
import java.util.function.LongConsumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.VectoredReadUtils;

/**
 * The vectored reads ({@code PositionedReadable.readVectored}) of one {@link VendedInputStream}:
 * one native {@code getRanges} call per {@link #read}, on the store's async view, so no Java
 * thread waits for the requests. The native side merges ranges by Hadoop's rule, as S3A does:
 * ranges less than {@link Merge#minSeek} bytes apart share one ranged GET while it stays at most
 * {@link Merge#maxMerged} bytes (a longer range is one GET of its own), and runs up to 10 GETs at
 * once. When every range is in, each is copied from the network buffers straight into a buffer of
 * the caller's allocator (heap or direct; allocated on the completion thread, nothing allocated
 * when the read fails): one copy per byte.
 */
final class VectoredReads {

    private static final String MIN_SEEK_KEY = VendedFileSystem.VECTORED_MIN_SEEK_KEY;
    private static final String MAX_MERGED_KEY = VendedFileSystem.VECTORED_MAX_MERGED_KEY;

    /** Default gap (bytes) at and above which ranges get GETs of their own: 4 KiB, as S3A. */
    static final int DEFAULT_MIN_SEEK = 4 << 10;

    /** Default largest merged GET (bytes): 1 MiB, as S3A. */
    static final int DEFAULT_MAX_MERGED = 1 << 20;

    /**
     * How ranges are merged into GETs.
     *
     * @param minSeek gaps of at least this many bytes are not fetched (0 or more)
     * @param maxMerged the largest merged GET in bytes (1 or more; longer single ranges stay whole)
     */
    record Merge(int minSeek, int maxMerged) {

        /** S3A's defaults: 4 KiB and 1 MiB. */
        static final Merge DEFAULT = new Merge(DEFAULT_MIN_SEEK, DEFAULT_MAX_MERGED);

        Merge {
            if (minSeek < 0 || maxMerged < 1) {
                throw new IllegalArgumentException(
                        MIN_SEEK_KEY + " must be >= 0 and " + MAX_MERGED_KEY
                                + " >= 1 bytes (were " + minSeek + ", " + maxMerged + ")");
            }
        }

        /**
         * The rule configured in {@code conf} ({@link VendedFileSystem#VECTORED_MIN_SEEK_KEY},
         * {@link VendedFileSystem#VECTORED_MAX_MERGED_KEY};
         * sizes as Hadoop reads them: bytes, or with a suffix such as {@code 64k}, {@code 1m}).
         *
         * @throws IllegalArgumentException naming the key for a negative or too large value
         */
        static Merge of(Configuration conf) {
            long minSeek = conf.getLongBytes(MIN_SEEK_KEY, DEFAULT_MIN_SEEK);
            long maxMerged = conf.getLongBytes(MAX_MERGED_KEY, DEFAULT_MAX_MERGED);
            if (minSeek > Integer.MAX_VALUE || maxMerged > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        MIN_SEEK_KEY + " and " + MAX_MERGED_KEY + " must be below 2 GiB");
            }
            return new Merge((int) minSeek, (int) maxMerged);
        }
    }

    private final ObjectStore store;
    private final String path;
    private final long length;
    /** The stream's pinned ETag, or {@code null}. */
    private final String ifMatch;
    private final String uri;
    private final LongConsumer delivered;
    private final Merge merge;
    private AsyncObjectStore async;

    /**
     * @param store the store holding the object
     * @param in the stream whose object, length (ranges past it fail with {@link EOFException})
     *     and pinned ETag (every GET carries it, so a replaced object fails the read instead of
     *     mixing versions with the stream's reads) the ranges are read with
     * @param uri the path, for messages
     * @param delivered called with each range's length once its future is completed with bytes
     * @param merge how ranges are merged into GETs
     */
    VectoredReads(
            ObjectStore store,
            SeekableObjectInputStream in,
            String uri,
            LongConsumer delivered,
            Merge merge) {
        this.store = store;
        this.merge = Objects.requireNonNull(merge, "merge");
        this.path = in.path();
        this.length = in.length();
        this.ifMatch = in.eTag();
        this.uri = uri;
        this.delivered = delivered;
    }

    /** How this stream's ranges are merged into GETs. */
    Merge merge() {
        return merge;
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
     * @param release takes back the buffers {@code allocate} gave for ranges whose read then
     *     failed (an allocator that throws midway, a buffer refused): none is lost
     * @return the number of ranges
     * @throws EOFException if a range has a negative offset
     * @throws IllegalArgumentException if a range has a negative length or two ranges overlap
     * @throws NullPointerException if an argument or a range is null
     */
    int read(
            List<? extends FileRange> ranges,
            IntFunction<ByteBuffer> allocate,
            Consumer<ByteBuffer> release)
            throws EOFException {
        Objects.requireNonNull(allocate, "allocate");
        Objects.requireNonNull(release, "release");
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
                deliverEmpty(f, allocate);
            } else {
                fetched.add(r);
                futures.add(f);
                wanted.add(new ByteRange(r.getOffset(), end));
            }
        }
        if (!wanted.isEmpty()) {
            // The buffers handed out, so a read that fails after some were allocated gives them
            // back (the allocator runs on the completion thread, one range after another).
            List<ByteBuffer> allocated = new ArrayList<>();
            IntFunction<ByteBuffer> recorded =
                    n -> {
                        ByteBuffer b = allocate.apply(n);
                        allocated.add(b);
                        return b;
                    };
            async().getRangesIntoAsync(
                            path, wanted, merge.minSeek(), merge.maxMerged(), ifMatch, recorded)
                    .whenComplete(
                            (buffers, error) -> {
                                if (error != null) {
                                    releaseAll(allocated, release);
                                }
                                for (int i = 0; i < futures.size(); i++) {
                                    if (error != null) {
                                        futures.get(i).completeExceptionally(translate(error));
                                    } else {
                                        futures.get(i).complete(buffers.get(i));
                                        delivered.accept(fetched.get(i).getLength());
                                    }
                                }
                            });
        }
        return sorted.size();
    }

    /** Hands each of {@code buffers} to {@code release}; a failing release does not stop it. */
    private static void releaseAll(List<ByteBuffer> buffers, Consumer<ByteBuffer> release) {
        for (ByteBuffer b : buffers) {
            try {
                release.accept(b);
            } catch (RuntimeException e) {
                // The read's own failure is what the caller sees; the next buffer is released.
            }
        }
    }

    /** Completes {@code f} with an empty buffer from {@code allocate}. */
    private void deliverEmpty(CompletableFuture<ByteBuffer> f, IntFunction<ByteBuffer> allocate) {
        try {
            ByteBuffer b = allocate.apply(0);
            b.flip();
            f.complete(b);
            delivered.accept(0);
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
