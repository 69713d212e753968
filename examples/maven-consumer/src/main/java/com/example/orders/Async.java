package com.example.orders;

// region:async
import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ObjectStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public final class Async {
    /** Reads many objects at once; no Java thread waits while the requests run. */
    public static long totalBytes(ObjectStore store, List<String> paths) throws Exception {
        ExecutorService callbacks = Executors.newFixedThreadPool(2); // where futures complete
        try (AsyncObjectStore async = AsyncObjectStore.of(store, callbacks, 64)) { // 64 in flight
            List<CompletableFuture<byte[]>> reads =
                    paths.stream().map(async::getAsync).toList();
            long total = 0;
            for (CompletableFuture<byte[]> read : reads) {
                total += read.get().length; // ExecutionException wraps a StorageException
            }
            return total;
        } finally {
            callbacks.shutdown();
        }
    }

    private Async() {}
}
// endregion
