package dev.vended.storage.bench;

import dev.vended.storage.ObjectStore;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The credential hot path measured paired: two stores on the same endpoint, one with static
 * options and one with a provider (seeded, valid for hours, never called), HEAD of the same 1 KiB
 * object alternating between them in one loop (ABBA order), so drift and fork-to-fork differences
 * cancel out. Separate JMH forks ({@code hotHeadProvider} / {@code hotHeadStatic}) differ by
 * several percent from fork to fork, more than the credential check could cost.
 */
final class HotPathPaired {
    private HotPathPaired() {}

    static String run(String endpoint, String bucket, int pairs) throws Exception {
        BenchEnv.Creds c = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
        Map<String, String> seeded = BenchEnv.endpointOptions(endpoint);
        seeded.putAll(BenchEnv.credentialOptions(c));
        Map<String, String> answer = new HashMap<>(seeded);
        String uri = "s3://" + bucket + "/";
        try (ObjectStore plain = ObjectStore.open(uri, seeded);
                ObjectStore withProvider = ObjectStore.open(uri, seeded, () -> new HashMap<>(answer))) {
            plain.put(UpcallBenchmark.KEY, new byte[1024]);
            ObjectStore[] stores = {plain, withProvider};
            long[] total = new long[2];
            int warm = pairs / 5;
            for (int i = 0; i < 2 * (pairs + warm); i++) {
                int which = (i / 2) % 2 == 0 ? i % 2 : 1 - i % 2; // A B B A ...
                long t0 = System.nanoTime();
                stores[which].head(UpcallBenchmark.KEY);
                long dt = System.nanoTime() - t0;
                if (i >= 2 * warm) {
                    total[which] += dt;
                }
            }
            long fetches = withProvider.refreshStats().fetches();
            return String.format(Locale.ROOT,
                    "Paired hot path (HEAD 1 KiB, %d pairs, ABBA in one loop, load1 %.2f): static %.1f µs,"
                            + " provider %.1f µs, **provider/static %.3f×** (provider calls: %d)%n",
                    pairs, BenchMain.loadAverage(), total[0] / 1e3 / pairs, total[1] / 1e3 / pairs,
                    (double) total[1] / total[0], fetches);
        }
    }
}
