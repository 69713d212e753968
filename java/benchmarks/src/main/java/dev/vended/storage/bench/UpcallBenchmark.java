package dev.vended.storage.bench;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageOptionsProvider;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of the JNI upcall {@code fetchStorageOptions()} (6 entries), measured without a native
 * hook as a difference of two otherwise identical cycles:
 *
 * <ul>
 *   <li>{@link #openFetchHead}: open {@code s3://bucket/} with a fresh provider and no
 *       credentials in the initial options, HEAD a 1 KiB object (this forces exactly one provider
 *       call: a {@code spawn_blocking} hop to a warm, already attached runtime thread, the JNI
 *       call, the Java provider building a 6-entry map, the map read back over JNI, and a
 *       credential generation built), close;
 *   <li>{@link #openSeededHead}: the same with the credentials in the initial options (no
 *       provider call).
 * </ul>
 *
 * Both build a native store and a new HTTP connection per op, which dominates; the difference is
 * the upcall. {@link #javaProviderCall} is the Java-only part (the provider itself), and {@link
 * #hotHeadProvider} vs {@link #hotHeadStatic} is the per-request cost of the credential layer on
 * an open store (no provider call: credentials valid for hours).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class UpcallBenchmark {

    static final String KEY = "upcall/1k";

    /** Counts its calls; returns the 6 entries the brief asks for. */
    static final class CountingProvider implements StorageOptionsProvider {
        static final AtomicLong CALLS = new AtomicLong();
        private final Map<String, String> six;

        CountingProvider(Map<String, String> six) {
            this.six = six;
        }

        @Override
        public Map<String, String> fetchStorageOptions() {
            CALLS.incrementAndGet();
            return new HashMap<>(six);
        }
    }

    String uri;
    Map<String, String> endpointOnly;
    Map<String, String> seeded;
    Map<String, String> six;
    CountingProvider javaProvider;
    ObjectStore hotProvider;
    ObjectStore hotStatic;
    final AtomicLong cycles = new AtomicLong();
    volatile String cycleKind = "";

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        String endpoint = BenchEnv.endpoint();
        BenchEnv.Creds creds = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
        uri = "s3://" + BenchEnv.bucket() + "/";
        endpointOnly = BenchEnv.endpointOptions(endpoint);
        seeded = new HashMap<>(endpointOnly);
        seeded.putAll(BenchEnv.credentialOptions(creds));
        six = new HashMap<>(BenchEnv.credentialOptions(creds)); // 4 entries
        six.put("aws_region", BenchEnv.REGION);
        six.put("aws_endpoint", endpoint); // 6 entries
        if (six.size() != 6) {
            throw new IllegalStateException("expected 6 entries, got " + six.size());
        }
        javaProvider = new CountingProvider(six);
        try (ObjectStore s = ObjectStore.open(uri, seeded)) {
            s.put(KEY, BenchEnv.randomBytes(1024, 1));
        }
        hotStatic = ObjectStore.open(uri, seeded);
        hotProvider = ObjectStore.open(uri, seeded, new CountingProvider(six));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        hotStatic.close();
        hotProvider.close();
        long c = cycles.get();
        if (c > 0) {
            BenchEnv.check(String.format(java.util.Locale.ROOT,
                    "%s: %d cycles, %d provider calls (%.3f per cycle)",
                    cycleKind, c, CountingProvider.CALLS.get(), CountingProvider.CALLS.get() / (double) c));
        }
    }

    @Benchmark
    public ObjectMeta openFetchHead() throws Exception {
        cycles.incrementAndGet();
        cycleKind = "openFetchHead";
        try (ObjectStore s = ObjectStore.open(uri, endpointOnly, new CountingProvider(six))) {
            return s.head(KEY);
        }
    }

    @Benchmark
    public ObjectMeta openSeededHead() throws Exception {
        cycles.incrementAndGet();
        cycleKind = "openSeededHead";
        try (ObjectStore s = ObjectStore.open(uri, seeded, new CountingProvider(six))) {
            return s.head(KEY);
        }
    }

    @Benchmark
    public Map<String, String> javaProviderCall() {
        return javaProvider.fetchStorageOptions();
    }

    @Benchmark
    public ObjectMeta hotHeadProvider() throws Exception {
        return hotProvider.head(KEY);
    }

    @Benchmark
    public ObjectMeta hotHeadStatic() throws Exception {
        return hotStatic.head(KEY);
    }
}
