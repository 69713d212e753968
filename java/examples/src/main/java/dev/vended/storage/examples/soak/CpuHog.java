package dev.vended.storage.examples.soak;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The competing process of {@code bin/soak --cpu-hog N}: N threads that spin on arithmetic. It
 * stops when its stdin closes (the soak ends or dies) or after a maximum time, whichever comes
 * first.
 */
public final class CpuHog {

    private static volatile long sink;

    private CpuHog() {}

    /**
     * Runs {@code CpuHog THREADS MAX_SECONDS}; prints {@code LISTENING 0} once the threads spin.
     *
     * @param args threads and the longest run in seconds
     * @throws Exception if the arguments are not numbers
     */
    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long maxNanos = Long.parseLong(args[1]) * 1_000_000_000L;
        long deadline = System.nanoTime() + maxNanos;
        List<Thread> spinners = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            Thread s =
                    new Thread(
                            () -> {
                                long x = seed;
                                while (System.nanoTime() - deadline < 0) {
                                    for (int i = 0; i < 1_000_000; i++) {
                                        x = FaultSchedule.mix(x + i);
                                    }
                                    sink = x;
                                }
                            },
                            "cpu-hog-" + t);
            s.setDaemon(true);
            s.start();
            spinners.add(s);
        }
        System.out.println("LISTENING 0");
        System.out.flush();
        Thread watcher =
                new Thread(
                        () -> {
                            try {
                                while (System.in.read() >= 0) {
                                    // wait for EOF
                                }
                            } catch (IOException e) {
                                // parent gone
                            }
                            System.exit(0);
                        },
                        "cpu-hog-stdin");
        watcher.setDaemon(true);
        watcher.start();
        for (Thread s : spinners) {
            s.join();
        }
    }
}
