package dev.vended.storage;

/**
 * The request counts of one {@link SeekableObjectInputStream} at a moment (tests: which reads
 * cost a request, and which the block or the prefetch served).
 *
 * @param nativeReads native reads so far, ranged or streaming (small reads must not cross JNI
 *     each)
 * @param rangedBytes bytes asked for by ranged GETs so far, prefetches included
 * @param streamingGets streaming GETs opened so far; 0 when streaming is off
 * @param prefetchesUsed blocks served by a prefetch so far
 * @param prefetchesTakenBack prefetches taken back from a busy pool's queue and read on the
 *     caller's thread
 * @param prefetchPending whether a prefetch is pending
 */
record StreamCounters(
        long nativeReads,
        long rangedBytes,
        long streamingGets,
        long prefetchesUsed,
        long prefetchesTakenBack,
        boolean prefetchPending) {}
