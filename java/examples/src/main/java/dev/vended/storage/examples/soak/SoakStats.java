package dev.vended.storage.examples.soak;

import dev.vended.storage.StorageException;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The soak's counters, shared by the workers: operations and failures per kind, failures told apart
 * by whether they touch the outage window, verified bytes and mismatches. Failure and mismatch
 * lines go to {@code err} (the first {@value #MAX_PRINTED} of each class).
 */
final class SoakStats {

    /** The operations the workers run. */
    enum Op {
        PUT("put"),
        GET("get"),
        GET_RANGE("getRange"),
        HEAD("head"),
        LIST("list"),
        DELETE("delete"),
        STREAM_WRITE("openOutput (one PUT)"),
        MULTIPART_WRITE("openOutput (multipart)"),
        STREAM_READ("openInput"),
        ASYNC_PUT("putAsync"),
        ASYNC_GET("getAsync"),
        ASYNC_DELETE("deleteAsync"),
        CLEANUP("cleanup (list, delete)");

        final String label;

        Op(String label) {
            this.label = label;
        }
    }

    static final int MAX_PRINTED = 40;

    /** Failures outside the outage quoted in the report (the first ones). */
    static final int REPORTED = 3;

    /** The first {@value #REPORTED} failure lines outside the outage, for the report. */
    final Queue<String> reported = new ConcurrentLinkedQueue<>();

    private final int kinds = Op.values().length;
    final LongAdder[] ops = adders(kinds);
    final LongAdder[] failedOutside = adders(kinds);
    final LongAdder[] failedInOutage = adders(kinds);
    final AtomicLong bytesVerified = new AtomicLong();
    final AtomicLong bytesWritten = new AtomicLong();
    final AtomicLong mismatches = new AtomicLong();

    /** Unexpected exceptions that escaped a worker's step (each fails the run). */
    final AtomicLong crashes = new AtomicLong();

    /** Operations that succeeded while the catalog was down. */
    final LongAdder okDuringOutage = new LongAdder();

    /** Earliest end of a failed operation in the window, nanos (Long.MAX_VALUE if none). */
    final AtomicLong firstOutageFailure = new AtomicLong(Long.MAX_VALUE);

    /** Latest end of a failed operation in the window, nanos (Long.MIN_VALUE if none). */
    final AtomicLong lastOutageFailure = new AtomicLong(Long.MIN_VALUE);

    private final AtomicInteger printedOutside = new AtomicInteger();
    private final AtomicInteger printedInOutage = new AtomicInteger();
    private final AtomicInteger printedMismatch = new AtomicInteger();
    private final long runStart;
    private final long outageStart;
    private final long outageEnd;
    private final long windowEnd;
    private final PrintStream err;

    /**
     * @param runStart when the workload starts, nanos
     * @param outageStart when the catalog goes down, nanos
     * @param outageEnd when it comes back (equal to {@code outageStart}: no outage)
     * @param graceNanos how long after {@code outageEnd} failures still count as the outage's
     */
    SoakStats(long runStart, long outageStart, long outageEnd, long graceNanos, PrintStream err) {
        this.runStart = runStart;
        this.outageStart = outageStart;
        this.outageEnd = outageEnd;
        this.windowEnd = outageEnd == outageStart ? outageEnd : outageEnd + graceNanos;
        this.err = err;
    }

    void ok(Op op, long startNanos, long endNanos) {
        ops[op.ordinal()].increment();
        if (startNanos - outageStart >= 0 && endNanos - outageEnd < 0) {
            okDuringOutage.increment();
        }
    }

    /** Counts a failed operation that ran from {@code startNanos} to {@code endNanos}. */
    void failed(Op op, long startNanos, long endNanos, Throwable e) {
        ops[op.ordinal()].increment();
        boolean inWindow = endNanos - outageStart >= 0 && startNanos - windowEnd < 0;
        Throwable t = unwrap(e);
        if (inWindow) {
            failedInOutage[op.ordinal()].increment();
            firstOutageFailure.accumulateAndGet(
                    endNanos, (a, b) -> a == Long.MAX_VALUE || b - a < 0 ? b : a);
            lastOutageFailure.accumulateAndGet(
                    endNanos, (a, b) -> a == Long.MIN_VALUE || b - a > 0 ? b : a);
            if (printedInOutage.incrementAndGet() <= MAX_PRINTED / 4) {
                err.println(line("IN-OUTAGE FAILURE", op, startNanos, endNanos, t));
            }
        } else {
            failedOutside[op.ordinal()].increment();
            int k = printedOutside.incrementAndGet();
            if (k <= MAX_PRINTED) {
                String l = line("FAILURE", op, startNanos, endNanos, t);
                err.println(l);
                if (k <= REPORTED) {
                    reported.add(l);
                }
            }
        }
    }

    /** Counts an unexpected exception that escaped a worker's step (a broken contract). */
    void crash(String worker, RuntimeException e) {
        crashes.incrementAndGet();
        if (printedMismatch.incrementAndGet() <= MAX_PRINTED) {
            err.printf(
                    Locale.ROOT,
                    "UNEXPECTED in %s at t=%.1fs: %s%n",
                    worker,
                    (System.nanoTime() - runStart) / 1e9,
                    e);
            e.printStackTrace(err);
        }
    }

    /**
     * Counts a verification mismatch (wrong bytes, size, listing or a deleted object still there).
     */
    void mismatch(Op op, String what) {
        mismatches.incrementAndGet();
        if (printedMismatch.incrementAndGet() <= MAX_PRINTED) {
            err.printf(
                    Locale.ROOT,
                    "MISMATCH %s at t=%.1fs: %s%n",
                    op.label,
                    (System.nanoTime() - runStart) / 1e9,
                    what);
        }
    }

    long outageStartNanos() {
        return outageStart;
    }

    long outageEndNanos() {
        return outageEnd;
    }

    long total(LongAdder[] a) {
        long s = 0;
        for (LongAdder x : a) {
            s += x.sum();
        }
        return s;
    }

    private String line(String tag, Op op, long start, long end, Throwable t) {
        String kind = t instanceof StorageException se ? " kind=" + se.kind() : "";
        String rel =
                outageEnd == outageStart
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                " (outage start %+.1fs, outage end %+.1fs)",
                                (end - outageStart) / 1e9,
                                (end - outageEnd) / 1e9);
        String msg = String.valueOf(t.getMessage()).replace('\n', ' ');
        if (msg.length() > 400) {
            msg = msg.substring(0, 400) + "...";
        }
        return String.format(
                Locale.ROOT,
                "%s %s at t=%.1fs after %d ms%s: %s%s: %s",
                tag,
                op.label,
                (end - runStart) / 1e9,
                (end - start) / 1_000_000,
                rel,
                t.getClass().getSimpleName(),
                kind,
                msg);
    }

    private static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof ExecutionException || t instanceof CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }
}
