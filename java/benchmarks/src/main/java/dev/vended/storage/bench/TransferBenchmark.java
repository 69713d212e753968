package dev.vended.storage.bench;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Whole-object GET and PUT of {@code size} bytes through one {@link Transfer} client, shared by
 * all benchmark threads (as an application shares one store or one S3Client). GETs all read one
 * object written in the setup; every thread PUTs its own key, overwriting it. Throughput is ops/s
 * summed over threads; {@link BenchMain} turns it into MiB/s and ratios.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class TransferBenchmark {

    /**
     * {@code vended} (ObjectStore), {@code sdk} (S3Client) or {@code http} (ceiling); also {@code
     * vended-unsigned} and {@code sdk-unsigned} (against the ceiling server), {@code vended-static},
     * {@code sdk-default-checksums}.
     */
    @Param({"vended", "sdk", "http"})
    public String client;

    @Param({"1024", "1048576", "67108864"})
    public int size;

    Transfer transfer;
    byte[] payload;
    String getKey;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        transfer = Transfer.create(client);
        payload = BenchEnv.randomBytes(size, size);
        getKey = "get-" + size;
        if (!client.equals("http") && !client.endsWith("-unsigned")) {
            transfer.put(getKey, payload);
            if (!Arrays.equals(transfer.get(getKey), payload)) {
                throw new IllegalStateException(client + ": object read back differs");
            }
        } else if (transfer.get(getKey).length != size) {
            throw new IllegalStateException("ceiling server answered the wrong length");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (transfer != null) {
            transfer.close();
        }
    }

    /** Per-thread PUT key. */
    @State(Scope.Thread)
    public static class Slot {
        String putKey;

        @Setup(Level.Trial)
        public void setUp(TransferBenchmark b, ThreadParams t) {
            putKey = "put/" + b.client + "/" + b.size + "/t" + t.getThreadIndex();
        }
    }

    @Benchmark
    public byte[] get() throws Exception {
        return transfer.get(getKey);
    }

    @Benchmark
    public void put(Slot slot) throws Exception {
        transfer.put(slot.putKey, payload);
    }
}
