package com.example.orders;

// region:provider
import dev.vended.storage.StorageOptionsProvider;
import java.util.Map;

/** Credentials for one table, from your catalog; the store calls it before they expire. */
public final class OrdersCredentials implements StorageOptionsProvider {
    private final CatalogClient catalog;
    private final String table;

    public OrdersCredentials(CatalogClient catalog, String table) {
        this.catalog = catalog;
        this.table = table;
    }

    /** The complete options to use now: credentials plus expires_at_millis (epoch ms). */
    @Override
    public Map<String, String> fetchStorageOptions() throws Exception {
        return catalog.loadCredentials(table); // null means "nothing new"
    }

    /** Equal ids share one native store and credential cache (every Spark task, say). */
    @Override
    public String providerId() {
        return "my-catalog:" + table;
    }
}
// endregion
