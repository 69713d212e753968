package dev.vended.storage.hadoop;

import static org.apache.hadoop.fs.statistics.impl.IOStatisticsBinding.iostatisticsStore;

import org.apache.hadoop.fs.statistics.StoreStatisticNames;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * The {@link org.apache.hadoop.fs.statistics.IOStatistics} counters of {@link VendedFileSystem}
 * and its input streams: only counters that the code increments, under Hadoop's standard names.
 *
 * <p>Streams count {@value StreamStatisticNames#STREAM_READ_BYTES} (bytes returned to the caller
 * by every read, positioned and vectored included), {@value
 * StreamStatisticNames#STREAM_READ_OPERATIONS} (read calls that returned bytes), {@value
 * StreamStatisticNames#STREAM_READ_SEEK_OPERATIONS} ({@code seek} calls), {@value
 * StreamStatisticNames#STREAM_READ_VECTORED_OPERATIONS} ({@code readVectored} calls) and {@value
 * StreamStatisticNames#STREAM_READ_VECTORED_INCOMING_RANGES} (the ranges they were given). The
 * FileSystem counts its operations ({@code op_*}) and adds each stream's counters when the stream
 * is closed. HTTP requests, retries, throttling and credential refreshes are counted natively, per
 * table store, and added by {@link StoreStatistics}.
 */
final class VendedStatistics {

    /** The counters of an input stream. */
    static final String[] STREAM_COUNTERS = {
        StreamStatisticNames.STREAM_READ_BYTES,
        StreamStatisticNames.STREAM_READ_OPERATIONS,
        StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS,
        StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS,
        StreamStatisticNames.STREAM_READ_VECTORED_INCOMING_RANGES,
    };

    private VendedStatistics() {}

    /**
     * New counters for one input stream, all zero.
     *
     * @return the store
     */
    static IOStatisticsStore forStream() {
        return iostatisticsStore().withCounters(STREAM_COUNTERS).build();
    }

    /**
     * New counters for one FileSystem instance, all zero: its operations, the HEADs of opens and
     * the sums of its closed streams' counters.
     *
     * @return the store
     */
    static IOStatisticsStore forFileSystem() {
        return iostatisticsStore()
                .withCounters(
                        StoreStatisticNames.OP_OPEN,
                        StoreStatisticNames.OP_CREATE,
                        StoreStatisticNames.OP_GET_FILE_STATUS,
                        StoreStatisticNames.OP_LIST_STATUS,
                        StoreStatisticNames.OP_LIST_FILES,
                        StoreStatisticNames.OP_MKDIRS,
                        StoreStatisticNames.OP_DELETE,
                        StoreStatisticNames.OP_RENAME)
                .withCounters(STREAM_COUNTERS)
                .build();
    }
}
