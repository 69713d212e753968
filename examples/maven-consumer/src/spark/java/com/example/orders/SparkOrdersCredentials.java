package com.example.orders;

import dev.vended.storage.StorageOptionsProvider;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * OrdersCredentials for Spark: VendedFileSystem creates one per table and JVM, named by
 * spark.hadoop.vended.storage.table.NAME.provider.class.
 */
public final class SparkOrdersCredentials implements StorageOptionsProvider {
    private final OrdersCredentials credentials;

    // region:spark-provider
    /** The constructor the FileSystem calls: the job's configuration and the table's name. */
    public SparkOrdersCredentials(Configuration conf, String tableName) throws IOException {
        // Not secret, so in the table's provider.conf.<key> settings: the catalog's URL and
        // the path of the file holding its token.
        URI catalogUrl = URI.create(setting(conf, tableName, "catalog-url"));
        Path tokenFile = Path.of(setting(conf, tableName, "token-file"));
        // The secret itself is read from that file on each JVM (a mounted secret, say): it
        // never goes into the Spark/Hadoop configuration.
        String token = Files.readString(tokenFile).strip();
        CatalogClient catalog = CatalogClient.http(catalogUrl, token);
        this.credentials = new OrdersCredentials(catalog, "db." + tableName);
    }
    // endregion

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        return credentials.fetchStorageOptions();
    }

    @Override
    public String providerId() {
        return credentials.providerId();
    }

    /**
     * Setting {@code key} of the table's provider: the Hadoop key
     * vended.storage.table.TABLE.provider.conf.KEY (VendedFileSystem.providerConf(conf, table)
     * gives them all as a map, to code compiled against vended-storage-hadoop).
     */
    private static String setting(Configuration conf, String table, String key)
            throws IOException {
        String name = "vended.storage.table." + table + ".provider.conf." + key;
        String value = conf.getTrimmed(name);
        if (value == null || value.isEmpty()) {
            throw new IOException("set spark.hadoop." + name + " (Hadoop key " + name + ")");
        }
        return value;
    }
}
