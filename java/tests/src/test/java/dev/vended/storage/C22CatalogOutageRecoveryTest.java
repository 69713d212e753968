package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * C22: the catalog goes down right after the first fetch and stays down longer than the
 * credential's lifetime while 4 threads keep reading; then it comes back. No read fails while the
 * credential is valid; during the outage the provider is called about once a second (never once
 * per read, never at a growing interval); the first read after the catalog's return succeeds
 * within a couple of seconds, on the same store.
 */
class C22CatalogOutageRecoveryTest {

    /** The enforcing local endpoint, whatever VENDED_STORAGE_TEST_ENDPOINT says. */
    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("c22");

    private static final Duration TTL = Duration.ofSeconds(4);
    /** How long the catalog stays down after the store was opened. */
    private static final long OUTAGE_MILLIS = 12_000;

    private static final byte[] DATA = "through the outage".getBytes(StandardCharsets.UTF_8);

    /** Vends from the endpoint, or throws "catalog down" while {@code down}; logs call times. */
    private static final class Catalog implements StorageOptionsProvider {
        final AtomicBoolean down = new AtomicBoolean();
        final ConcurrentLinkedQueue<Long> calls = new ConcurrentLinkedQueue<>();

        @Override
        public Map<String, String> fetchStorageOptions() {
            calls.add(System.currentTimeMillis());
            if (down.get()) {
                throw new IllegalStateException("catalog down");
            }
            return S3.storageOptions(S3.mintCredentials(TTL));
        }

        long callsBetween(long from, long to) {
            return calls.stream().filter(t -> t >= from && t < to).count();
        }
    }

    /** What the readers share: the outage's times and what they saw. */
    private static final class Run {
        final long expiry;
        final long stopAt;
        final AtomicLong firstSuccessAfterHeal = new AtomicLong(Long.MAX_VALUE);
        final ConcurrentLinkedQueue<String> failuresWhileValid = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> failuresAfterRecovery = new ConcurrentLinkedQueue<>();
        final AtomicLong reads = new AtomicLong();

        Run(long expiry, long stopAt) {
            this.expiry = expiry;
            this.stopAt = stopAt;
        }
    }

    @Test
    @Timeout(90)
    void c22_fourReadersThroughAnOutageLongerThanTheCredentialRecoverWithinSeconds()
            throws Exception {
        Catalog catalog = new Catalog();
        VendedCredentials gen1 = S3.mintCredentials(TTL);
        try (ObjectStore store =
                ObjectStore.open(S3.uri("c22/"), S3.storageOptions(gen1), catalog)) {
            store.put("data.bin", DATA);
            catalog.down.set(true);
            long healAt = System.currentTimeMillis() + OUTAGE_MILLIS;
            Run run = new Run(gen1.expiresAtMillis(), healAt + 6_000);
            CountDownLatch done = new CountDownLatch(4);
            for (int r = 0; r < 4; r++) {
                Thread t =
                        new Thread(
                                () -> {
                                    try {
                                        read(store, catalog, run);
                                    } finally {
                                        done.countDown();
                                    }
                                },
                                "c22-reader-" + r);
                t.start();
            }
            // The catalog comes back after the outage (the readers keep reading meanwhile).
            Waits.sleepUntil(healAt);
            long healed = System.currentTimeMillis();
            catalog.down.set(false);
            assertTrue(done.await(60, TimeUnit.SECONDS), "readers did not finish");

            assertTrue(
                    run.failuresWhileValid.isEmpty(),
                    () -> "reads failed while the credential was valid: " + run.failuresWhileValid);
            // During the outage after expiry: about one provider call a second.
            long downAfterExpiry = healed - run.expiry;
            long calls = catalog.callsBetween(run.expiry, healed);
            double perSecond = calls * 1000.0 / Math.max(1, downAfterExpiry);
            assertTrue(
                    calls <= downAfterExpiry / 1000 + 3,
                    () -> calls + " provider calls in the " + downAfterExpiry
                            + " ms of outage after expiry");
            assertTrue(
                    run.reads.get() > 20L * calls, () -> run.reads + " reads, " + calls + " calls");
            assertTrue(
                    run.firstSuccessAfterHeal.get() != Long.MAX_VALUE,
                    "no read succeeded after the catalog came back");
            long recovery = run.firstSuccessAfterHeal.get() - healed;
            // Expected within about a second; generous slack for a loaded machine.
            assertTrue(recovery <= 4_000, () -> "recovered " + recovery + " ms after the catalog");
            assertTrue(
                    run.failuresAfterRecovery.isEmpty(),
                    () -> "reads failed after recovery: " + run.failuresAfterRecovery);
            RefreshStats stats = store.refreshStats();
            assertTrue(stats.generation() >= 2, stats::toString);
            assertArrayEquals(DATA, store.get("data.bin"));
            System.out.printf(
                    "C22: recovered %d ms after the catalog's return; %d provider calls in %d ms"
                            + " of outage after expiry (%.2f/s) for %d reads in all%n",
                    recovery, calls, downAfterExpiry, perSecond, run.reads.get());
        }
    }

    /** One reader: reads back to back until the run stops, sorting failures by when they began. */
    private static void read(ObjectStore store, Catalog catalog, Run run) {
        for (int i = 0; i < 200_000 && System.currentTimeMillis() < run.stopAt; i++) {
            long started = System.currentTimeMillis();
            try {
                assertArrayEquals(DATA, store.get("data.bin"));
                run.reads.incrementAndGet();
                if (!catalog.down.get()) {
                    long now = System.currentTimeMillis();
                    run.firstSuccessAfterHeal.accumulateAndGet(now, Math::min);
                }
            } catch (StorageException e) {
                run.reads.incrementAndGet();
                // A read signed in the last moments of the credential may reach the endpoint
                // after it: only reads begun half a second before expiry must succeed.
                if (started < run.expiry - 500) {
                    run.failuresWhileValid.add(e.toString());
                } else if (started > run.firstSuccessAfterHeal.get()) {
                    run.failuresAfterRecovery.add(e.toString());
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
