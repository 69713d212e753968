package dev.vended.storage;

import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;

/**
 * The reads of {@link ObjectStore} into memory the caller owns (a whole object into a {@code
 * ByteBuffer}, a range into an array or {@code ByteBuffer}) and its vectored reads: one copy per
 * byte from the network buffer. Every method here is public API of {@code ObjectStore}; this class
 * is public so that their documentation is linkable, and cannot be subclassed outside this package
 * (its constructor is package-private).
 */
public abstract class ReadOperations {

    /** For {@link StoreOperations} only. */
    ReadOperations() {}

    /** Acquires the native store handle (pair with {@link #releaseHandle}). */
    abstract long acquireHandle();

    /** Releases the handle {@link #acquireHandle} acquired. */
    abstract void releaseHandle();

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
     * @throws StorageException as {@link ObjectStore#get(String)}
     */
    public long get(String path, java.nio.ByteBuffer dst) throws StorageException {
        Objects.requireNonNull(path, "path");
        writable(dst);
        long size;
        long h = acquireHandle();
        try {
            size =
                    dst.hasArray()
                            ? NativeBridge.getInto(
                                    h,
                                    path,
                                    dst.array(),
                                    dst.arrayOffset() + dst.position(),
                                    dst.remaining())
                            : NativeBridge.getIntoDirect(
                                    h, path, dst, dst.position(), dst.remaining());
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
        dst.position(dst.position() + (int) size);
        return size;
    }

    /** A destination buffer the native side can fill: direct, or writable and array-backed. */
    private static void writable(java.nio.ByteBuffer dst) {
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("the destination ByteBuffer is read-only");
        }
    }

    /**
     * Reads bytes {@code [position, position + len)} of an object into {@code buf[off, off + len)}:
     * one ranged GET, each byte copied once from the network buffer into {@code buf}, no
     * temporary array (unlike {@link ObjectStore#getRange(String, long, long)}, which returns a new,
     * zeroed one). A range running past the end of the object is cut there.
     *
     * @param path the object path, relative to the store's prefix
     * @param position the first byte, at least 0
     * @param buf the destination
     * @param off where in {@code buf} the bytes go
     * @param len how many bytes to read
     * @return the bytes read: {@code len}, fewer only at the end of the object, -1 when {@code
     *     position} is at or past the end ({@code len > 0}), 0 when {@code len == 0}
     * @throws NullPointerException if {@code path} or {@code buf} is null
     * @throws IllegalArgumentException if {@code position < 0} or {@code [off, off + len)} is
     *     outside {@code buf}
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException as {@link ObjectStore#getRange(String, long, long)}
     */
    public int getRange(String path, long position, byte[] buf, int off, int len)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(buf, "buf");
        long h = acquireHandle();
        try {
            return NativeBridge.readRange(h, path, position, null, buf, off, len);
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@link #getRange(String, long, byte[], int, int)} into {@code dst}: reads up to {@code
     * dst.remaining()} bytes from {@code position} into {@code dst} at its position, which advances
     * by the bytes read. A direct buffer is filled natively, a heap buffer through its array; one
     * copy from the network buffer in both cases.
     *
     * @param path the object path, relative to the store's prefix
     * @param position the first byte, at least 0
     * @param dst the destination
     * @return as {@link #getRange(String, long, byte[], int, int)}
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code position < 0} or {@code dst} is read-only
     * @throws StorageException as {@link #getRange(String, long, byte[], int, int)}
     */
    public int getRange(String path, long position, java.nio.ByteBuffer dst)
            throws StorageException {
        Objects.requireNonNull(path, "path");
        writable(dst);
        int n;
        long h = acquireHandle();
        try {
            n =
                    dst.hasArray()
                            ? NativeBridge.readRange(
                                    h,
                                    path,
                                    position,
                                    null,
                                    dst.array(),
                                    dst.arrayOffset() + dst.position(),
                                    dst.remaining())
                            : NativeBridge.readRangeDirect(
                                    h, path, position, null, dst, dst.position(), dst.remaining());
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
        if (n > 0) {
            dst.position(dst.position() + n);
        }
        return n;
    }

    /**
     * Reads several ranges of one object; ranges close to each other are fetched with one request.
     *
     * @param path the object path, relative to the store's prefix
     * @param ranges the ranges; each must lie within the object
     * @return one array per range, in the order given
     * @throws NullPointerException if an argument or a range is null
     * @throws ObjectNotFoundException if the object does not exist
     * @throws StorageException as {@link ObjectStore#getRange(String, long, long)}, including a
     *     range past the end of the object
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
        long h = acquireHandle();
        try {
            return nonNull(NativeBridge.getRanges(h, path, starts, ends), "getRanges");
        } finally {
            releaseHandle();
            Reference.reachabilityFence(this);
        }
    }

    static <T> T nonNull(T value, String operation) {
        if (value == null) {
            throw new IllegalStateException("native " + operation + " returned null");
        }
        return value;
    }
}
