package dev.vended.storage;

/**
 * Options of a {@link MultipartOutputStream} ({@link ObjectStore#openOutput(String,
 * WriteOptions)}). Immutable; the {@code with*} methods return modified copies.
 *
 * <p>Memory: the data a stream holds is at most {@code partSize * (maxConcurrency + 1)} bytes
 * natively (the parts uploading and the part being filled) plus the write call being handed over
 * (at most {@link MultipartOutputStream#BUFFER_SIZE} bytes), and the stream's own {@link
 * MultipartOutputStream#BUFFER_SIZE} buffer on the Java heap: 47 MiB with the defaults. The
 * process grows by more than that: each upload connection's buffers, the native runtime's
 * threads and the allocator's cached pages add up to about 10 MiB (a 2.25 GiB upload with the
 * defaults grew the process by 52-56 MiB, a 1 GiB upload by 28-42 MiB). Budget {@code partSize *
 * (maxConcurrency + 1) + 16 MiB} per stream, plus 1 MiB of heap.
 */
public final class WriteOptions {

    /** Write mode: replace any existing object. */
    static final int MODE_OVERWRITE = 0;
    /** Write mode: fail if an object exists. */
    static final int MODE_CREATE = 1;
    /** Write mode: fail unless the object's ETag matches. */
    static final int MODE_IF_MATCH = 2;

    /** The default part size: 5 MiB (S3's smallest part), in bytes. */
    public static final long DEFAULT_PART_SIZE = 5L << 20;
    /** The default number of parts uploading at once: 8. */
    public static final int DEFAULT_MAX_CONCURRENCY = 8;

    private static final WriteOptions DEFAULTS =
            new WriteOptions(DEFAULT_PART_SIZE, DEFAULT_MAX_CONCURRENCY, MODE_OVERWRITE, null);

    private final long partSize;
    private final int maxConcurrency;
    private final int mode;
    private final String eTag;

    private WriteOptions(long partSize, int maxConcurrency, int mode, String eTag) {
        this.partSize = partSize;
        this.maxConcurrency = maxConcurrency;
        this.mode = mode;
        this.eTag = eTag;
    }

    /**
     * The defaults: 5 MiB parts, 8 parts uploading at once, overwrite.
     *
     * @return the default options
     */
    public static WriteOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Sets the multipart part size. The store checks it when the stream is opened: S3 and GCS
     * refuse parts below 5 MiB or above 5 GiB ({@link InvalidOptionsException} naming {@code
     * part_size}); local files and memory accept any size.
     *
     * @param bytes part size in bytes, or {@code 0} for the default ({@link #DEFAULT_PART_SIZE})
     * @return a copy with the part size set
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public WriteOptions withPartSize(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("partSize must not be negative: " + bytes);
        }
        return new WriteOptions(
                bytes == 0 ? DEFAULT_PART_SIZE : bytes, maxConcurrency, mode, eTag);
    }

    /**
     * Sets how many parts may upload at once; a write blocks while that many are in flight.
     *
     * @param parts at least 1, or {@code 0} for the default ({@link #DEFAULT_MAX_CONCURRENCY})
     * @return a copy with the concurrency set
     * @throws IllegalArgumentException if {@code parts} is negative
     */
    public WriteOptions withMaxConcurrency(int parts) {
        if (parts < 0) {
            throw new IllegalArgumentException("maxConcurrency must not be negative: " + parts);
        }
        return new WriteOptions(
                partSize, parts == 0 ? DEFAULT_MAX_CONCURRENCY : parts, mode, eTag);
    }

    /**
     * Create only: closing the stream fails with {@link ObjectAlreadyExistsException} if an object
     * exists at the path. Atomic at the store for objects up to one part (one conditional PUT). A
     * multipart object is checked with a HEAD before the upload completes, and its completion
     * request carries the condition: atomic on S3, on Azure with a SAS or bearer token and on GCS;
     * with an Azure shared key (whose signature covers the condition) the HEAD is the only guard,
     * not atomic (docs/streams-and-async.md).
     *
     * @return a copy in create-only mode
     */
    public WriteOptions withCreateOnly() {
        return new WriteOptions(partSize, maxConcurrency, MODE_CREATE, null);
    }

    /**
     * Replace only the object whose ETag is {@code eTag}: closing the stream fails with {@link
     * PreconditionFailedException} otherwise (atomicity as {@link #withCreateOnly()}, except that
     * a multipart if-match write on GCS is only checked with a HEAD).
     *
     * @param eTag the expected ETag, exactly as {@link ObjectMeta#eTag()} gives it
     * @return a copy in if-match mode
     * @throws NullPointerException if {@code eTag} is null
     */
    public WriteOptions withIfMatch(String eTag) {
        return new WriteOptions(
                partSize,
                maxConcurrency,
                MODE_IF_MATCH,
                java.util.Objects.requireNonNull(eTag, "eTag"));
    }

    /**
     * The part size that will be used ({@link #DEFAULT_PART_SIZE} unless set).
     *
     * @return bytes
     */
    public long partSize() {
        return partSize;
    }

    /**
     * The number of parts that may upload at once ({@link #DEFAULT_MAX_CONCURRENCY} unless set).
     *
     * @return parts
     */
    public int maxConcurrency() {
        return maxConcurrency;
    }

    /**
     * Whether the stream creates only.
     *
     * @return {@code true} in create-only mode
     */
    public boolean createOnly() {
        return mode == MODE_CREATE;
    }

    /**
     * The ETag the replaced object must have, or {@code null}.
     *
     * @return the ETag or {@code null}
     */
    public String ifMatch() {
        return mode == MODE_IF_MATCH ? eTag : null;
    }

    int mode() {
        return mode;
    }

    @Override
    public String toString() {
        return "WriteOptions{partSize="
                + partSize
                + ", maxConcurrency="
                + maxConcurrency
                + ", mode="
                + (mode == MODE_CREATE ? "createOnly" : mode == MODE_IF_MATCH ? "ifMatch" : "overwrite")
                + "}";
    }
}
