package dev.vended.storage.bench;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;

/**
 * Issue 12, async: 1 KiB GETs with 64 in flight, issued from one thread, through {@link
 * AsyncObjectStore#getAsync} (default: 64 in flight, its own I/O pool) and through the SDK's {@code
 * S3AsyncClient} (Netty, 64 connections, {@code AsyncResponseTransformer.toBytes()}), against one
 * local S3 endpoint. Paired rounds: each round runs both clients back to back, the order
 * alternating, so the load of the moment hits both; prints every round, the per-round ratio and
 * the medians.
 *
 * <pre>
 * java -Dvended.storage.localS3=target/release/local-s3 \
 *   -cp 'java/benchmarks/target/classes:java/benchmarks/target/lib/*' \
 *   dev.vended.storage.bench.AsyncGets [GETs per round, 5000] [rounds, 5] [log dir, /tmp]
 * </pre>
 */
public final class AsyncGets {

    private static final int IN_FLIGHT = 64;
    private static final int SIZE = 1024;

    private AsyncGets() {}

    public static void main(String[] argv) throws Exception {
        int n = argv.length > 0 ? Integer.parseInt(argv[0]) : 5000;
        int rounds = argv.length > 1 ? Integer.parseInt(argv[1]) : 5;
        Path logDir = Path.of(argv.length > 2 ? argv[2] : "/tmp");
        String bucket = "async";
        byte[] payload = BenchEnv.randomBytes(SIZE, 3);
        try (LocalS3Server s3 = LocalS3Server.start(
                        LocalS3Server.binaryFromProperty(), bucket, logDir.resolve("async-gets-local-s3.log"));
                ObjectStore store = StreamClients.vended(s3.endpoint(), bucket);
                AsyncObjectStore async = AsyncObjectStore.of(store);
                S3AsyncClient sdk = StreamClients.sdkAsync(s3.endpoint(), false)) {
            store.put("k1", payload);
            Function<Integer, CompletableFuture<byte[]>> vended = i -> async.getAsync("k1");
            Function<Integer, CompletableFuture<byte[]>> sdkGet = i -> sdk.getObject(
                    GetObjectRequest.builder().bucket(bucket).key("k1").build(),
                    AsyncResponseTransformer.toBytes()).thenApply(r -> r.asByteArrayUnsafe());
            // Warm-up: one round each, not reported.
            run(vended, Math.min(n, 2000));
            run(sdkGet, Math.min(n, 2000));
            List<Double> v = new ArrayList<>();
            List<Double> s = new ArrayList<>();
            List<Double> ratio = new ArrayList<>();
            System.out.printf(Locale.ROOT, "%d GETs of %d B per round, %d in flight from one thread, load1 at start %.2f%n",
                    n, SIZE, IN_FLIGHT, BenchMain.loadAverage());
            for (int r = 0; r < rounds; r++) {
                double a;
                double b;
                if (r % 2 == 0) {
                    a = run(vended, n);
                    b = run(sdkGet, n);
                } else {
                    b = run(sdkGet, n);
                    a = run(vended, n);
                }
                v.add(a);
                s.add(b);
                ratio.add(a / b);
                System.out.printf(Locale.ROOT, "round %d: AsyncObjectStore %.0f GET/s, S3AsyncClient %.0f GET/s, ratio %.2f (load1 %.2f)%n",
                        r + 1, a, b, a / b, BenchMain.loadAverage());
            }
            System.out.printf(Locale.ROOT, "median: AsyncObjectStore %.0f GET/s, S3AsyncClient %.0f GET/s, ratio (median of rounds) %.2f; load1 %.2f%n",
                    median(v), median(s), median(ratio), BenchMain.loadAverage());
        }
    }

    /** {@code n} GETs, at most {@value #IN_FLIGHT} outstanding, from this thread; GET/s. */
    static double run(Function<Integer, CompletableFuture<byte[]>> get, int n) throws Exception {
        Semaphore permits = new Semaphore(IN_FLIGHT);
        AtomicInteger bad = new AtomicInteger();
        AtomicReference<Throwable> error = new AtomicReference<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            permits.acquire();
            get.apply(i).whenComplete((b, e) -> {
                if (e != null) {
                    error.compareAndSet(null, e);
                } else if (b.length != SIZE) {
                    bad.incrementAndGet();
                }
                permits.release();
            });
        }
        if (!permits.tryAcquire(IN_FLIGHT, 120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("GETs still outstanding after 120 s");
        }
        double perSecond = n / ((System.nanoTime() - t0) / 1e9);
        if (error.get() != null) {
            throw new IllegalStateException("a GET failed", error.get());
        }
        if (bad.get() > 0) {
            throw new IllegalStateException(bad.get() + " GETs returned the wrong length");
        }
        return perSecond;
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }
}
