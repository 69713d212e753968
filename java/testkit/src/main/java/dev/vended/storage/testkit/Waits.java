package dev.vended.storage.testkit;

/** Waiting for wall-clock instants: credential expiry is the scenario, not a synchronisation. */
public final class Waits {
    private Waits() {}

    /** Sleeps until {@code System.currentTimeMillis() >= epochMillis}. */
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
