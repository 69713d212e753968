package com.example.orders;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Extension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Runs the README's examples (OpenStore, Streams, Async) against the local endpoint. */
class ExamplesTest {
    @RegisterExtension
    static LocalS3Extension s3 = LocalS3Extension.create().bucket("bucket");

    @Test
    @Timeout(120)
    void theReadmeExamplesRun() throws Exception {
        CatalogClient catalog = table -> s3.mintCredentials(Duration.ofMinutes(15)).toOptions();
        assertArrayEquals(new byte[] {1, 2, 3}, OpenStore.roundTrip(catalog, s3.endpoint()));
        try (ObjectStore store = ObjectStore.open(s3.uri("warehouse/"), s3.storageOptions())) {
            assertEquals(0, Streams.writeThenSeek(store));
            store.put("a", new byte[10]);
            store.put("b", new byte[20]);
            assertEquals(30, Async.totalBytes(store, List.of("a", "b")));
        }
    }
}
