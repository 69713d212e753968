package dev.vended.storage.examples;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** Vends credentials from a {@link CredentialSource}, logging each rotation. */
final class RotatingProvider implements StorageOptionsProvider {
    private final Map<String, String> baseOptions;
    private final CredentialSource source;
    private final PrintStream out;
    private final AtomicLong generation = new AtomicLong();

    RotatingProvider(Map<String, String> baseOptions, CredentialSource source, PrintStream out) {
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

    long vended() {
        return generation.get();
    }

    @Override
    public String toString() {
        return "RotatingProvider{vended=" + generation.get() + "}";
    }
}