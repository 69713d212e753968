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
 * <p><b>Read-ahead.</b> Small reads are served from a Java-side block of {@link
 * ReadOptions#blockSize()} bytes (default 1 MiB, see {@link ReadOptions}) filled by one native call,
 * so {@link #read()} crosses JNI once per block, not once per byte. A block that would run past
 * the end of the object is shifted to end at the object's end, so a Parquet-style footer read
 * ({@code readFully(length - 8, ...)}, then the footer before it) costs one request. Reads of at
 * least one block go straight into the caller's array (or direct {@link ByteBuffer}, through {@code
 * readRangeDirect}, without an intermediate Java array).
 *
 * <p><b>Consistency.</b> By default the stream is pinned to the ETag the object had at open: if the
 * object is replaced, the next request fails with {@link PreconditionFailedException}.
 *
 * <p>Not thread-safe: use one stream per thread (opening one costs a HEAD, or nothing with {@link
 * ReadOptions#withKnownLength}). Closing is idempotent; every read after {@link #close()} throws
 * {@link IOException}. The stream does not keep its store open: closing the store makes later
 * requests fail with {@link IllegalStateException}.
 */
public final class SeekableObjectInputStream extends InputStream {

    private final ObjectStore store;
    private final String path;
    private final long length;
    private final String ifMatch;
    private final byte[] block;

    /** Object offset of {@code block[0]}. */
    private long blockStart;
    /** Valid bytes in {@code block}. */
    private int blockLength;
    private long pos;
    private boolean closed;
    private long nativeReads;

    SeekableObjectInputStream(
            ObjectStore store, String path, long length, String eTag, ReadOptions options) {
        this.store = store;
        this.path = path;
        this.length = length;
        this.ifMatch = options.pinnedETag() ? eTag : null;
        this.block = new byte[(int) Math.min(options.blockSize(), Math.max(1L, length))];
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
     * The object's path, relative to the store's prefix.
     *
     * @return the path
     */
    public String path() {
        return path;
    }

    /**
     * Moves the position. Seeking within the current block costs nothing; the next read after a
     * seek elsewhere sends one request.
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
                    "cannot seek to position "
                            + newPos
                            + " past the end of "
                            + path
                            + " ("
                            + length
                            + " bytes)");
        }
        pos = newPos;
    }

    @Override
    public int read() throws IOException {
        ensureOpen();
        if (pos >= length) {
            return -1;
        }
        if (!buffered(pos)) {
            fill(pos);
        }
        return block[(int) (pos++ - blockStart)] & 0xff;
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
        readAt(pos, b, off, n);
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
            readAt(pos, dst.array(), dst.arrayOffset() + dst.position(), n);
        } else if (dst.isDirect()) {
            int done = 0;
            if (buffered(pos)) {
                done = (int) Math.min(n, blockStart + blockLength - pos);
                dst.put(dst.position(), block, (int) (pos - blockStart), done);
            }
            if (done < n) {
                directRange(pos + done, dst, dst.position() + done, n - done);
            }
        } else {
            byte[] tmp = new byte[n];
            readAt(pos, tmp, 0, n);
            dst.put(dst.position(), tmp);
        }
        dst.position(dst.position() + n);
        pos += n;
        return n;
    }

    /**
     * Reads exactly {@code len} bytes at {@code position} without moving the stream's position
     * (positioned read, as Hadoop's {@code PositionedReadable}).
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
                    "cannot read "
                            + len
                            + " bytes at position "
                            + position
                            + ": past the end of "
                            + path
                            + " ("
                            + length
                            + " bytes)");
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

    /** Releases the read-ahead block. Idempotent. */
    @Override
    public void close() {
        closed = true;
        blockLength = 0;
    }

    @Override
    public String toString() {
        return "SeekableObjectInputStream{path="
                + path
                + ", length="
                + length
                + ", pos="
                + pos
                + ", closed="
                + closed
                + "}";
    }

    /** Native range requests made so far (tests: small reads must not cross JNI each). */
    long nativeReads() {
        return nativeReads;
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

    /** Copies {@code [p, p + n)} (within the object) into {@code b[off, off + n)}. */
    private void readAt(long p, byte[] b, int off, int n) throws IOException {
        while (n > 0) {
            if (buffered(p)) {
                int k = (int) Math.min(n, blockStart + blockLength - p);
                System.arraycopy(block, (int) (p - blockStart), b, off, k);
                p += k;
                off += k;
                n -= k;
            } else if (n >= block.length) {
                directRange(p, b, off, n);
                return;
            } else {
                fill(p);
            }
        }
    }

    /** Loads the block holding {@code p}, shifted to end at the object's end if need be. */
    private void fill(long p) throws IOException {
        long start = Math.max(0L, Math.min(p, length - block.length));
        int n = (int) Math.min(block.length, length - start);
        blockLength = 0;
        directRange(start, block, 0, n);
        blockStart = start;
        blockLength = n;
    }

    /** Reads exactly {@code [p, p + n)} into {@code b[off, off + n)} natively. */
    private void directRange(long p, byte[] b, int off, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int k;
            long h = store.acquireHandle();
            try {
                nativeReads++;
                k = NativeBridge.readRange(h, path, p + done, ifMatch, b, off + done, n - done);
            } finally {
                store.releaseHandle();
            }
            if (k <= 0) {
                throw truncated(p + done);
            }
            done += k;
        }
    }

    private void directRange(long p, ByteBuffer b, int off, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int k;
            long h = store.acquireHandle();
            try {
                nativeReads++;
                k = NativeBridge.readRangeDirect(h, path, p + done, ifMatch, b, off + done, n - done);
            } finally {
                store.releaseHandle();
            }
            if (k <= 0) {
                throw truncated(p + done);
            }
            done += k;
        }
    }

    private EOFException truncated(long at) {
        return new EOFException(
                path
                        + " ended at "
                        + at
                        + " bytes, before the "
                        + length
                        + " bytes it had when the stream was opened (the object changed; pin its"
                        + " ETag to get PreconditionFailedException instead)");
    }
}
