package com.example.orders;

// region:open-table
import dev.vended.storage.ObjectStore;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;
import java.util.Map;

public final class OpenTable {
    /** Opens table db.orders of a Lance Namespace catalog by name: one describe call. */
    public static byte[] readManifest(String catalogUrl, String token) throws Exception {
        // A Serializable spec: the protocol runs natively, refreshes make no Java upcall.
        var table = LanceNamespaceStorageOptionsProvider.builder(catalogUrl, "db", "orders")
                .bearerToken(token)
                .build();
        // The catalog vends credentials (and the location); the endpoint and region are yours.
        try (ObjectStore store = table.openTable(Map.of("aws_region", "us-east-1"))) {
            return store.get("_versions/1.manifest");
        }
    }

    private OpenTable() {}
}
// endregion
