package dev.vended.storage.examples.soak;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Which fault the {@link FaultProxy} injects into which request: a pure function of the seed and
 * the request's number (its place in the order of arrival at the proxy), so a schedule is
 * reproducible and a test can check it without a network.
 *
 * @param seed the seed ({@code --seed})
 * @param rates how often each fault is injected
 */
public record FaultSchedule(long seed, Rates rates) {

    /** Shortest injected delay, milliseconds. */
    static final long MIN_DELAY_MS = 50;

    /** Longest injected delay, milliseconds (well under the store's request timeout). */
    static final long MAX_DELAY_MS = 1500;

    /**
     * Fault rates, each in percent of requests (0 to 100, together at most 100).
     *
     * @param error503 percent answered {@code 503 SlowDown} without being forwarded
     * @param reset percent whose connection is reset (half before forwarding, half after part of
     *     the response); applied only to requests {@link #resettable(String)} says may be
     * @param latency percent forwarded after a delay of {@value #MIN_DELAY_MS}-{@value
     *     #MAX_DELAY_MS} ms
     */
    public record Rates(double error503, double reset, double latency) {
        /** The soak's default: {@code 503=2,reset=1,latency=5}. */
        public static final Rates DEFAULT = new Rates(2, 1, 5);

        /**
         * Checks the bounds.
         *
         * @throws IllegalArgumentException if a rate is negative, not a number or the sum is over
         *     100
         */
        public Rates {
            for (double r : new double[] {error503, reset, latency}) {
                if (!(r >= 0 && r <= 100)) {
                    throw new IllegalArgumentException(
                            "a fault rate must be a percentage from 0 to 100: " + r);
                }
            }
            if (error503 + reset + latency > 100) {
                throw new IllegalArgumentException(
                        "the fault rates add up to more than 100 percent: "
                                + format(error503, reset, latency));
            }
        }

        @Override
        public String toString() {
            return format(error503, reset, latency);
        }

        private static String format(double e, double r, double l) {
            return String.format(Locale.ROOT, "503=%s,reset=%s,latency=%s", num(e), num(r), num(l));
        }

        private static String num(double d) {
            return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
        }
    }

    /** What happens to one request. */
    public enum Kind {
        /** Forwarded unchanged. */
        NONE,
        /** Forwarded after {@link Fault#amount()} milliseconds. */
        LATENCY,
        /** Answered {@code 503 SlowDown}, not forwarded. */
        ERROR_503,
        /** The client's connection is reset; the request is not forwarded. */
        RESET_BEFORE,
        /**
         * Forwarded; the client's connection is reset after {@link Fault#amount()} response bytes.
         */
        RESET_MID_RESPONSE
    }

    /**
     * One decision.
     *
     * @param kind what happens
     * @param amount the delay in milliseconds ({@link Kind#LATENCY}) or the response bytes
     *     forwarded before the reset ({@link Kind#RESET_MID_RESPONSE}, at least 1); else 0
     */
    public record Fault(Kind kind, long amount) {}

    private static final Pattern ITEM = Pattern.compile("(503|reset|latency)=([0-9]+(\\.[0-9]+)?)");

    /**
     * Parses {@code 503=P,reset=P,latency=P} (percent of requests; items may be left out, meaning
     * 0, and come in any order).
     *
     * @param spec the text, e.g. {@code 503=2,reset=1,latency=5}
     * @return the rates
     * @throws IllegalArgumentException naming the item that is wrong
     */
    public static Rates parse(String spec) {
        double e = 0;
        double r = 0;
        double l = 0;
        for (String item : spec.trim().split(",")) {
            String it = item.trim();
            if (it.isEmpty()) {
                continue;
            }
            var m = ITEM.matcher(it);
            if (!m.matches()) {
                throw new IllegalArgumentException(
                        "bad fault rate '"
                                + it
                                + "': expected 503=P, reset=P or latency=P"
                                + " (P in percent)");
            }
            double v = Double.parseDouble(m.group(2));
            switch (m.group(1)) {
                case "503" -> e = v;
                case "reset" -> r = v;
                default -> l = v;
            }
        }
        return new Rates(e, r, l);
    }

    /**
     * Whether a request may get a connection reset: {@code GET}, {@code HEAD} or a {@code PUT}
     * without {@code If-Match}/{@code If-None-Match} (what {@code object_store} retries after a
     * dropped connection). A head not wholly in {@code start} is treated as not resettable.
     *
     * @param start the first bytes of the request, as ISO-8859-1 text
     * @return whether a reset is allowed
     */
    public static boolean resettable(String start) {
        int end = start.indexOf("\r\n\r\n");
        if (end < 0) {
            return false;
        }
        String head = start.substring(0, end).toLowerCase(Locale.ROOT);
        if (head.startsWith("get ") || head.startsWith("head ")) {
            return true;
        }
        return head.startsWith("put ")
                && !head.contains("\r\nif-match:")
                && !head.contains("\r\nif-none-match:");
    }

    /**
     * The fault for request number {@code n}.
     *
     * @param n the request's number, from 0 in order of arrival
     * @param resettable whether the request may be reset ({@link #resettable(String)}); if not, a
     *     reset drawn for it becomes {@link Kind#NONE}, so the other rates do not change
     * @return the decision
     */
    public Fault decide(long n, boolean resettable) {
        long h1 = mix(seed ^ mix(n + 0x9E3779B97F4A7C15L));
        long h2 = mix(h1 + 0x632BE59BD9B4E019L);
        double u = (h1 >>> 11) * 0x1.0p-53 * 100;
        if (u < rates.error503()) {
            return new Fault(Kind.ERROR_503, 0);
        }
        u -= rates.error503();
        if (u < rates.reset()) {
            if (!resettable) {
                return new Fault(Kind.NONE, 0);
            }
            if ((h2 & 1) == 0) {
                return new Fault(Kind.RESET_BEFORE, 0);
            }
            // Half of the mid-response resets fall in the first 100 bytes (inside the status line
            // and headers of every answer), half in the first 64 KiB (the body of larger GETs).
            long bound = (h2 & 2) == 0 ? 100 : 64 << 10;
            return new Fault(Kind.RESET_MID_RESPONSE, 1 + Long.remainderUnsigned(h2 >>> 2, bound));
        }
        u -= rates.reset();
        if (u < rates.latency()) {
            long span = MAX_DELAY_MS - MIN_DELAY_MS + 1;
            return new Fault(Kind.LATENCY, MIN_DELAY_MS + Long.remainderUnsigned(h2, span));
        }
        return new Fault(Kind.NONE, 0);
    }

    /** SplitMix64's finalizer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
