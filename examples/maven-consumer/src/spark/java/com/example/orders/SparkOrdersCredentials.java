package com.example.orders;

// region:spark-provider
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

    /** The constructor the FileSystem calls: the job's configuration and the table's NAME. */
    public SparkOrdersCredentials(Configuration conf, String tableName) throws IOException {
        // Not secret, so in the configuration: where the catalog is and where its token lies.
        URI catalogUrl = URI.create(required(conf, "orders.catalog.url"));
        Path tokenFile = Path.of(required(conf, "orders.catalog.token-file"));
        // The secret itself is read from that file on each JVM (a mounted secret, say): it
        // never goes into the Spark/Hadoop configuration.
        String token = Files.readString(tokenFile).strip();
        CatalogClient catalog = CatalogClient.http(catalogUrl, token);
        this.credentials = new OrdersCredentials(catalog, "db." + tableName);
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        return credentials.fetchStorageOptions();
    }

    @Override
    public String providerId() {
        return credentials.providerId();
    }

    private static String required(Configuration conf, String key) throws IOException {
        String value = conf.getTrimmed(key);
        if (value == null || value.isEmpty()) {
            throw new IOException("set spark.hadoop." + key + " (Hadoop key " + key + ")");
        }
        return value;
    }
}
// endregion
