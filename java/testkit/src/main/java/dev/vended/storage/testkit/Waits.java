package dev.vended.storage.testkit;

/** Waiting for wall-clock instants: credential expiry is the scenario, not a synchronisation. */
public final class Waits {
    private Waits() {}

    /**
     * Sleeps until {@code System.currentTimeMillis() >= epochMillis}; returns at once if that
     * instant has passed.
     *
     * @param epochMillis the instant to wait for, milliseconds since the epoch (such as a
     *     credential's {@code expires_at_millis})
     * @throws InterruptedException if the thread is interrupted while sleeping
     */
    public static void sleepUntil(long epochMillis) throws InterruptedException {
        while (true) {
            long left = epochMillis - System.currentTimeMillis();
            if (left <= 0) {
                return;
            }
            Thread.sleep(left);
        }
    }
}
