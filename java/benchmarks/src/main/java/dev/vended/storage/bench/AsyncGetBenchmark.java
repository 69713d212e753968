package dev.vended.storage.bench;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;

import java.nio.file.Files;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;

/**
 * Issue 12, async: 1 KiB GETs, {@value #IN_FLIGHT} in flight, all issued from the one benchmark
 * thread, against a local S3 endpoint ({@code local-s3 --in-memory}) this benchmark starts. One
 * op is one GET (an invocation issues {@value #GETS} and waits for the last). Clients:
 *
 * <ul>
 *   <li>{@code native}: {@link AsyncObjectStore#getAsync} (native completion, callbacks on {@link
 *       ForkJoinPool#commonPool()});
 *   <li>{@code pool}: the implementation native completion replaced (commit 3c458a5), rebuilt here:
 *       each blocking {@link ObjectStore#get} on a pool of {@value #IN_FLIGHT} Java threads, the
 *       future completed on {@link ForkJoinPool#commonPool()};
 *   <li>{@code sdk}: the AWS SDK's {@code S3AsyncClient} (Netty, 64 connections, {@code
 *       AsyncResponseTransformer.toBytes()}).
 * </ul>
 *
 * <pre>
 * java -Dvended.storage.localS3=target/release/local-s3 \
 *   -cp 'java/benchmarks/target/classes:java/benchmarks/target/lib/*' \
 *   org.openjdk.jmh.Main AsyncGetBenchmark -f 1 -wi 3 -w 2 -i 5 -r 3
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class AsyncGetBenchmark {

    static final int IN_FLIGHT = 64;
    static final int GETS = 2000;
    static final int SIZE = 1024;
    static final String BUCKET = "asyncbench";

    @Param({"native", "pool", "sdk"})
    public String client;

    LocalS3Server s3;
    ObjectStore store;
    AsyncObjectStore async;
    ExecutorService pool;
    S3AsyncClient sdk;
    Supplier<CompletableFuture<byte[]>> get;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        s3 =
                LocalS3Server.start(
                        LocalS3Server.binaryFromProperty(),
                        BUCKET,
                        Files.createTempFile("async-get-bench-local-s3", ".log"),
                        true);
        store = StreamClients.vended(s3.endpoint(), BUCKET);
        store.put("k1", BenchEnv.randomBytes(SIZE, 3));
        switch (client) {
            case "native" -> {
                async = AsyncObjectStore.of(store);
                get = () -> async.getAsync("k1");
            }
            case "pool" -> {
                ThreadPoolExecutor tpe =
                        new ThreadPoolExecutor(
                                IN_FLIGHT,
                                IN_FLIGHT,
                                30,
                                TimeUnit.SECONDS,
                                new LinkedBlockingQueue<>(),
                                r -> {
                                    Thread t = new Thread(r, "async-pool");
                                    t.setDaemon(true);
                                    return t;
                                });
                pool = tpe;
                get = () -> {
                    CompletableFuture<byte[]> f = new CompletableFuture<>();
                    pool.execute(() -> {
                        byte[] b = null;
                        Throwable e = null;
                        try {
                            b = store.get("k1");
                        } catch (Throwable t) {
                            e = t;
                        }
                        byte[] value = b;
                        Throwable error = e;
                        ForkJoinPool.commonPool().execute(() -> {
                            if (error == null) {
                                f.complete(value);
                            } else {
                                f.completeExceptionally(error);
                            }
                        });
                    });
                    return f;
                };
            }
            case "sdk" -> {
                sdk = StreamClients.sdkAsync(s3.endpoint(), false);
                GetObjectRequest request =
                        GetObjectRequest.builder().bucket(BUCKET).key("k1").build();
                get = () -> sdk.getObject(request, AsyncResponseTransformer.toBytes())
                        .thenApply(r -> r.asByteArrayUnsafe());
            }
            default -> throw new IllegalArgumentException("client " + client);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (async != null) {
            async.close();
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        if (sdk != null) {
            sdk.close();
        }
        store.close();
        s3.close();
    }

    /** {@value #GETS} GETs, at most {@value #IN_FLIGHT} outstanding, from this thread. */
    @Benchmark
    @OperationsPerInvocation(GETS)
    public void get1KiB() throws Exception {
        Semaphore permits = new Semaphore(IN_FLIGHT);
        AtomicReference<Throwable> error = new AtomicReference<>();
        for (int i = 0; i < GETS; i++) {
            permits.acquire();
            get.get().whenComplete((b, e) -> {
                if (e != null) {
                    error.compareAndSet(null, e);
                } else if (b.length != SIZE) {
                    error.compareAndSet(null, new IllegalStateException("length " + b.length));
                }
                permits.release();
            });
        }
        if (!permits.tryAcquire(IN_FLIGHT, 120, TimeUnit.SECONDS)) {
            throw new IllegalStateException("GETs still outstanding after 120 s");
        }
        if (error.get() != null) {
            throw new IllegalStateException("a GET failed", error.get());
        }
    }
}
