package dev.vended.storage.bench;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The workload of {@code upcall-uprobe.sh}: it measures, with uprobes on the native library's
 * {@code fetch_on_this_thread} (entry and return), how long one {@code fetchStorageOptions()}
 * round trip takes on the warm runtime thread, without any test hook in the library.
 *
 * <ol>
 *   <li>{@code cycles} times: open {@code s3://bench/} with a fresh provider (6 entries) and no
 *       initial credentials, HEAD a 1 KiB object (exactly one provider call), close;
 *   <li>{@code calibration} calls of {@code ObjectStore.nativeVersion()}, a ~0.2 µs native call
 *       whose probes give the cost of the probes themselves.
 * </ol>
 *
 * Needs {@code -Dvended.storage.localS3}; the script also sets {@code
 * -Dvended.storage.native.library} to a private copy of the library carrying the probes.
 */
public final class UpcallProbe {
    private UpcallProbe() {}

    public static void main(String[] args) throws Exception {
        int cycles = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int calibration = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        try (LocalS3Server s3 =
                LocalS3Server.start(LocalS3Server.binaryFromProperty(), "bench", null)) {
            BenchEnv.Creds c = BenchEnv.issueCredentials(s3.endpoint(), 3600_000L);
            Map<String, String> endpointOnly = BenchEnv.endpointOptions(s3.endpoint());
            Map<String, String> seeded = new HashMap<>(endpointOnly);
            seeded.putAll(BenchEnv.credentialOptions(c));
            Map<String, String> six = new HashMap<>(BenchEnv.credentialOptions(c));
            six.put("aws_region", BenchEnv.REGION);
            six.put("aws_endpoint", s3.endpoint());
            try (ObjectStore s = ObjectStore.open("s3://bench/", seeded)) {
                s.put(UpcallBenchmark.KEY, new byte[1024]);
            }
            UpcallBenchmark.CountingProvider.CALLS.set(0);
            long t0 = System.nanoTime();
            for (int i = 0; i < cycles; i++) {
                try (ObjectStore s =
                        ObjectStore.open(
                                "s3://bench/",
                                endpointOnly,
                                new UpcallBenchmark.CountingProvider(six))) {
                    s.head(UpcallBenchmark.KEY);
                }
            }
            long t1 = System.nanoTime();
            String v = null;
            for (int i = 0; i < calibration; i++) {
                v = ObjectStore.nativeVersion();
            }
            long t2 = System.nanoTime();
            System.out.printf(
                    "UpcallProbe: %d cycles (%.0f µs each), %d provider calls; %d nativeVersion()"
                            + " calls (%.2f µs each, probes included) -> %s%n",
                    cycles,
                    (t1 - t0) / 1e3 / cycles,
                    UpcallBenchmark.CountingProvider.CALLS.get(),
                    calibration,
                    (t2 - t1) / 1e3 / calibration,
                    v);
        }
    }
}
