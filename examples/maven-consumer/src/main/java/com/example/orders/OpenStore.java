package com.example.orders;

// region:open-store
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

public final class OpenStore {
    /** Opens s3://bucket/warehouse/orders on an S3-compatible endpoint and reads it back. */
    public static byte[] roundTrip(CatalogClient catalog, String endpoint) throws Exception {
        OrdersCredentials provider = new OrdersCredentials(catalog, "db.orders");
        // What a non-AWS endpoint needs besides credentials: its URL, a region, plain HTTP.
        Map<String, String> options = new HashMap<>(Map.of(
                "aws_endpoint", endpoint,
                "aws_region", "us-east-1",
                "aws_allow_http", "true"));
        options.putAll(provider.fetchStorageOptions()); // seeds the cache: no call at open
        try (ObjectStore store = ObjectStore.builder("s3://bucket/warehouse/orders")
                .options(options)
                .provider(provider)
                .leadTime(Duration.ofMinutes(5)) // the default; at most half the lifetime
                .open()) {
            store.put("part-0.bin", new byte[] {1, 2, 3});
            ObjectMeta meta = store.head("part-0.bin");
            byte[] slice = store.getRange("part-0.bin", 0, 2); // bytes [0, 2): end exclusive
            for (ObjectMeta m : store.list("")) {
                System.out.println(m.path() + " " + m.size() + " " + meta.size() + slice.length);
            }
            System.out.println(store.refreshStats()); // provider calls, failures, expiry, ...
            return store.get("part-0.bin");
        } catch (StorageException e) { // kind(), isRetryable(); subclasses per kind
            throw new IllegalStateException(e.kind() + ": " + e.getMessage(), e);
        }
    }

    private OpenStore() {}
}
// endregion
