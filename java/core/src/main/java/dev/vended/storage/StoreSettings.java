package dev.vended.storage;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What an {@link ObjectStore} is opened with, and how it reaches the native side: the options as
 * parallel arrays, the refresh settings as {@code long[] refreshMillis} (converted and validated
 * natively by the core's {@code RefreshConfig::from_millis}, for every open path), the HTTP client
 * and retry settings as storage options ({@code timeout}, {@code connect_timeout}, {@code
 * max_retries}, {@code retry_timeout}; the same keys for every cloud, checked natively by {@code
 * crates/core/src/options/client.rs}).
 */
final class StoreSettings {

    /** The Java names of the {@code refreshMillis} entries, in order. */
    static final String[] REFRESH_NAMES = {
        "leadTime", "staleWindow", "providerTimeout", "initialBackoff", "maxBackoff"
    };

    /** The native setting names of the same entries (the core's errors name these). */
    static final String[] REFRESH_SETTINGS = {
        "refresh_lead_time_millis",
        "refresh_stale_window_millis",
        "refresh_provider_timeout_millis",
        "refresh_initial_backoff_millis",
        "refresh_max_backoff_millis"
    };

    /** Option key of the per-request timeout (humantime duration, e.g. {@code 1500ms}). */
    static final String REQUEST_TIMEOUT = "timeout";
    /** Option key of the connect timeout. */
    static final String CONNECT_TIMEOUT = "connect_timeout";
    /** Option key of the retry count. */
    static final String MAX_RETRIES = "max_retries";
    /** Option key of the total time spent retrying one request. */
    static final String RETRY_TIMEOUT = "retry_timeout";

    final Map<String, String> options = new LinkedHashMap<>();
    StorageOptionsProvider provider;
    Session session;
    /** Indexed like {@link #REFRESH_NAMES}; {@code null} = the default. */
    final Duration[] refresh = new Duration[REFRESH_NAMES.length];
    /** Client options set through the builder, by option key. */
    final Map<String, String> client = new LinkedHashMap<>();

    /** Sets refresh setting {@code i}; negative durations are refused here, the rest natively. */
    void refresh(int i, Duration d) {
        if (d != null && d.isNegative()) {
            throw new IllegalArgumentException(
                    REFRESH_NAMES[i] + " (" + REFRESH_SETTINGS[i] + ") must not be negative: " + d);
        }
        refresh[i] = d;
    }

    /** Sets a client timeout option to {@code d} in milliseconds ({@code null} removes it). */
    void clientDuration(String name, String key, Duration d) {
        if (d == null) {
            client.remove(key);
            return;
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(
                    name + " (" + key + ") must be positive: " + d);
        }
        client.put(key, millis(d) + "ms");
    }

    /** Sets {@code max_retries}. */
    void maxRetries(int n) {
        if (n < 0) {
            throw new IllegalArgumentException(
                    "maxRetries (" + MAX_RETRIES + ") must not be negative: " + n);
        }
        client.put(MAX_RETRIES, Integer.toString(n));
    }

    /** The initial options, with the client settings set through the builder replacing any. */
    Map<String, String> effectiveOptions() {
        Map<String, String> all = new LinkedHashMap<>(options);
        all.putAll(client);
        return all;
    }

    /** {@code refreshMillis} for the native side, {@code -1} per default; {@code null} if all. */
    long[] refreshMillis() {
        long[] out = new long[REFRESH_NAMES.length];
        boolean any = false;
        for (int i = 0; i < out.length; i++) {
            out[i] = refresh[i] == null ? -1L : millis(refresh[i]);
            any |= refresh[i] != null;
        }
        return any ? out : null;
    }

    /** {@code refreshMillis} with only the lead time set ({@code null} = all defaults). */
    static long[] refreshMillis(Duration leadTime) {
        long lead = leadTimeMillis(leadTime);
        return lead < 0 ? null : new long[] {lead, -1L, -1L, -1L, -1L};
    }

    /** Milliseconds of a non-negative duration, saturating at {@link Long#MAX_VALUE}. */
    static long millis(Duration d) {
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** The lead time in milliseconds, {@code -1} for the default. */
    static long leadTimeMillis(Duration leadTime) {
        if (leadTime == null) {
            return -1L;
        }
        if (leadTime.isNegative()) {
            throw new IllegalArgumentException("leadTime must not be negative: " + leadTime);
        }
        return millis(leadTime);
    }

    /** Every setting, printable: option values through {@link Redaction}. */
    String describe() {
        StringBuilder b = new StringBuilder();
        b.append("options=").append(Redaction.redact(effectiveOptions()));
        b.append(", provider=")
                .append(provider == null ? "none" : provider.getClass().getName());
        for (int i = 0; i < REFRESH_NAMES.length; i++) {
            if (refresh[i] != null) {
                b.append(", ").append(REFRESH_NAMES[i]).append('=').append(refresh[i]);
            }
        }
        return b.append(", session=").append(session).toString();
    }

    /**
     * Opens the native store and returns its handle: validates and flattens the options, resolves
     * the provider id, and calls {@link NativeBridge#open} (or {@link
     * NativeBridge#openWithCatalog} for a {@link CatalogSpecProvider}, whose provider is then
     * built natively so refreshes make no upcall into the JVM).
     */
    static long openHandle(
            String uri,
            Map<String, String> options,
            StorageOptionsProvider provider,
            long[] refreshMillis,
            Session session)
            throws StorageException {
        Objects.requireNonNull(uri, "uri");
        int n = options == null ? 0 : options.size();
        String[] keys = new String[n];
        String[] values = new String[n];
        if (options != null) {
            int i = 0;
            for (Map.Entry<String, String> e : options.entrySet()) {
                if (i == n) {
                    throw new ConcurrentModificationException("options changed");
                }
                String key = e.getKey();
                if (key == null) {
                    throw new NullPointerException("options contains a null key");
                }
                if (e.getValue() == null) {
                    throw new InvalidOptionsException(
                            "storage option '" + key + "' has a null value");
                }
                keys[i] = key;
                values[i] = e.getValue();
                i++;
            }
            if (i != n) {
                throw new ConcurrentModificationException("options changed");
            }
        }
        String providerId = provider == null ? null : nativeProviderId(provider);
        NativeLoader.load();
        long h;
        if (session == null) {
            h = openNative(uri, keys, values, provider, providerId, refreshMillis, 0L);
        } else {
            long sessionHandle = session.acquire();
            try {
                h =
                        openNative(
                                uri, keys, values, provider, providerId, refreshMillis,
                                sessionHandle);
            } finally {
                session.release();
            }
        }
        if (h == 0L) {
            throw new IllegalStateException("native library returned no store handle");
        }
        return h;
    }

    private static long openNative(
            String uri,
            String[] keys,
            String[] values,
            StorageOptionsProvider provider,
            String providerId,
            long[] refreshMillis,
            long sessionHandle)
            throws StorageException {
        if (provider instanceof CatalogSpecProvider) {
            CatalogSpecProvider spec = (CatalogSpecProvider) provider;
            String[][] flat = withAccessMode(spec.nativeSpec(), keys, values);
            return NativeBridge.openWithCatalog(
                    uri,
                    keys,
                    values,
                    spec.catalogKind(),
                    flat[0],
                    flat[1],
                    refreshMillis,
                    sessionHandle);
        }
        return NativeBridge.open(
                uri, keys, values, provider, providerId, refreshMillis, sessionHandle);
    }

    /**
     * The spec with the store's {@code access_mode} option (if given) as its {@code access_mode}
     * key (unless the spec has one), so that the catalog is asked for the scope the store needs
     * (Unity Catalog: {@code READ} / {@code READ_WRITE}); the native core decides what it means
     * per catalog and refuses a spec {@code operation} that disagrees.
     */
    static String[][] withAccessMode(String[][] spec, String[] keys, String[] values) {
        String mode = null;
        for (int i = 0; i < keys.length; i++) {
            if (AccessMode.OPTION.equals(keys[i])) {
                mode = values[i];
            }
        }
        if (mode == null || Arrays.asList(spec[0]).contains(AccessMode.OPTION)) {
            return spec;
        }
        int n = spec[0].length;
        String[] k = Arrays.copyOf(spec[0], n + 1);
        String[] v = Arrays.copyOf(spec[1], n + 1);
        k[n] = AccessMode.OPTION;
        v[n] = mode;
        return new String[][] {k, v};
    }

    /**
     * The provider id to pass to the native side: {@code null} when the provider keeps the default
     * {@link StorageOptionsProvider#providerId()} (the native side then keys by object identity),
     * else the provider's own id.
     */
    static String nativeProviderId(StorageOptionsProvider provider) throws InvalidOptionsException {
        Method method;
        try {
            method = provider.getClass().getMethod("providerId");
        } catch (NoSuchMethodException e) {
            return null; // unreachable: the interface declares it
        }
        if (method.getDeclaringClass() == StorageOptionsProvider.class) {
            return null;
        }
        String id;
        try {
            id = provider.providerId();
        } catch (Exception | AssertionError e) {
            throw new InvalidOptionsException(
                    "providerId() of provider " + provider.getClass().getName() + " threw " + e, e);
        }
        if (id == null || id.isBlank()) {
            throw new InvalidOptionsException(
                    "providerId() of provider "
                            + provider.getClass().getName()
                            + " returned "
                            + (id == null ? "null" : "a blank string")
                            + "; return a stable non-blank id or do not override it");
        }
        return id;
    }
}
