package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.RequestStats;
import dev.vended.storage.StorageException;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsLogging;
import org.apache.hadoop.fs.statistics.MeanStatistic;
import org.apache.hadoop.fs.statistics.StoreStatisticNames;

/**
 * The {@link IOStatistics} of a {@link VendedFileSystem}: its own counters ({@link
 * VendedStatistics}) plus the request counters of its tables' stores, counted natively for every
 * HTTP attempt ({@link ObjectStore#requestStats()}), read live on each call:
 *
 * <ul>
 *   <li>{@value StoreStatisticNames#STORE_IO_REQUEST}: HTTP requests (each retry is one);
 *   <li>{@value StoreStatisticNames#ACTION_HTTP_GET_REQUEST}, {@value
 *       StoreStatisticNames#ACTION_HTTP_HEAD_REQUEST}, {@value
 *       StoreStatisticNames#ACTION_HTTP_PUT_REQUEST}, {@value
 *       StoreStatisticNames#ACTION_HTTP_POST_REQUEST}, {@value
 *       StoreStatisticNames#ACTION_HTTP_DELETE_REQUEST}: the requests of each method;
 *   <li>{@value StoreStatisticNames#STORE_IO_RETRY}: attempts that failed in a way the client
 *       retries (status 5xx, 429, 408, or a transport error before the answer): the retries made,
 *       unless a request exhausted its retry budget ({@link RequestStats#retryableFailures()});
 *   <li>{@value StoreStatisticNames#STORE_IO_THROTTLED}: answers 429 or 503;
 *   <li>{@value #CREDENTIAL_REFRESH}: calls of the table's credential provider;
 *   <li>{@value #CHECKSUM_MATCHED}, {@value #CHECKSUM_MISMATCH}: whole-object reads whose bytes
 *       had, or did not have, the checksum the service stores (docs/integrity.md).
 * </ul>
 *
 * <p>Each is the sum over this FileSystem's tables whose store is open, and is also given per table
 * as {@code table.<table name>.<counter>} (for example {@code table.sales.store_io_request}). The
 * stores are shared JVM-wide ({@link TableStores}): these counters are the JVM's for those tables
 * since their stores were opened, not this instance's alone; the other counters are this
 * instance's.
 */
final class StoreStatistics implements IOStatistics {

    /** The counter of credential provider calls. */
    static final String CREDENTIAL_REFRESH = "credential_refresh";

    /** The counter of whole-object reads whose checksum matched the stored one. */
    static final String CHECKSUM_MATCHED = "checksum_matched";

    /** The counter of whole-object reads whose checksum did not (each read again, or failed). */
    static final String CHECKSUM_MISMATCH = "checksum_mismatch";

    /** The prefix of per-table counters: {@code table.<name>.<counter>}. */
    static final String TABLE_PREFIX = "table.";

    private final IOStatistics own;
    private final Supplier<Map<String, ObjectStore>> stores;

    /**
     * @param own the FileSystem's own counters
     * @param stores its tables' open stores by table name, asked on each read
     */
    StoreStatistics(IOStatistics own, Supplier<Map<String, ObjectStore>> stores) {
        this.own = own;
        this.stores = stores;
    }

    /** The store counters of {@code s}, by counter name. */
    static Map<String, Long> counters(RequestStats s) {
        Map<String, Long> m = new TreeMap<>();
        m.put(StoreStatisticNames.STORE_IO_REQUEST, s.requests());
        m.put(StoreStatisticNames.ACTION_HTTP_GET_REQUEST, s.get());
        m.put(StoreStatisticNames.ACTION_HTTP_HEAD_REQUEST, s.head());
        m.put(StoreStatisticNames.ACTION_HTTP_PUT_REQUEST, s.put());
        m.put(StoreStatisticNames.ACTION_HTTP_POST_REQUEST, s.post());
        m.put(StoreStatisticNames.ACTION_HTTP_DELETE_REQUEST, s.delete());
        m.put(StoreStatisticNames.STORE_IO_RETRY, s.retryableFailures());
        m.put(StoreStatisticNames.STORE_IO_THROTTLED, s.throttled());
        m.put(CREDENTIAL_REFRESH, s.credentialRefreshes());
        m.put(CHECKSUM_MATCHED, s.checksumsMatched());
        m.put(CHECKSUM_MISMATCH, s.checksumMismatches());
        return m;
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> out = new TreeMap<>(own.counters());
        Map<String, Long> sums = counters(new RequestStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        for (Map.Entry<String, ObjectStore> t : stores.get().entrySet()) {
            RequestStats s;
            try {
                s = t.getValue().requestStats();
            } catch (StorageException | IllegalStateException e) {
                continue; // closed meanwhile: nothing to add
            }
            for (Map.Entry<String, Long> c : counters(s).entrySet()) {
                out.put(TABLE_PREFIX + t.getKey() + "." + c.getKey(), c.getValue());
                sums.merge(c.getKey(), c.getValue(), Long::sum);
            }
        }
        out.putAll(sums);
        return Collections.unmodifiableMap(out);
    }

    @Override
    public Map<String, Long> gauges() {
        return own.gauges();
    }

    @Override
    public Map<String, Long> minimums() {
        return own.minimums();
    }

    @Override
    public Map<String, Long> maximums() {
        return own.maximums();
    }

    @Override
    public Map<String, MeanStatistic> meanStatistics() {
        return own.meanStatistics();
    }

    @Override
    public String toString() {
        return IOStatisticsLogging.ioStatisticsToString(this);
    }
}
