package dev.vended.storage;

/**
 * A byte range {@code [start, endExclusive)} of an object, for {@link ObjectStore#getRanges(String,
 * java.util.List)}.
 *
 * @param start the first byte, not negative
 * @param endExclusive one past the last byte, greater than {@code start}; at most {@code start +
 *     Integer.MAX_VALUE - 8} (one Java array per range)
 */
public record ByteRange(long start, long endExclusive) {

    /**
     * Validates the range.
     *
     * @param start the first byte
     * @param endExclusive one past the last byte
     * @throws IllegalArgumentException if {@code start < 0} or {@code endExclusive <= start}
     */
    public ByteRange {
        if (start < 0) {
            throw new IllegalArgumentException("range start must not be negative: " + start);
        }
        if (endExclusive <= start) {
            throw new IllegalArgumentException(
                    "range end (" + endExclusive + ") must be greater than its start (" + start + ")");
        }
    }

    /**
     * The range's length.
     *
     * @return bytes
     */
    public long length() {
        return endExclusive - start;
    }
}
