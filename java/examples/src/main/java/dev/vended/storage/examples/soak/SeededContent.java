package dev.vended.storage.examples.soak;

/**
 * The content of every object the soak writes: byte {@code i} of an object with content seed {@code
 * s} is a function of {@code s} and {@code i} only, so any range can be checked without keeping
 * what was written.
 */
final class SeededContent {

    private SeededContent() {}

    /**
     * Fills {@code dst[off, off + len)} with the object's bytes from {@code position} on.
     *
     * @param seed the object's content seed
     * @param position the object offset of {@code dst[off]}
     */
    static void fill(long seed, long position, byte[] dst, int off, int len) {
        long word = position >>> 3;
        long bits = FaultSchedule.mix(seed + word * 0x9E3779B97F4A7C15L);
        for (int i = 0; i < len; i++) {
            long p = position + i;
            if ((p >>> 3) != word) {
                word = p >>> 3;
                bits = FaultSchedule.mix(seed + word * 0x9E3779B97F4A7C15L);
            }
            dst[off + i] = (byte) (bits >>> ((p & 7) * 8));
        }
    }

    /**
     * The object's bytes {@code [position, position + len)}.
     *
     * @param seed the object's content seed
     * @param position the first object offset
     * @param len bytes
     * @return a new array
     */
    static byte[] bytes(long seed, long position, int len) {
        byte[] b = new byte[len];
        fill(seed, position, b, 0, len);
        return b;
    }

    /**
     * The first offset in {@code actual[off, off + len)} whose byte differs from the object's
     * content at {@code position}, as an offset into the object; or {@code -1} if all match.
     */
    static long firstMismatch(long seed, long position, byte[] actual, int off, int len) {
        byte[] expected = bytes(seed, position, len);
        int m = java.util.Arrays.mismatch(expected, 0, len, actual, off, off + len);
        return m < 0 ? -1 : position + m;
    }
}
