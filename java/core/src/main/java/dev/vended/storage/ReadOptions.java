package dev.vended.storage;

/**
 * Options of a {@link SeekableObjectInputStream} ({@link ObjectStore#openInput(String,
 * ReadOptions)}). Immutable; the {@code with*} methods return modified copies.
 *
 * <p>The read-ahead block is {@link #DEFAULT_BLOCK_SIZE} (1 MiB) by default: a Parquet footer (its
 * 8-byte tail, then the footer) is served by a ranged GET of the object's last {@link
 * #MIN_RANDOM_READ} bytes (a footer longer than that by a second GET of its own size), and
 * column-chunk reads (usually 1 MiB or more) are either served by one
 * block or go straight into the caller's array, so one-byte and small reads never cross JNI each
 * and a large read is never split into small requests. A random read under a block fetches
 * {@code max(read size, }{@link #MIN_RANDOM_READ}{@code )} bytes, not a whole block. Raise the
 * block for long sequential scans over high-latency links.
 */
public final class ReadOptions {

    /** The default read-ahead block: 1 MiB ({@code 1 << 20} bytes). */
    public static final int DEFAULT_BLOCK_SIZE = 1 << 20;

    /**
     * The least a ranged GET for a random read fetches: 64 KiB ({@code 64 << 10} bytes), or the
     * block size if smaller. A random read (one that does not continue the previous read, near the
     * end of the object too) fetches {@code max(read size, MIN_RANDOM_READ)} bytes, at most a
     * block; a sequential one a whole block (see {@link SeekableObjectInputStream}).
     */
    public static final int MIN_RANDOM_READ = 64 << 10;

    private static final ReadOptions DEFAULTS =
            new ReadOptions(DEFAULT_BLOCK_SIZE, true, true, ReadPolicy.ADAPTIVE, -1L, null);

    private final int blockSize;
    private final boolean pinETag;
    private final boolean readAhead;
    private final ReadPolicy policy;
    private final long knownLength;
    private final String knownETag;

    private ReadOptions(
            int blockSize,
            boolean pinETag,
            boolean readAhead,
            ReadPolicy policy,
            long knownLength,
            String knownETag) {
        this.blockSize = blockSize;
        this.pinETag = pinETag;
        this.readAhead = readAhead;
        this.policy = policy;
        this.knownLength = knownLength;
        this.knownETag = knownETag;
    }

    /**
     * The defaults: 1 MiB blocks, ETag pinned, read-ahead on, {@link ReadPolicy#ADAPTIVE}, length
     * from one HEAD at open.
     *
     * @return the default options
     */
    public static ReadOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Sets the read-ahead block size.
     *
     * @param bytes block size in bytes, at least 1
     * @return a copy with the block size set
     * @throws IllegalArgumentException if {@code bytes < 1}
     */
    public ReadOptions withBlockSize(int bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("blockSize must be at least 1 byte: " + bytes);
        }
        return new ReadOptions(bytes, pinETag, readAhead, policy, knownLength, knownETag);
    }

    /**
     * Whether every ranged read requires the object to still have the ETag it had when the stream
     * was opened (default {@code true}): an object replaced while it is read then fails with
     * {@link PreconditionFailedException} instead of mixing bytes of two versions.
     *
     * @param pin {@code true} to pin the ETag
     * @return a copy with the setting
     */
    public ReadOptions withPinnedETag(boolean pin) {
        return new ReadOptions(blockSize, pin, readAhead, policy, knownLength, knownETag);
    }

    /**
     * Whether sequential ranged block reads ({@link ReadPolicy#RANDOM}, or {@link
     * ReadPolicy#ADAPTIVE} once switched) keep the ranged GET of the next block in flight while the
     * caller consumes the current one (default {@code true}); see {@link
     * SeekableObjectInputStream}. A stream then holds at most two blocks ({@code 2 * blockSize()}
     * bytes). Turn it off for purely random access, where a prefetch would be a wasted request.
     *
     * @param readAhead {@code true} to prefetch the next block of sequential reads
     * @return a copy with the setting
     */
    public ReadOptions withReadAhead(boolean readAhead) {
        return new ReadOptions(blockSize, pinETag, readAhead, policy, knownLength, knownETag);
    }

    /**
     * Sets how stream reads become requests (default {@link ReadPolicy#ADAPTIVE}: one streaming
     * GET per sequential run until the first backward seek or positioned read elsewhere, then
     * ranged block reads); see {@link ReadPolicy} for each policy and its consistency with a
     * pinned ETag.
     *
     * @param policy the policy, not {@code null}
     * @return a copy with the policy set
     * @throws NullPointerException if {@code policy} is {@code null}
     */
    public ReadOptions withReadPolicy(ReadPolicy policy) {
        java.util.Objects.requireNonNull(policy, "policy");
        return new ReadOptions(blockSize, pinETag, readAhead, policy, knownLength, knownETag);
    }

    /**
     * Uses a length (and ETag) the caller already knows, e.g. from a listing, so that opening the
     * stream sends no HEAD request.
     *
     * @param length the object's size in bytes, not negative
     * @param eTag its ETag exactly as {@link ObjectMeta#eTag()} gives it, or {@code null}
     * @return a copy with the length set
     * @throws IllegalArgumentException if {@code length} is negative
     */
    public ReadOptions withKnownLength(long length, String eTag) {
        if (length < 0) {
            throw new IllegalArgumentException("length must not be negative: " + length);
        }
        return new ReadOptions(blockSize, pinETag, readAhead, policy, length, eTag);
    }

    /**
     * The read-ahead block size.
     *
     * @return bytes
     */
    public int blockSize() {
        return blockSize;
    }

    /**
     * Whether reads are pinned to the ETag seen at open.
     *
     * @return {@code true} when pinned
     */
    public boolean pinnedETag() {
        return pinETag;
    }

    /**
     * Whether sequential reads prefetch the next block.
     *
     * @return {@code true} when read-ahead is on
     */
    public boolean readAhead() {
        return readAhead;
    }

    /**
     * How stream reads become requests.
     *
     * @return the policy
     */
    public ReadPolicy readPolicy() {
        return policy;
    }

    /** Whether sequential runs are read from one streaming GET each, at least at first. */
    boolean startsStreaming() {
        return policy != ReadPolicy.RANDOM;
    }

    /**
     * The length given by {@link #withKnownLength}, or {@code -1} (then a HEAD is sent at open).
     *
     * @return bytes, or {@code -1}
     */
    public long knownLength() {
        return knownLength;
    }

    String knownETag() {
        return knownETag;
    }

    @Override
    public String toString() {
        return "ReadOptions{blockSize="
                + blockSize
                + ", pinETag="
                + pinETag
                + ", readAhead="
                + readAhead
                + ", readPolicy="
                + policy
                + ", knownLength="
                + knownLength
                + "}";
    }
}
