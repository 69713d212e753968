package dev.vended.storage;

/**
 * How a {@link SeekableObjectInputStream} turns stream reads into requests ({@link
 * ReadOptions#withReadPolicy}); positioned reads ({@link SeekableObjectInputStream#readFully(long,
 * byte[], int, int)}) always send ranged GETs, sized as with {@link #RANDOM}.
 *
 * <p>The two request shapes differ in consistency when the ETag is pinned (the default, {@link
 * ReadOptions#withPinnedETag}): every ranged GET carries {@code If-Match}, so an object replaced
 * while it is read fails with {@link PreconditionFailedException} at the next block. A streaming
 * GET is checked once, when it is sent; the endpoint then serves the version it started on to the
 * end, so a replaced object fails only at the next GET (after a seek, or a switch to ranged reads),
 * and never mixes bytes of two versions either way.
 */
public enum ReadPolicy {

    /**
     * The default: starts as {@link #SEQUENTIAL} and switches permanently to {@link #RANDOM} at the
     * first backward {@link SeekableObjectInputStream#seek seek} or positioned read at an offset
     * other than the current position. A scan from the start is thus one GET; a Parquet-style
     * reader, which reads the footer at the end first and then seeks back to the column chunks,
     * gets ranged block reads from its second request on. A forward seek or {@code skip} ends the
     * current run without switching. Like Hadoop S3A's {@code fadvise=adaptive}.
     */
    ADAPTIVE,

    /**
     * One streaming GET per sequential run: a stream read that starts where the previous one ended
     * (or at offset 0 of a new stream) continues the GET already open, which runs to the end of the
     * object and whose connection is read by the reading thread itself (no thread hand-off per
     * chunk); a read elsewhere closes it and opens a new one, signed with the credential current
     * then. Best for scans (one request instead of one per block, one connection per run); a
     * stream holds one block in Java and one network buffer (at most about 400 KiB) natively,
     * and while a run is open about 4 file descriptors (its connection and the native reader's
     * event loop: 300 open streams took 1,200): close streams you no longer read.
     */
    SEQUENTIAL,

    /**
     * Ranged reads: every stream read that needs new bytes sends one ranged GET, of {@code
     * max(read size, }{@link ReadOptions#MIN_RANDOM_READ}{@code )} bytes (at most one block) for a
     * random read (near the end of the object too) and of one block ({@link
     * ReadOptions#blockSize()}) for a read continuing the previous one, a range that would run past
     * the end being shifted to end at the object's end (a footer read of up to 64 KiB is one
     * request of 64 KiB); sequential reads keep the
     * GET of the next block in flight ({@link ReadOptions#withReadAhead}). Best for random access,
     * where a long GET would mostly be wasted; a stream holds at most two blocks.
     */
    RANDOM
}
