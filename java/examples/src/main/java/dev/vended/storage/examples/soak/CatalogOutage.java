package dev.vended.storage.examples.soak;

import dev.vended.storage.examples.CredentialSource;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link CredentialSource} whose catalog is down for one window: once {@link #schedule} has set
 * it, while {@link System#nanoTime()} is in {@code [start, end)} every call throws an {@link
 * IOException} ({@value #MESSAGE}); otherwise it asks {@code source}. Counts calls and failures.
 */
final class CatalogOutage implements CredentialSource {

    /** The message of the exception thrown during the outage. */
    static final String MESSAGE = "catalog unavailable (the soak's scheduled outage)";

    private final CredentialSource source;
    private volatile long startNanos;
    private volatile long endNanos;
    final AtomicLong calls = new AtomicLong();
    final AtomicLong failedInOutage = new AtomicLong();
    final AtomicLong failedOtherwise = new AtomicLong();

    /**
     * @param source the working catalog
     */
    CatalogOutage(CredentialSource source) {
        this.source = source;
    }

    /**
     * Sets the outage window.
     *
     * @param start when the outage starts, {@link System#nanoTime()}
     * @param end when it ends; equal to {@code start} for no outage
     */
    void schedule(long start, long end) {
        this.endNanos = start; // empty while both are updated
        this.startNanos = start;
        this.endNanos = end;
    }

    @Override
    public Map<String, String> next() throws IOException {
        calls.incrementAndGet();
        long now = System.nanoTime();
        long start = startNanos;
        long end = endNanos;
        if (now - start >= 0 && now - end < 0) {
            failedInOutage.incrementAndGet();
            throw new IOException(MESSAGE);
        }
        try {
            return source.next();
        } catch (IOException | RuntimeException e) {
            failedOtherwise.incrementAndGet();
            throw e;
        }
    }
}
