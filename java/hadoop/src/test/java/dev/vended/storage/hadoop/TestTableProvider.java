package dev.vended.storage.hadoop;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;

/**
 * A provider configured by class name ({@code vended.storage.table.<name>.provider.class}), as a
 * user's catalog client would be: it reads its own settings {@code test.vended.<table>.mode}
 * ({@code sts}: the endpoint's STS AssumeRole; {@code issue}: admin-issued keys),
 * {@code .ttl-ms} and {@code .scope} ({@code bucket/prefix}) from the configuration, and vends
 * from the endpoint {@link #server} named when it was created. Counts calls and records the key ids per table name.
 */
public final class TestTableProvider implements StorageOptionsProvider {

    /** The endpoint every instance vends from (set by the test before the FileSystem opens). */
    public static volatile LocalS3Server server;

    private static final Map<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();
    private static final Map<String, List<String>> KEYS = new ConcurrentHashMap<>();
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final LocalS3Server endpoint;
    private final String table;
    private final boolean sts;
    private final long ttlMillis;
    private final String scope;

    /** The constructor the FileSystem prefers. */
    public TestTableProvider(Configuration conf, String table) {
        this.endpoint = server;
        this.table = table;
        this.sts = "sts".equals(conf.get("test.vended." + table + ".mode", "issue"));
        this.ttlMillis = conf.getLong("test.vended." + table + ".ttl-ms", 3_600_000L);
        this.scope = conf.get("test.vended." + table + ".scope");
        INSTANCES.incrementAndGet();
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        CALLS.computeIfAbsent(table, k -> new AtomicInteger()).incrementAndGet();
        VendedCredentials c =
                sts
                        ? endpoint.assumeRole((int) Math.max(1, ttlMillis / 1000))
                        : endpoint.issueCredentials(ttlMillis, scope);
        KEYS.computeIfAbsent(table, k -> new CopyOnWriteArrayList<>()).add(c.accessKeyId());
        return endpoint.options(c);
    }

    /** Provider calls made for {@code table} in this JVM. */
    public static int calls(String table) {
        AtomicInteger n = CALLS.get(table);
        return n == null ? 0 : n.get();
    }

    /** Access key ids vended for {@code table}, oldest first. */
    public static List<String> keys(String table) {
        return List.copyOf(KEYS.getOrDefault(table, List.of()));
    }

    /** Instances created in this JVM (one per table configuration). */
    public static int instances() {
        return INSTANCES.get();
    }
}
