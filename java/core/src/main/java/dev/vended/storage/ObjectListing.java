package dev.vended.storage;

import java.lang.ref.Cleaner;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A listing of every object under a prefix, fetched page by page as it is iterated ({@link
 * ObjectStore#listIterator(String, int)}, {@link ObjectStore#listStream(String)}). Nothing is
 * requested before the first {@link #hasNext()}; each later page is requested when the previous
 * one is consumed. Listing a huge prefix thus holds one page in memory, not the whole listing.
 *
 * <p>Close it when stopping early (try-with-resources); it closes itself once exhausted, and one
 * that becomes unreachable is released by a {@link Cleaner}. The native listing keeps its store's
 * connection and credentials until then, even if the store is closed first. Not thread-safe.
 */
public final class ObjectListing implements Iterator<ObjectMeta>, AutoCloseable {

    private final Lister lister;
    private final Cleaner.Cleanable cleanable;
    private final int pageSize;
    private String[] page = new String[0];
    private int next;
    private boolean exhausted;
    private long pagesFetched;

    private static final class Lister implements Runnable {
        private final long handle;

        Lister(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            try {
                NativeBridge.listClose(handle); // no-op when closed
            } catch (RuntimeException | Error e) {
                // A Cleaner must not throw.
            }
        }
    }

    ObjectListing(long handle, int pageSize) {
        this.lister = new Lister(handle);
        this.cleanable = ObjectStore.CLEANER.register(this, lister);
        this.pageSize = pageSize;
    }

    /**
     * Whether another object follows; fetches the next page when the current one is consumed.
     *
     * @return {@code true} if {@link #next()} returns an object
     * @throws UncheckedStorageException if a page request fails (its cause is the {@link
     *     StorageException}: credentials, not found, I/O ...)
     *     (a closed listing returns {@code false} once the objects already fetched are read)
     */
    @Override
    public boolean hasNext() {
        if (next < page.length) {
            return true;
        }
        if (exhausted) {
            return false;
        }
        String[] flat;
        try {
            pagesFetched++;
            flat = NativeBridge.listNext(lister.handle, pageSize);
        } catch (StorageException e) {
            close();
            throw new UncheckedStorageException(e);
        }
        if (flat == null || flat.length % ObjectMeta.NATIVE_FIELDS != 0) {
            close();
            throw new IllegalStateException("native library returned a malformed listing page");
        }
        page = flat;
        next = 0;
        if (flat.length == 0) {
            close();
            return false;
        }
        return true;
    }

    /**
     * The next object.
     *
     * @return its metadata
     * @throws NoSuchElementException after the last object
     */
    @Override
    public ObjectMeta next() {
        if (!hasNext()) {
            throw new NoSuchElementException("the listing has no more objects");
        }
        ObjectMeta m = ObjectMeta.fromNative(page, next);
        next += ObjectMeta.NATIVE_FIELDS;
        return m;
    }

    /**
     * The remaining objects as a sequential stream; closing the stream closes this listing.
     *
     * @return a lazy stream
     */
    public Stream<ObjectMeta> stream() {
        return StreamSupport.stream(
                        Spliterators.spliteratorUnknownSize(
                                this, Spliterator.ORDERED | Spliterator.NONNULL),
                        false)
                .onClose(this::close);
    }

    /**
     * How many pages were requested from the native side so far (including the final empty one).
     *
     * @return pages
     */
    public long pagesFetched() {
        return pagesFetched;
    }

    /** Releases the native listing. Idempotent; objects already fetched can still be read. */
    @Override
    public void close() {
        exhausted = true;
        cleanable.clean();
    }
}
