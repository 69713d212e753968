package dev.vended.storage.testing;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.EndpointProvider;
import dev.vended.storage.testkit.Waits;
import dev.vended.storage.ObjectStore;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;

/**
 * Child-JVM entry point of the JVM-exit test: {@code ExitWithoutCloseMain ENDPOINT BUCKET MODE}.
 * Opens an S3 store whose 2 s credentials come from a provider (so native runtime threads exist and
 * have called Java), does I/O across a refresh, lists the runtime threads, prints {@code
 * MAIN-RETURNING <epoch millis>} and returns from {@code main} without closing anything. Mode
 * {@code inflight} returns while a provider call is still running on a native thread.
 */
public final class ExitWithoutCloseMain {
    private ExitWithoutCloseMain() {}

    /**
     * @param args endpoint, bucket, mode ({@code idle} or {@code inflight})
     */
    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        String bucket = args[1];
        String mode = args[2];
        EndpointProvider provider = new EndpointProvider(endpoint, 2_000);
        Map<String, String> options = AdminClient.endpointOptions(endpoint);
        ObjectStore store =
                ObjectStore.open(
                        "s3://" + bucket + "/exit-" + UUID.randomUUID() + "/",
                        options,
                        provider,
                        Duration.ofMillis(800));
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 7);
        store.put("a.bin", data);
        if (!Arrays.equals(data, store.get("a.bin"))) {
            throw new AssertionError("read back other bytes");
        }
        // Into the lead window (refresh ~800 ms before expiry): a background refresh on a
        // native thread.
        long expiresAt = store.refreshStats().expiresAtMillis();
        Waits.sleepUntil(expiresAt - 700);
        if ("inflight".equals(mode)) {
            provider.delay(20_000);
        }
        store.get("a.bin");
        if (!provider.awaitCalls(2, 10_000)) {
            throw new AssertionError("no refresh on a native thread: " + provider.callLog());
        }
        if (!"inflight".equals(mode)) {
            Thread.sleep(200); // let the refresh finish
            store.get("a.bin");
        }
        System.out.println("provider calls: " + provider.callLog());
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("vended-storage")) {
                System.out.println("THREAD " + t.getName() + " daemon=" + t.isDaemon());
            }
        }
        System.out.println("MAIN-RETURNING " + System.currentTimeMillis());
        System.out.flush();
    }
}
