package com.example.orders;

// region:open-store
import dev.vended.storage.ObjectStore;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

public final class OpenStore {
    /** Opens s3://bucket/warehouse/orders on an S3-compatible endpoint and reads it back. */
    public static byte[] roundTrip(CatalogClient catalog, String endpoint) throws Exception {
        OrdersCredentials provider = new OrdersCredentials(catalog, "db.orders");
        // What a non-AWS endpoint needs besides credentials: its URL, a region, plain HTTP.
        Map<String, String> options = new HashMap<>(Map.of(
                "aws_endpoint", endpoint, "aws_region", "us-east-1", "aws_allow_http", "true"));
        // Seeds the cache (no call at open); a provider may answer null ("nothing new").
        options.putAll(Objects.requireNonNullElse(provider.fetchStorageOptions(), Map.of()));
        try (ObjectStore store = ObjectStore.builder("s3://bucket/warehouse/orders")
                .options(options)
                .provider(provider) // .leadTime(..): 5 min by default, at most half the lifetime
                .open()) {
            store.put("part-0.bin", new byte[] {1, 2, 3});
            byte[] firstTwo = store.getRange("part-0.bin", 0, 2); // [0, 2): end exclusive
            System.out.println(firstTwo.length + " " + store.refreshStats()); // calls, expiry...
            return store.get("part-0.bin"); // a failure: StorageException, kind(), isRetryable()
        }
    }

    private OpenStore() {}
}
// endregion
