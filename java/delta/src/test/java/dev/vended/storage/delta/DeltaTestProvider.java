package dev.vended.storage.delta;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.AdminClient;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.hadoop.conf.Configuration;

/**
 * A table's provider configured by class name, as a user's catalog client would be: it issues
 * credentials at the local endpoint named by {@code test.delta.endpoint}, living {@code
 * test.delta.<table>.ttl-ms} (default 4 s), scoped to {@code test.delta.<table>.scope} if set. Reads
 * nothing but the configuration, so child JVMs use it too. Records the key ids it vended per table.
 */
public final class DeltaTestProvider implements StorageOptionsProvider {

    private static final Map<String, List<String>> KEYS = new ConcurrentHashMap<>();

    private final String endpoint;
    private final String table;
    private final long ttlMillis;
    private final String scope;

    /**
     * The constructor VendedFileSystem calls.
     *
     * @param conf the configuration
     * @param table the table name
     */
    public DeltaTestProvider(Configuration conf, String table) {
        this.endpoint = conf.get("test.delta.endpoint");
        this.table = table;
        this.ttlMillis = conf.getLong("test.delta." + table + ".ttl-ms", 4_000L);
        this.scope = conf.get("test.delta." + table + ".scope");
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        Map<String, String> options = AdminClient.issue(endpoint, ttlMillis, scope);
        KEYS.computeIfAbsent(table, k -> new CopyOnWriteArrayList<>())
                .add(options.get("aws_access_key_id"));
        return options;
    }

    /** The key ids vended for {@code table} in this JVM. */
    static List<String> keys(String table) {
        return List.copyOf(KEYS.getOrDefault(table, List.of()));
    }

    @Override
    public String toString() {
        return "DeltaTestProvider{" + table + "}";
    }
}
