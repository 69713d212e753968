package dev.vended.storage;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The requests behind one {@link SeekableObjectInputStream} under its {@link ReadPolicy} (see the
 * stream's class Javadoc): which GET serves a read (the streaming GET of a sequential run, or
 * ranged GETs) and which range a request that loads the stream's block covers (its start and its
 * size, the adaptive size of ranged reads). The stream keeps the block, the position and the
 * prefetch.
 *
 * <p>Not thread-safe, like the stream: only the stream's thread calls it (the read-ahead thread
 * uses {@link #ranged()} only).
 */
final class ReadSource {

    private final long length;
    /** Size of the stream's block buffers, in bytes. */
    private final int blockSize;
    /** {@link ReadPolicy#ADAPTIVE} and not yet switched to ranged reads. */
    private boolean adaptive;
    /** Sequential runs come from {@link #sequentialGet} (until an adaptive switch). */
    private boolean streaming;
    /** The ranged GETs (pinned to the ETag when asked) and their count. */
    private final RangeReads reads;
    /** The streaming GET of sequential runs, or {@code null} with {@link ReadPolicy#RANDOM}. */
    private final SequentialGet sequentialGet;

    ReadSource(
            ObjectStore store,
            String path,
            long length,
            String ifMatch,
            ReadOptions options,
            int blockSize) {
        this.length = length;
        this.blockSize = blockSize;
        this.reads = new RangeReads(store, path, length, ifMatch);
        this.sequentialGet =
                options.startsStreaming() && length > 0
                        ? new SequentialGet(store, path, length, ifMatch)
                        : null;
        this.streaming = sequentialGet != null;
        this.adaptive = streaming && options.readPolicy() == ReadPolicy.ADAPTIVE;
    }

    /** The ranged GETs (the read-ahead's requests, and the counts). */
    RangeReads ranged() {
        return reads;
    }

    /** Whether sequential runs are read from the streaming GET (not switched to ranged reads). */
    boolean streaming() {
        return streaming;
    }

    /** Streaming GETs opened so far; 0 when streaming is off. */
    long streamingGets() {
        return sequentialGet == null ? 0 : sequentialGet.opens();
    }

    /**
     * {@link ReadPolicy#ADAPTIVE} (at a backward seek or a positioned read elsewhere): from now
     * on ranged reads, with the read-ahead if on. Does nothing with any other policy or once
     * switched.
     */
    void switchToRanged() {
        if (!adaptive) {
            return;
        }
        adaptive = false;
        streaming = false;
        sequentialGet.close();
    }

    /**
     * The size of the request that loads the block for a read at {@code p} needing {@code need}
     * bytes: with streaming on and a sequential read, one block from {@code p} (where the open
     * GET is), cut at the object's end; else the adaptive read-ahead of ranged reads, like S3A's
     * random policy: a whole block when the read continues where the previous one ended (a
     * sequential run: the read-ahead grows to the block); else {@code max(need, }{@link
     * ReadOptions#MIN_RANDOM_READ}{@code )}, at most a block, so a small random read fetches
     * about what it needs, near the end of the object too (a Parquet footer read: the last 64
     * KiB, shifted by {@link #requestStart} to end at the end).
     *
     * @return bytes
     */
    int requestSize(long p, boolean sequential, int need) {
        if (sequential && streaming) {
            return (int) Math.min(blockSize, length - p);
        }
        if (sequential) {
            return blockSize;
        }
        return (int) Math.min(blockSize, Math.max(need, ReadOptions.MIN_RANDOM_READ));
    }

    /**
     * The object offset where a request of {@code n} bytes that loads {@code p} starts: {@code p}
     * with streaming on and a sequential read; else {@code p}, shifted to end at the object's end
     * if need be.
     */
    long requestStart(long p, boolean sequential, int n) {
        if (sequential && streaming) {
            return p;
        }
        return Math.max(0L, Math.min(p, length - n));
    }

    /**
     * Reads exactly {@code [p, p + n)} into {@code b[off, off + n)}: from the streaming GET when
     * the read is sequential and streaming is on, else with ranged GETs.
     */
    void fetch(long p, byte[] b, int off, int n, boolean sequential) throws IOException {
        if (!sequential || !streaming) {
            reads.read(p, b, off, n);
            return;
        }
        reads.counted();
        int k = sequentialGet.read(p, b, off, n);
        if (k < n) {
            throw reads.truncated(p + k);
        }
    }

    /** As {@link #fetch(long, byte[], int, int, boolean)}, into {@code dst} from {@code at}. */
    void fetch(long p, ByteBuffer dst, int at, int n, boolean sequential) throws IOException {
        if (!sequential || !streaming) {
            reads.read(p, dst, at, n);
            return;
        }
        reads.counted();
        int k = sequentialGet.read(p, dst, at, n);
        if (k < n) {
            throw reads.truncated(p + k);
        }
    }

    /**
     * Reads exactly {@code [p, p + n)} ({@code n > 0}) into a block lent by the native side, as
     * {@link #fetch(long, byte[], int, int, boolean)} chooses the GET.
     */
    NativeBlock fetchBlock(long p, int n, boolean sequential) throws IOException {
        if (!sequential || !streaming) {
            return reads.block(p, n);
        }
        reads.counted();
        NativeBlock block = sequentialGet.readBlock(p, n);
        if (block.length() < n) {
            block.release();
            throw reads.truncated(p + block.length());
        }
        return block;
    }

    /** Closes the streaming GET, if any. */
    void close() {
        if (sequentialGet != null) {
            sequentialGet.close();
        }
    }
}
