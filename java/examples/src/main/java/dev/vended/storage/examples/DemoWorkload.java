package dev.vended.storage.examples;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.RefreshStats;
import dev.vended.storage.StorageException;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/** The demo's verified I/O: concurrent writes read back, listing, cleanup and the summary line. */
final class DemoWorkload {

    private DemoWorkload() {}

    /**
     * Writes and reads back objects from {@code threads} threads for {@code seconds}, lists them
     * (when {@code canList}), prints the refresh stats, deletes the objects (unless {@code keep})
     * and prints the summary line.
     *
     * @return the exit status: 0 if every object was verified and nothing failed
     */
    static int run(
            ObjectStore store,
            RotatingProvider provider,
            int seconds,
            int threads,
            boolean keep,
            boolean canList,
            PrintStream out,
            PrintStream err)
            throws Exception {
        ConcurrentLinkedQueue<String> paths = new ConcurrentLinkedQueue<>();
        AtomicLong written = new AtomicLong();
        AtomicLong verified = new AtomicLong();
        AtomicLong authFailures = new AtomicLong();
        AtomicLong otherFailures = new AtomicLong();
        long start = System.nanoTime();
        long deadline = start + Duration.ofSeconds(seconds).toNanos();

        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w =
                    new Thread(
                            () -> {
                                SplittableRandom random = new SplittableRandom(31L * id + 7);
                                for (long n = 0; System.nanoTime() < deadline; n++) {
                                    String path = "t" + id + "/obj-" + n;
                                    byte[] data = payload(random, path);
                                    try {
                                        store.put(path, data);
                                        written.incrementAndGet();
                                        paths.add(path);
                                        byte[] back = store.get(path);
                                        if (Arrays.equals(data, back)) {
                                            verified.incrementAndGet();
                                        } else {
                                            otherFailures.incrementAndGet();
                                            err.println("MISMATCH " + path);
                                        }
                                    } catch (CredentialsException e) {
                                        authFailures.incrementAndGet();
                                        err.println("AUTH FAILURE " + path + ": " + e.getMessage());
                                    } catch (StorageException | RuntimeException e) {
                                        otherFailures.incrementAndGet();
                                        err.println("FAILURE " + path + ": " + e);
                                    }
                                }
                            },
                            "demo-worker-" + t);
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;

        long listed = -1;
        if (canList) {
            try {
                List<ObjectMeta> objects = store.list(null);
                listed = objects.size();
            } catch (StorageException e) {
                otherFailures.incrementAndGet();
                err.println("FAILURE list: " + e);
            }
        }
        if (listed >= 0 && listed != written.get()) {
            otherFailures.incrementAndGet();
            err.println("FAILURE list returned " + listed + " objects, wrote " + written.get());
        }
        try {
            RefreshStats s = store.refreshStats();
            out.println(
                    "refresh stats: fetches="
                            + s.fetches()
                            + " failures="
                            + s.failures()
                            + " stale_waits="
                            + s.staleWaits()
                            + " generation="
                            + s.generation());
        } catch (StorageException e) {
            err.println("refresh stats unavailable: " + e.getMessage());
        }
        if (keep) {
            out.println("cleanup: skipped (--keep), " + written.get() + " objects kept");
        } else {
            otherFailures.addAndGet(
                    cleanup(store, threads, canList ? null : List.copyOf(paths), out, err));
        }
        if (otherFailures.get() > 0) {
            out.println("other failures: " + otherFailures.get());
        }

        long refreshes = Math.max(0, provider.vended() - 1);
        out.println(
                String.format(
                        Locale.ROOT,
                        "demo summary: objects_written=%d objects_verified=%d"
                                + " credential_refreshes=%d auth_failures=%d elapsed_s=%.1f",
                        written.get(),
                        verified.get(),
                        refreshes,
                        authFailures.get(),
                        elapsed));
        out.flush();
        boolean ok =
                written.get() > 0
                        && verified.get() == written.get()
                        && authFailures.get() == 0
                        && otherFailures.get() == 0;
        return ok ? 0 : 1;
    }

    /**
     * Deletes every object under the store's prefix, one {@code DELETE} each (so that keys scoped
     * to the prefix suffice, also where bulk deletes are authorized at bucket level), then checks
     * that none is left. With {@code written} given (a store that cannot list), deletes those
     * paths and checks each is gone with a {@code HEAD}.
     *
     * @return the number of failures (0 when the prefix is empty afterwards)
     */
    private static long cleanup(
            ObjectStore store, int threads, List<String> written, PrintStream out, PrintStream err)
            throws InterruptedException {
        AtomicLong failures = new AtomicLong();
        AtomicLong deleted = new AtomicLong();
        AtomicLong stillThere = new AtomicLong();
        List<String> objects;
        if (written != null) {
            objects = written;
        } else {
            try {
                objects = store.list(null).stream().map(ObjectMeta::path).toList();
            } catch (StorageException | RuntimeException e) {
                err.println("FAILURE cleanup list: " + e);
                return 1;
            }
        }
        List<Thread> deleters = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread d =
                    new Thread(
                            () -> {
                                for (int i = first; i < objects.size(); i += threads) {
                                    String path = objects.get(i);
                                    try {
                                        store.delete(path);
                                        deleted.incrementAndGet();
                                    } catch (StorageException | RuntimeException e) {
                                        failures.incrementAndGet();
                                        err.println("FAILURE delete " + path + ": " + e);
                                        continue;
                                    }
                                    if (written != null) {
                                        try {
                                            store.head(path);
                                            stillThere.incrementAndGet();
                                        } catch (ObjectNotFoundException gone) {
                                            // deleted, as expected
                                        } catch (StorageException | RuntimeException e) {
                                            failures.incrementAndGet();
                                            err.println("FAILURE head " + path + ": " + e);
                                        }
                                    }
                                }
                            },
                            "demo-cleanup-" + t);
            deleters.add(d);
            d.start();
        }
        for (Thread d : deleters) {
            d.join();
        }
        try {
            long left = written != null ? stillThere.get() : store.list(null).size();
            if (left != 0) {
                failures.incrementAndGet();
                err.println("FAILURE cleanup left " + left + " objects");
            }
            out.println("cleanup: deleted " + deleted.get() + " objects, " + left + " left");
        } catch (StorageException | RuntimeException e) {
            failures.incrementAndGet();
            err.println("FAILURE cleanup list: " + e);
        }
        return failures.get();
    }

    private static byte[] payload(SplittableRandom random, String path) {
        int size = 64 + random.nextInt(4096);
        ByteBuffer b = ByteBuffer.allocate(size + path.length());
        b.put(path.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] noise = new byte[size];
        random.nextBytes(noise);
        b.put(noise);
        return b.array();
    }
}
