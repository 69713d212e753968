package com.example.orders;

// region:open-unity-table
import dev.vended.storage.ObjectStore;
import dev.vended.storage.catalog.UnityCatalogStorageOptionsProvider;
import java.util.Map;

public final class OpenUnityTable {
    /** Opens Unity Catalog table main.sales.orders: one getTable, then temporary credentials. */
    public static byte[] readFirstCommit(String unityUrl, String token) throws Exception {
        var table = UnityCatalogStorageOptionsProvider.table(unityUrl, "main.sales.orders")
                .bearerToken(token)
                // The credential scope Unity Catalog vends: READ or READ_WRITE. Without this
                // call the store's access mode decides (option access_mode), READ if it has none.
                .operation(UnityCatalogStorageOptionsProvider.Operation.READ)
                .build();
        // The location comes from the catalog; refreshes run natively, ahead of expiration_time.
        try (ObjectStore store = table.openTable(Map.of("aws_region", "us-east-1"))) {
            return store.get("_delta_log/00000000000000000000.json");
        }
    }

    private OpenUnityTable() {}
}
// endregion
