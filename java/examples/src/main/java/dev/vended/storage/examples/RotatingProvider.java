package dev.vended.storage.examples;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Vends credentials from a {@link CredentialSource}, logging each rotation (used by the demo and by
 * the soak in {@code examples.soak}).
 */
public final class RotatingProvider implements StorageOptionsProvider {
    private final Map<String, String> baseOptions;
    private final CredentialSource source;
    private final PrintStream out;
    private final AtomicLong generation = new AtomicLong();

    /**
     * A provider returning {@code baseOptions} plus each credential set of {@code source}.
     *
     * @param baseOptions store options without credentials (endpoint, region, ...)
     * @param source where each call's credentials come from; its exception is the call's
     * @param out where one {@code rotation gen=N at=<ISO time> fetch_ms=M} line per vended set goes
     */
    public RotatingProvider(
            Map<String, String> baseOptions, CredentialSource source, PrintStream out) {
        this.baseOptions = Map.copyOf(baseOptions);
        this.source = source;
        this.out = out;
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws IOException {
        long t0 = System.nanoTime();
        Map<String, String> creds = source.next();
        long fetchMs = (System.nanoTime() - t0) / 1_000_000;
        long gen = generation.incrementAndGet();
        out.println(
                "rotation gen="
                        + gen
                        + " at="
                        + Instant.now().truncatedTo(ChronoUnit.MILLIS)
                        + " fetch_ms="
                        + fetchMs);
        Map<String, String> options = new HashMap<>(baseOptions);
        options.putAll(creds);
        return options;
    }

    /**
     * Credential sets vended so far (calls that returned; a call whose source threw is not counted).
     *
     * @return the count
     */
    public long vended() {
        return generation.get();
    }

    @Override
    public String toString() {
        return "RotatingProvider{vended=" + generation.get() + "}";
    }
}