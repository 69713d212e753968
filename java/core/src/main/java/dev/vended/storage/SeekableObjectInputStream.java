package dev.vended.storage;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A seekable {@link InputStream} over one object, opened by {@link ObjectStore#openInput(String)}.
 *
 * <p>Positions and lengths are {@code long} bytes everywhere, so objects far above 2 GiB work. Each
 * ranged GET is signed natively with the credential current at that moment, so a stream may stay
 * open across any number of credential rotations.
 *
 * <p><b>Read-ahead.</b> Small reads are served from a block of up to {@link
 * ReadOptions#blockSize()} bytes (default 1 MiB, see {@link ReadOptions}) loaded by one native
 * call, so {@link #read()} crosses JNI once per block, not once per byte. The block is the network
 * buffers its bytes arrived in, lent to Java as read-only direct buffers (not copied into a Java
 * array), so a small read copies each byte once, into the caller's array; the block's memory is
 * freed when the next block replaces it or at {@link #close()}. A block that would run past
 * the end of the object is shifted to end at the object's end, so a Parquet-style footer read
 * ({@code readFully(length - 8, ...)}, then a footer of up to ~64 KiB before it) costs one request
 * (of the last 64 KiB, see below; a longer footer a second one of its size). Reads of at
 * least one block go straight into the caller's array (or direct {@link ByteBuffer}, through {@code
 * readRangeDirect}, without an intermediate Java array).
 *
 * <p><b>Adaptive size of ranged reads.</b> A ranged GET that loads the block for a read which
 * does not continue the previous one (a random read) fetches {@code max(read size, }{@link
 * ReadOptions#MIN_RANDOM_READ}{@code )} bytes (64 KiB; at most a block), not a whole block: a
 * 64 KiB random read costs about 64 KiB, not 1 MiB, in the object's last block too (a footer
 * read loads the last 64 KiB). A read that continues where the previous one ended (a positioned
 * read: where the loaded range ends) loads a whole block and starts the prefetch below, so a run
 * that turns out sequential grows its read-ahead to the block size at its second request.
 * Like S3A's random policy ({@code fs.s3a.readahead.range}: {@code max(range, read size)}),
 * with the growth of its adaptive one.
 *
 * <p><b>Sequential prefetch.</b> With {@link ReadOptions#readAhead()} (the default), once stream
 * reads are sequential (a read that needs new bytes starts exactly where the previous stream read
 * ended), the ranged GET of the NEXT block (same size, same pinned ETag) is sent on a background
 * thread while the caller consumes the current one, into a second block that becomes the current
 * block when the position reaches it: at most one prefetch is in flight, so a stream holds at most
 * two blocks. A {@link #seek}/{@link #skip} outside both blocks discards the prefetch (a GET
 * already sent completes and its bytes are dropped; one not started is never sent). A prefetch
 * still queued when its bytes are needed while every pool thread is busy is read on the caller's
 * thread instead. A failed prefetch throws its exception (same type as a direct read: {@link
 * PreconditionFailedException}, {@link EOFException}, ...) at the read that needs those bytes, not
 * before. Positioned reads neither start nor use a prefetch. Prefetches run on one process-wide
 * pool of at most {@link #READ_AHEAD_THREADS} daemon threads named {@code
 * vended-storage-readahead-N} that exit after 30 s idle.
 *
 * <p><b>Read policy.</b> The above is {@link ReadPolicy#RANDOM}. With {@link
 * ReadPolicy#SEQUENTIAL}, sequential stream reads (the first read at offset 0 included) instead
 * take their bytes from one streaming GET per run, to the end of the object, on a connection read
 * by the reading thread (no Java prefetch; blocks start where the run is). The default {@link
 * ReadPolicy#ADAPTIVE} starts as SEQUENTIAL and switches for good to RANDOM at the first backward
 * {@link #seek} or positioned read not at {@link #getPos()}. Positioned reads are ranged always.
 *
 * <p><b>Consistency.</b> By default the stream is pinned to the ETag the object had at open: if the
 * object is replaced, the next request fails with {@link PreconditionFailedException} (a
 * streaming GET already open keeps serving its version; see {@link ReadPolicy}).
 *
 * <p>Not thread-safe: use one stream per thread (opening one costs a HEAD, or nothing with {@link
 * ReadOptions#withKnownLength}). Closing is idempotent; every read after {@link #close()} throws
 * {@link IOException}. The stream does not keep its store open: closing the store makes later
 * requests fail with {@link IllegalStateException}.
 */
public final class SeekableObjectInputStream extends InputStream {

    /**
     * Threads of the process-wide read-ahead pool: {@code min(64, max(8, 4 *
     * availableProcessors))}. Prefetches beyond that wait in the pool's queue (at most one per
     * open stream).
     */
    public static final int READ_AHEAD_THREADS =
            Math.min(64, Math.max(8, 4 * Runtime.getRuntime().availableProcessors()));

    private final String path;
    private final long length;
    /** The ETag every request is pinned to, or {@code null}. */
    private final String ifMatch;
    private final boolean readAhead;
    /** The streaming and ranged GETs, and the size of each request, under the read policy. */
    private final ReadSource source;
    /**
     * The current block, lent by the native side (small reads copy out of it once); replaced,
     * and the old one released, when another range is loaded or a prefetch is taken.
     */
    private volatile NativeBlock block = NativeBlock.EMPTY;
    /** Bytes per block (the largest request that loads one). */
    private final int blockSize;
    /** The prefetch of the next block (unused with streaming or without read-ahead). */
    private final ReadAhead prefetches;
    /** Object offset right after the last stream (not positioned) read; -1 before the first. */
    private long lastReadEnd;

    /** Object offset of the block's first byte. */
    private long blockStart;
    /** Valid bytes in {@code block}. */
    private int blockLength;
    private long pos;
    /** Volatile, as {@link #block}: a close on another thread frees every block (see setBlock). */
    private volatile boolean closed;

    SeekableObjectInputStream(
            ObjectStore store, String path, long length, String eTag, ReadOptions options) {
        this.path = path;
        this.length = length;
        this.ifMatch = options.pinnedETag() ? eTag : null;
        this.readAhead = options.readAhead();
        this.blockSize = (int) Math.min(options.blockSize(), Math.max(1L, length));
        this.source = new ReadSource(store, path, length, ifMatch, options, blockSize);
        this.lastReadEnd = source.streaming() ? 0L : -1L; // a first read at 0 opens the run
        this.prefetches = new ReadAhead(source.ranged(), path);
    }

    /**
     * The object's size, as seen when the stream was opened.
     *
     * @return bytes
     */
    public long length() {
        return length;
    }

    /**
     * The current position.
     *
     * @return the offset of the next byte {@link #read()} returns
     */
    public long getPos() {
        return pos;
    }

    /**
     * The ETag every request of this stream is pinned to.
     *
     * @return the ETag seen at open, exactly as {@link ObjectMeta#eTag()} gives it; {@code null}
     *     when not pinned ({@link ReadOptions#withPinnedETag}) or the store gives no ETag
     */
    public String eTag() {
        return ifMatch;
    }

    /**
     * The object's path, relative to the store's prefix.
     *
     * @return the path
     */
    public String path() {
        return path;
    }

    /**
     * Moves the position. Seeking within the current block costs nothing; the next read after a
     * seek elsewhere sends one request. A seek outside the current and the prefetched block
     * discards the prefetch. With {@link ReadPolicy#ADAPTIVE}, a backward seek switches the
     * stream to ranged reads for good.
     *
     * @param newPos the new position, from {@code 0} to {@link #length()} inclusive (at {@code
     *     length()} every read returns {@code -1})
     * @throws EOFException if {@code newPos} is negative or past the end, naming both
     * @throws IOException if the stream is closed
     */
    public void seek(long newPos) throws IOException {
        ensureOpen();
        if (newPos < 0) {
            throw new EOFException("cannot seek to negative position " + newPos + " in " + path);
        }
        if (newPos > length) {
            throw new EOFException(
                    String.format(
                            "cannot seek to position %d past the end of %s (%d bytes)",
                            newPos, path, length));
        }
        if (newPos < pos) {
            source.switchToRanged(); // ADAPTIVE only
        }
        pos = newPos;
        discardPrefetchUnlessNear(newPos);
    }

    @Override
    public int read() throws IOException {
        ensureOpen();
        if (pos >= length) {
            return -1;
        }
        if (!buffered(pos)) {
            boolean sequential = pos == lastReadEnd;
            if (takePrefetch(pos)) {
                sequential = true; // the prefetched block was reached: keep the chain going
            } else {
                fill(pos, sequential, 1);
            }
            if (sequential) {
                startPrefetch(blockStart + blockLength);
            }
        }
        lastReadEnd = pos + 1;
        return block.get((int) (pos++ - blockStart)) & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (pos >= length) {
            return -1;
        }
        int n = (int) Math.min(len, length - pos);
        streamReadAt(pos, b, null, off, n);
        pos += n;
        return n;
    }

    /**
     * Reads into {@code dst} from the current position, as many bytes as fit or remain. A direct
     * buffer is filled natively through {@code readRangeDirect}, with no intermediate Java array,
     * for the part of the read that is not already buffered. The buffer must not be used by other
     * threads during the call.
     *
     * @param dst the buffer, filled from its position to at most its limit (its position advances)
     * @return the bytes read, {@code 0} if {@code dst} has no room, {@code -1} at the end
     * @throws IOException if the stream is closed or a request fails
     */
    public int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("the destination ByteBuffer is read-only");
        }
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (pos >= length) {
            return -1;
        }
        int n = (int) Math.min(dst.remaining(), length - pos);
        if (dst.hasArray()) {
            streamReadAt(pos, dst.array(), null, dst.arrayOffset() + dst.position(), n);
        } else if (dst.isDirect()) {
            streamReadAt(pos, null, dst, dst.position(), n);
        } else {
            byte[] tmp = new byte[n];
            streamReadAt(pos, tmp, null, 0, n);
            dst.put(dst.position(), tmp);
        }
        dst.position(dst.position() + n);
        pos += n;
        return n;
    }

    /**
     * Reads exactly {@code len} bytes at {@code position} without moving the stream's position
     * (positioned read, as Hadoop's {@code PositionedReadable}), with ranged GETs. With {@link
     * ReadPolicy#ADAPTIVE}, one at a position other than {@link #getPos()} switches the stream to
     * ranged reads for good.
     *
     * @param position the object offset of the first byte
     * @param b the destination
     * @param off offset in {@code b}
     * @param len bytes to read
     * @throws EOFException if {@code position} is negative or {@code position + len} is past the
     *     end of the object (nothing is read)
     * @throws IndexOutOfBoundsException if {@code off}/{@code len} fall outside {@code b}
     * @throws IOException if the stream is closed or a request fails
     */
    public void readFully(long position, byte[] b, int off, int len) throws IOException {
        ensureOpen();
        Objects.checkFromIndexSize(off, len, b.length);
        if (position < 0) {
            throw new EOFException("cannot read at negative position " + position + " in " + path);
        }
        if (position > length - len) {
            throw new EOFException(
                    String.format(
                            "cannot read %d bytes at position %d: past the end of %s (%d bytes)",
                            len, position, path, length));
        }
        if (position != pos) {
            source.switchToRanged(); // ADAPTIVE only
        }
        if (len > 0) {
            readAt(position, b, off, len);
        }
    }

    /**
     * Reads exactly {@code b.length} bytes at {@code position}; see {@link #readFully(long, byte[],
     * int, int)}.
     *
     * @param position the object offset of the first byte
     * @param b the destination, filled completely
     * @throws IOException as {@link #readFully(long, byte[], int, int)}
     */
    public void readFully(long position, byte[] b) throws IOException {
        readFully(position, b, 0, b.length);
    }

    @Override
    public long skip(long n) throws IOException {
        ensureOpen();
        if (n <= 0) {
            return 0;
        }
        long skipped = Math.min(n, length - pos);
        pos += skipped;
        discardPrefetchUnlessNear(pos);
        return skipped;
    }

    /**
     * The bytes readable without a request: the rest of the current block.
     *
     * @return bytes
     * @throws IOException if the stream is closed
     */
    @Override
    public int available() throws IOException {
        ensureOpen();
        return buffered(pos) ? (int) (blockStart + blockLength - pos) : 0;
    }

    /**
     * Releases the blocks. Idempotent, and prompt: an in-flight prefetch is discarded, not waited
     * for (a GET already sent finishes on its pool thread, which then drops the buffer; one not
     * started is never sent).
     */
    @Override
    public void close() {
        closed = true;
        blockLength = 0;
        source.close();
        prefetches.close();
        NativeBlock b = block;
        block = NativeBlock.EMPTY;
        b.release(); // now, or when a copy racing with this close ends
    }

    @Override
    public String toString() {
        return String.format(
                "SeekableObjectInputStream{path=%s, length=%d, pos=%d, closed=%b}",
                path, length, pos, closed);
    }

    /** The stream's request counts so far (tests). */
    StreamCounters counters() {
        return new StreamCounters(
                source.ranged().count(),
                source.ranged().rangedBytes(),
                source.streamingGets(),
                prefetches.used(),
                prefetches.takenBack(),
                prefetches.pending());
    }

    /**
     * Waits until the pending prefetch's GET has finished (tests).
     *
     * @param timeoutMillis the longest wait, in milliseconds
     * @return {@code true} if no prefetch is pending or it finished in time
     */
    boolean awaitPrefetch(long timeoutMillis) throws InterruptedException {
        return prefetches.await(timeoutMillis);
    }

    // ---------------------------------------------------------------------------------------

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("SeekableObjectInputStream of " + path + " is closed");
        }
    }

    private boolean buffered(long p) {
        return p >= blockStart && p < blockStart + blockLength;
    }

    /**
     * A stream read (not positioned) of {@code [p, p + n)} into {@code b} from {@code off}, or
     * into the direct buffer {@code direct} from its index {@code off}: may use and start a
     * prefetch. A direct buffer takes the bytes not buffered straight from the request.
     */
    private void streamReadAt(long p, byte[] b, ByteBuffer direct, int off, int n)
            throws IOException {
        boolean sequential = p == lastReadEnd;
        boolean loaded = false;
        long end = p + n;
        while (n > 0) {
            if (buffered(p)) {
                int k = (int) Math.min(n, blockStart + blockLength - p);
                if (direct != null) {
                    block.copyTo((int) (p - blockStart), direct, off, k);
                } else {
                    block.copyTo((int) (p - blockStart), b, off, k);
                }
                p += k;
                off += k;
                n -= k;
            } else if (takePrefetch(p)) {
                loaded = true;
                sequential = true;
            } else if (direct != null) {
                source.fetch(p, direct, off, n, sequential);
                loaded = true;
                break;
            } else if (n >= blockSize) {
                source.fetch(p, b, off, n, sequential);
                loaded = true;
                break;
            } else {
                fill(p, sequential, n);
                loaded = true;
            }
        }
        afterStreamRead(end, sequential, loaded);
    }

    /**
     * After a stream read ending at {@code end}: when it was sequential and had to load bytes,
     * prefetch the block after what is now available.
     */
    private void afterStreamRead(long end, boolean sequential, boolean loaded) {
        lastReadEnd = end;
        if (sequential && loaded) {
            startPrefetch(blockLength > 0 && buffered(end - 1) ? blockStart + blockLength : end);
        }
    }

    /** Copies {@code [p, p + n)} (within the object) into {@code b[off, off + n)}. */
    private void readAt(long p, byte[] b, int off, int n) throws IOException {
        while (n > 0) {
            if (buffered(p)) {
                int k = (int) Math.min(n, blockStart + blockLength - p);
                block.copyTo((int) (p - blockStart), b, off, k);
                p += k;
                off += k;
                n -= k;
            } else if (n >= blockSize) {
                source.ranged().read(p, b, off, n);
                return;
            } else {
                // A positioned read continuing the loaded range counts as sequential for its size.
                boolean continues = blockLength > 0 && p == blockStart + blockLength;
                fill(p, continues && !source.streaming(), n);
            }
        }
    }

    /**
     * Loads the bytes from {@code p} into the block, for a read that needs {@code need} of them:
     * the request {@link ReadSource#requestSize} and {@link ReadSource#requestStart} give.
     */
    private void fill(long p, boolean sequential, int need) throws IOException {
        int n = source.requestSize(p, sequential, need);
        long start = source.requestStart(p, sequential, n);
        setBlock(NativeBlock.EMPTY, start);
        setBlock(source.fetchBlock(start, n, sequential), start);
    }

    /**
     * Makes {@code b} the current block, starting at object offset {@code start}, and releases
     * the previous one. A block set while {@link #close()} runs on another thread is released
     * here: either this sees {@code closed} or the close sees this block.
     */
    private void setBlock(NativeBlock b, long start) throws IOException {
        NativeBlock old = block;
        block = b;
        blockStart = start;
        blockLength = b.length();
        old.release();
        if (closed) {
            b.release();
            ensureOpen();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Read-ahead (the machinery is in ReadAhead)

    /** Sends the GET of the block starting at {@code next} (shifted like {@link #fill}). */
    private void startPrefetch(long next) {
        // With streaming, the read-ahead is native (the open GET is received ahead of the reader).
        if (!readAhead || source.streaming() || closed || next >= length) {
            return;
        }
        long start = source.requestStart(next, true, blockSize);
        prefetches.start(start, (int) Math.min(blockSize, length - start));
    }

    /**
     * If the prefetch covers {@code p}, makes it the current block (see {@link ReadAhead#take})
     * and returns {@code true}; else (or when it was taken back from a busy pool) {@code false}.
     */
    private boolean takePrefetch(long p) throws IOException {
        ReadAhead.Prefetch f = prefetches.take(p);
        if (f == null) {
            return false;
        }
        if (f.block == null) { // discarded by a close on another thread
            ensureOpen();
            return false;
        }
        setBlock(f.block, f.start);
        return true;
    }

    /** Discards the prefetch unless {@code p} is in the current or the prefetched block. */
    private void discardPrefetchUnlessNear(long p) {
        if (!buffered(p)) {
            prefetches.discardUnlessCovers(p);
        }
    }
}
