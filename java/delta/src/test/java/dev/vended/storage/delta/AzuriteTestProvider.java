package dev.vended.storage.delta;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.AzuriteServer;

import java.time.Duration;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * A table's provider of account SAS tokens for Azurite's development account, living {@code
 * test.delta.<table>.ttl-ms} (default 4 s; whole seconds), configured by class name.
 */
public final class AzuriteTestProvider implements StorageOptionsProvider {

    private final Duration ttl;

    /**
     * The constructor VendedFileSystem calls.
     *
     * @param conf the configuration
     * @param table the table name
     */
    public AzuriteTestProvider(Configuration conf, String table) {
        this.ttl = Duration.ofMillis(conf.getLong("test.delta." + table + ".ttl-ms", 4_000L));
    }

    @Override
    public Map<String, String> fetchStorageOptions() {
        long expires = AzuriteServer.sasExpiry(ttl);
        return Map.of(
                "azure_storage_sas_token", AzuriteServer.accountSas(expires, false),
                "expires_at_millis", Long.toString(expires));
    }

    @Override
    public String toString() {
        return "AzuriteTestProvider{ttl=" + ttl + "}";
    }
}
