package dev.vended.storage.examples;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.WriteOptions;
import dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The Java examples of the README, compiled with the examples module: the README shows the
 * regions between {@code // region:NAME} and {@code // endregion} verbatim, and {@code
 * bin/check-readme} fails when the two differ.
 */
public final class ReadmeExamples {

    private ReadmeExamples() {}

    /**
     * A provider backed by the caller's catalog client, an S3-compatible endpoint, and the basic
     * calls.
     *
     * @param catalog the caller's catalog client (any object that loads a table's options)
     * @param endpoint the S3 endpoint URL, e.g. {@code http://127.0.0.1:9000}
     * @throws IOException if the store cannot be opened or a call fails
     */
    static void basics(Catalog catalog, String endpoint) throws IOException {
        // region:java-basics
        // Your catalog client: the complete storage options to use now (or null: "nothing new").
        StorageOptionsProvider provider = new StorageOptionsProvider() {
            @Override
            public Map<String, String> fetchStorageOptions() throws Exception {
                return catalog.loadCredentials("db.orders"); // includes expires_at_millis
            }

            // Optional: equal ids share one native store and credential cache (e.g. all tasks).
            @Override
            public String providerId() {
                return "my-catalog:db.orders";
            }
        };

        // What a non-AWS S3 endpoint needs besides credentials: its URL, a region, plain HTTP.
        Map<String, String> options = new HashMap<>(Map.of(
                "aws_endpoint", endpoint,
                "aws_region", "us-east-1",
                "aws_allow_http", "true"));
        options.putAll(catalog.loadCredentials("db.orders")); // seeds the cache: no call at open

        try (ObjectStore store = ObjectStore.builder("s3://bucket/warehouse/orders")
                .options(options)
                .provider(provider)
                .leadTime(Duration.ofMinutes(5))
                .open()) {
            store.put("part-0.bin", new byte[] {1, 2, 3});
            byte[] back = store.get("part-0.bin");
            byte[] slice = store.getRange("part-0.bin", 0, 2); // bytes [0, 2): end exclusive
            ObjectMeta meta = store.head("part-0.bin");
            for (ObjectMeta m : store.list("")) {
                System.out.println(m.path() + " " + m.size());
            }
            RefreshStats stats = store.refreshStats(); // fetches, failures, expiry, generation...
            System.out.println(back.length + slice.length + meta.size() + " " + stats);
        }
        // endregion
    }

    /**
     * Streams: a multipart upload and a seekable read.
     *
     * @param store an open store
     * @throws IOException if a call fails
     */
    static void streams(ObjectStore store) throws IOException {
        // region:java-streams
        // Uploads 8 MiB parts, 4 at a time, while you write; visible only once close() returns.
        WriteOptions parts = WriteOptions.defaults().withPartSize(8 << 20).withMaxConcurrency(4);
        try (MultipartOutputStream out = store.openOutput("data/big.parquet", parts)) {
            out.write(new byte[64 << 20]);
        }
        // Reads ahead in 1 MiB blocks (ReadOptions), seeks freely, works far above 2 GiB.
        try (SeekableObjectInputStream in = store.openInput("data/big.parquet")) {
            byte[] footer = new byte[8];
            in.readFully(in.length() - footer.length, footer, 0, footer.length);
            in.seek(4);
            int first = in.read();
            System.out.println(first);
        }
        // endregion
    }

    /**
     * A table opened by name through a Lance Namespace server.
     *
     * @param token the catalog's bearer token
     * @throws IOException if the catalog or the store fails
     * @throws InterruptedException if interrupted while the catalog is asked
     */
    static void lance(String token) throws IOException, InterruptedException {
        // region:java-lance
        // A Serializable spec: the protocol runs natively, and refreshes make no Java upcall.
        var table = LanceNamespaceStorageOptionsProvider.builder("https://lance.example", "db", "orders")
                .bearerToken(token)
                .build();
        try (ObjectStore store = table.openTable(Map.of("aws_region", "us-east-1"))) {
            byte[] manifest = store.get("_versions/1.manifest");
            System.out.println(manifest.length);
        }
        // endregion
    }

    /** The caller's catalog client, as far as the examples need one. */
    interface Catalog {
        /**
         * Loads a table's vended storage options.
         *
         * @param table the table name
         * @return the options, including {@code expires_at_millis}
         * @throws IOException if the catalog fails
         */
        Map<String, String> loadCredentials(String table) throws IOException;
    }
}
