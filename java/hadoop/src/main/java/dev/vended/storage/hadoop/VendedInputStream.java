package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.SeekableObjectInputStream;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntFunction;

import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * Hadoop's view of a {@link SeekableObjectInputStream}: {@code Seekable}, {@code
 * PositionedReadable} (positioned reads do not move the position; {@link #readVectored} fetches
 * many ranges with coalesced native requests, see {@link VectoredReads}), {@link
 * ByteBufferReadable}, {@link StreamCapabilities} and {@link IOStatisticsSource} (counters in
 * {@link VendedStatistics}). The read-ahead block of the underlying stream serves small and
 * one-byte reads. Not thread-safe, like every Hadoop input stream, except that the futures of a
 * {@link #readVectored} complete on other threads while the stream is used.
 */
final class VendedInputStream extends FSInputStream
        implements ByteBufferReadable, StreamCapabilities, IOStatisticsSource {

    private final SeekableObjectInputStream in;
    private final FileSystem.Statistics statistics;
    private final String uri;
    private final IOStatisticsStore ioStatistics = VendedStatistics.forStream();
    /** The FileSystem's counters, which this stream's are added to at close; may be null. */
    private final IOStatisticsStore fsStatistics;
    private final VectoredReads vectored;
    private volatile boolean closed;
    private final AtomicBoolean aggregated = new AtomicBoolean();

    /**
     * @param in the core stream
     * @param store the store {@code in} reads from (vectored reads go to it directly)
     * @param statistics the FileSystem's byte counters, or {@code null}
     * @param uri the path, for messages
     * @param fsStatistics the FileSystem's IOStatistics, or {@code null}
     * @param merge how vectored reads merge ranges into GETs
     */
    VendedInputStream(
            SeekableObjectInputStream in,
            ObjectStore store,
            FileSystem.Statistics statistics,
            String uri,
            IOStatisticsStore fsStatistics,
            VectoredReads.Merge merge) {
        this.in = in;
        this.statistics = statistics;
        this.uri = uri;
        this.fsStatistics = fsStatistics;
        this.vectored = new VectoredReads(store, in, uri, this::countVectored, merge);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + ": " + uri);
        }
    }

    /** Counts the bytes of one read call that returned {@code n}. */
    private void count(long n) {
        if (n > 0) {
            ioStatistics.incrementCounter(StreamStatisticNames.STREAM_READ_OPERATIONS);
            countBytes(n);
        }
    }

    private void countBytes(long n) {
        ioStatistics.incrementCounter(StreamStatisticNames.STREAM_READ_BYTES, n);
        if (statistics != null) {
            statistics.incrementBytesRead(n);
        }
    }

    /** Counts the bytes of one range of a vectored read, delivered (on a completion thread). */
    private void countVectored(long n) {
        if (n > 0) {
            countBytes(n);
        }
    }

    @Override
    public synchronized void seek(long pos) throws IOException {
        ensureOpen();
        if (pos < 0) {
            throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + pos + ": " + uri);
        }
        if (pos > in.length()) {
            throw new EOFException(
                    FSExceptionMessages.CANNOT_SEEK_PAST_EOF + " " + pos + " > " + in.length() + ": " + uri);
        }
        ioStatistics.incrementCounter(StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS);
        in.seek(pos);
    }

    @Override
    public synchronized long getPos() throws IOException {
        ensureOpen();
        return in.getPos();
    }

    @Override
    public boolean seekToNewSource(long targetPos) {
        return false;
    }

    @Override
    public synchronized int read() throws IOException {
        ensureOpen();
        int b = in.read();
        if (b >= 0) {
            count(1);
        }
        return b;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        validatePositionedReadArgs(in.getPos(), b, off, len);
        if (len == 0) {
            return 0;
        }
        int n = in.read(b, off, len);
        count(n);
        return n;
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        int n = in.read(dst);
        count(n);
        return n;
    }

    /** Reads up to {@code len} bytes at {@code position}; the stream's position does not move. */
    @Override
    public synchronized int read(long position, byte[] buffer, int offset, int length)
            throws IOException {
        ensureOpen();
        validatePositionedReadArgs(position, buffer, offset, length);
        if (length == 0) {
            return 0;
        }
        if (position >= in.length()) {
            return -1;
        }
        int n = (int) Math.min(length, in.length() - position);
        in.readFully(position, buffer, offset, n);
        count(n);
        return n;
    }

    @Override
    public synchronized void readFully(long position, byte[] buffer, int offset, int length)
            throws IOException {
        ensureOpen();
        validatePositionedReadArgs(position, buffer, offset, length);
        if (length == 0) {
            return;
        }
        if (position + length > in.length()) {
            throw new EOFException(
                    FSExceptionMessages.EOF_IN_READ_FULLY
                            + " reading "
                            + length
                            + " bytes at "
                            + position
                            + " of "
                            + in.length()
                            + ": "
                            + uri);
        }
        in.readFully(position, buffer, offset, length);
        count(length);
    }

    /**
     * Reads the ranges with the core's vectored read ({@code getRangesAsync}): the ranges are
     * validated and sorted as Hadoop's {@code VectoredReadUtils.validateAndSortRanges} does
     * ({@link NullPointerException} for a null list or range, {@link EOFException} for a negative
     * offset, {@link IllegalArgumentException} for a negative length or overlapping ranges, all
     * thrown here), and each range's future is set before this method returns. A range reaching
     * past the end of the object fails its future with {@link EOFException}; the others are
     * fetched natively, ranges less than {@link #minSeekForVectorReads()} apart with one GET of at
     * most {@link #maxReadSizeForVectorReads()} bytes, and
     * each future completes with a buffer from {@code allocate}, flipped (position 0, limit the
     * range's length). The stream's position does not move, and other reads may go on meanwhile.
     * Pinned to the ETag seen at open, as the stream's own reads: ranges of an object replaced
     * since fail with the stream's change exception, never mix versions.
     */
    @Override
    public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
            throws IOException {
        readVectored(ranges, allocate, b -> {});
    }

    /**
     * {@link #readVectored(List, IntFunction)}, giving {@code release} the buffers {@code
     * allocate} returned for a read that then failed (an allocator that throws on a later range,
     * a buffer that cannot take its range), so a pooled allocator loses none.
     */
    @Override
    public void readVectored(
            List<? extends FileRange> ranges,
            IntFunction<ByteBuffer> allocate,
            Consumer<ByteBuffer> release)
            throws IOException {
        ensureOpen();
        int n = vectored.read(ranges, allocate, release);
        ioStatistics.incrementCounter(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS);
        ioStatistics.incrementCounter(StreamStatisticNames.STREAM_READ_VECTORED_INCOMING_RANGES, n);
    }

    /**
     * The gap (bytes) at and above which two ranges of a vectored read get GETs of their own:
     * {@code vended.storage.vectored.min-seek}, 4 KiB by default (S3A's default).
     */
    @Override
    public int minSeekForVectorReads() {
        return vectored.merge().minSeek();
    }

    /**
     * The largest GET (bytes) a vectored read merges ranges into (a longer range on its own is
     * one GET): {@code vended.storage.vectored.max-merged}, 1 MiB by default (S3A's default).
     */
    @Override
    public int maxReadSizeForVectorReads() {
        return vectored.merge().maxMerged();
    }

    @Override
    public synchronized long skip(long n) throws IOException {
        ensureOpen();
        return in.skip(n);
    }

    @Override
    public synchronized int available() throws IOException {
        ensureOpen();
        long left = in.length() - in.getPos();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, left));
    }

    /**
     * {@code in:readvectored}, {@code in:readbytebuffer} and {@code iostatistics}: {@code true};
     * anything else {@code false}.
     */
    @Override
    public boolean hasCapability(String capability) {
        switch (capability.toLowerCase(Locale.ROOT)) {
            case StreamCapabilities.VECTOREDIO:
            case StreamCapabilities.READBYTEBUFFER:
            case StreamCapabilities.IOSTATISTICS:
                return true;
            default:
                return false;
        }
    }

    /** The stream's counters, live (see {@link VendedStatistics}). */
    @Override
    public IOStatistics getIOStatistics() {
        return ioStatistics;
    }

    /** Closes the core stream and adds this stream's counters to the FileSystem's (once). */
    @Override
    public void close() {
        closed = true;
        in.close();
        if (!aggregated.compareAndSet(false, true)) {
            return;
        }
        if (fsStatistics != null) {
            fsStatistics.aggregate(ioStatistics);
        }
    }

    @Override
    public String toString() {
        return "VendedInputStream{" + uri + ", closed=" + closed + "}";
    }
}
