package dev.vended.storage.bench.spark;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.LocalS3Server;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;

/**
 * The vended side's credentials: each call mints a key from the benchmark's local endpoint (admin
 * API) living {@code bench.vended.ttl-ms} (default 60 s), so {@code VendedFileSystem} refreshes
 * natively during the run. One JVM: the endpoint is handed over in a static field.
 */
public final class BenchProvider implements StorageOptionsProvider {

    static volatile LocalS3Server server;
    static final AtomicInteger CALLS = new AtomicInteger();

    private final long ttlMillis;

    /**
     * The constructor {@code VendedFileSystem} calls.
     *
     * @param conf the job's configuration ({@code bench.vended.ttl-ms})
     * @param table the table name (unused)
     */
    public BenchProvider(Configuration conf, String table) {
        this.ttlMillis = conf.getLong("bench.vended.ttl-ms", 60_000L);
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        LocalS3Server s = server;
        if (s == null) {
            throw new IllegalStateException("BenchProvider: the benchmark's endpoint is not set");
        }
        CALLS.incrementAndGet();
        return s.issueCredentials(ttlMillis, null).toOptions();
    }
}
