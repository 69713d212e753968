package dev.vended.storage.delta;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.FakeGcsServer;

import java.time.Duration;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * A table's provider of tokens for fake-gcs-server's token-checking proxy ({@link #server}, set by
 * the test), living {@code test.delta.<table>.ttl-ms} (default 4 s), configured by class name.
 */
public final class GcsTestProvider implements StorageOptionsProvider {

    /** The emulator whose proxy's tokens are vended (set by the test before any table opens). */
    static volatile FakeGcsServer server;

    private final FakeGcsServer.TokenProvider tokens;

    /**
     * The constructor VendedFileSystem calls.
     *
     * @param conf the configuration
     * @param table the table name
     */
    public GcsTestProvider(Configuration conf, String table) {
        long ttl = conf.getLong("test.delta." + table + ".ttl-ms", 4_000L);
        this.tokens = server.tokenProvider(Duration.ofMillis(ttl));
    }

    @Override
    public Map<String, String> fetchStorageOptions() {
        return tokens.vend();
    }

    @Override
    public String toString() {
        return "GcsTestProvider";
    }
}
