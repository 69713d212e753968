package dev.vended.storage;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * The settings methods of {@link ObjectStore.Builder} (its only subclass; every public method here
 * is public API of {@code ObjectStore.Builder}). Not thread-safe.
 *
 * <p>Refresh settings ({@link #leadTime}, {@link #staleWindow}, {@link #providerTimeout}, {@link
 * #initialBackoff}, {@link #maxBackoff}) are checked by the native core when the store is opened:
 * each must be between 1 ms and one day, and the initial backoff at most the maximum backoff
 * (either as set or defaulted); a violation is an {@link InvalidOptionsException} naming the
 * setting ({@code refresh_initial_backoff_millis}, ...). A negative duration is refused at once
 * with an {@link IllegalArgumentException} naming it. Durations are used at millisecond
 * precision.
 */
abstract class ObjectStoreBuilder {
    private final String uri;
    private final StoreSettings settings = new StoreSettings();

    ObjectStoreBuilder(String uri) {
        this.uri = Objects.requireNonNull(uri, "uri");
    }

    private ObjectStore.Builder self() {
        return (ObjectStore.Builder) this;
    }

    /**
     * Adds initial storage options (later values replace earlier ones).
     *
     * @param options options to add; {@code null} adds nothing
     * @return this builder
     */
    public ObjectStore.Builder options(Map<String, String> options) {
        if (options != null) {
            settings.options.putAll(options);
        }
        return self();
    }

    /**
     * Adds one initial storage option.
     *
     * @param key the option key
     * @param value the option value
     * @return this builder
     */
    public ObjectStore.Builder option(String key, String value) {
        settings.options.put(Objects.requireNonNull(key, "key"), value);
        return self();
    }

    /**
     * Sets the credential provider.
     *
     * @param provider the provider, or {@code null} for static options
     * @return this builder
     */
    public ObjectStore.Builder provider(StorageOptionsProvider provider) {
        settings.provider = provider;
        return self();
    }

    /**
     * Sets how long before {@code expires_at_millis} a background refresh starts (setting {@code
     * refresh_lead_time_millis}); never more than half the credentials' lifetime.
     *
     * @param leadTime the lead time, or {@code null} for {@link ObjectStore#DEFAULT_LEAD_TIME} (5
     *     minutes)
     * @return this builder
     * @throws IllegalArgumentException if {@code leadTime} is negative
     */
    public ObjectStore.Builder leadTime(Duration leadTime) {
        settings.refresh(0, leadTime);
        return self();
    }

    /**
     * Sets how long before expiry requests start waiting for the refresh (setting {@code
     * refresh_stale_window_millis}); never more than half the effective lead time.
     *
     * @param staleWindow the stale window, or {@code null} for the default (30 s)
     * @return this builder
     * @throws IllegalArgumentException if {@code staleWindow} is negative
     */
    public ObjectStore.Builder staleWindow(Duration staleWindow) {
        settings.refresh(1, staleWindow);
        return self();
    }

    /**
     * Sets how long one provider call may take before it counts as failed, which is also the
     * longest a request waits for a refresh (setting {@code refresh_provider_timeout_millis}).
     *
     * @param providerTimeout the timeout, or {@code null} for the default (30 s)
     * @return this builder
     * @throws IllegalArgumentException if {@code providerTimeout} is negative
     */
    public ObjectStore.Builder providerTimeout(Duration providerTimeout) {
        settings.refresh(2, providerTimeout);
        return self();
    }

    /**
     * Sets the first retry delay after a failed refresh, doubling per failure up to {@link
     * #maxBackoff} (setting {@code refresh_initial_backoff_millis}). While the refresher backs
     * off, requests that need new credentials fail at once with the last error.
     *
     * @param initialBackoff the delay, or {@code null} for the default (1 s)
     * @return this builder
     * @throws IllegalArgumentException if {@code initialBackoff} is negative
     */
    public ObjectStore.Builder initialBackoff(Duration initialBackoff) {
        settings.refresh(3, initialBackoff);
        return self();
    }

    /**
     * Sets the longest retry delay after failed refreshes (setting {@code
     * refresh_max_backoff_millis}).
     *
     * @param maxBackoff the delay, or {@code null} for the default (30 s)
     * @return this builder
     * @throws IllegalArgumentException if {@code maxBackoff} is negative
     */
    public ObjectStore.Builder maxBackoff(Duration maxBackoff) {
        settings.refresh(4, maxBackoff);
        return self();
    }

    /**
     * Sets the timeout of one HTTP request (storage option {@code timeout}, in milliseconds, e.g.
     * {@code 1500ms}); replaces that option if also given. This and the following client settings
     * are storage options with the same keys for every cloud (S3, Azure, GCS), so they can also
     * come with the options or from a catalog ({@code timeout}, {@code connect_timeout}, {@code
     * max_retries}, {@code retry_timeout}, {@code retry_init_backoff}, {@code retry_max_backoff});
     * a bad value is an {@link InvalidOptionsException} naming the key when the store is opened.
     *
     * @param requestTimeout the timeout, or {@code null} to leave it to the options / default
     * @return this builder
     * @throws IllegalArgumentException if {@code requestTimeout} is zero or negative
     */
    public ObjectStore.Builder requestTimeout(Duration requestTimeout) {
        settings.clientDuration("requestTimeout", StoreSettings.REQUEST_TIMEOUT, requestTimeout);
        return self();
    }

    /**
     * Sets the timeout of establishing a connection (storage option {@code connect_timeout}).
     *
     * @param connectTimeout the timeout, or {@code null} to leave it to the options / default
     * @return this builder
     * @throws IllegalArgumentException if {@code connectTimeout} is zero or negative
     */
    public ObjectStore.Builder connectTimeout(Duration connectTimeout) {
        settings.clientDuration("connectTimeout", StoreSettings.CONNECT_TIMEOUT, connectTimeout);
        return self();
    }

    /**
     * Sets how often a failed request (5xx, 429, a dropped connection) is retried (storage option
     * {@code max_retries}).
     *
     * @param maxRetries retries, {@code 0} for none
     * @return this builder
     * @throws IllegalArgumentException if {@code maxRetries} is negative
     */
    public ObjectStore.Builder maxRetries(int maxRetries) {
        settings.maxRetries(maxRetries);
        return self();
    }

    /**
     * Sets the longest time spent retrying one request (storage option {@code retry_timeout}).
     *
     * @param retryTimeout the time, or {@code null} to leave it to the options / default
     * @return this builder
     * @throws IllegalArgumentException if {@code retryTimeout} is zero or negative
     */
    public ObjectStore.Builder retryTimeout(Duration retryTimeout) {
        settings.clientDuration("retryTimeout", StoreSettings.RETRY_TIMEOUT, retryTimeout);
        return self();
    }

    /**
     * Sets whether the store may write (storage option {@code access_mode}); replaces that option
     * if also given. A {@link AccessMode#READ} store refuses puts, multipart uploads, copies,
     * renames and deletes itself, before any request, with a {@link CredentialsException} naming
     * the operation, the location and the read open; it is a store of its own, with its own
     * credentials; with a catalog spec as provider, a Unity Catalog spec asks for {@code READ}
     * credentials (see {@link AccessMode}).
     *
     * @param accessMode the mode, or {@code null} to leave it to the options / default ({@link
     *     AccessMode#READ_WRITE})
     * @return this builder
     */
    public ObjectStore.Builder accessMode(AccessMode accessMode) {
        if (accessMode == null) {
            settings.client.remove(AccessMode.OPTION);
        } else {
            settings.client.put(AccessMode.OPTION, accessMode.optionValue());
        }
        return self();
    }

    /**
     * Sets the session whose caches the store uses.
     *
     * @param session the session, or {@code null} for none
     * @return this builder
     */
    public ObjectStore.Builder session(Session session) {
        settings.session = session;
        return self();
    }

    /**
     * Opens the store; see {@link ObjectStore#open(String, Map, StorageOptionsProvider, Duration,
     * Session)}.
     *
     * @return the open store
     * @throws IllegalStateException if the session is closed
     * @throws InvalidOptionsException if the URI or the options cannot be used, or a refresh
     *     setting is out of bounds (the message names the setting)
     * @throws StorageException as {@link ObjectStore#open(String, Map, StorageOptionsProvider,
     *     Duration, Session)}
     */
    public ObjectStore open() throws StorageException {
        return ObjectStore.wrap(
                uri,
                StoreSettings.openHandle(
                        uri,
                        settings.effectiveOptions(),
                        settings.provider,
                        settings.refreshMillis(),
                        settings.session));
    }

    /**
     * The settings, printable: the URI without user info or query, option values through {@link
     * Redaction} (only values of non-secret keys are shown).
     *
     * @return a description without secrets
     */
    @Override
    public String toString() {
        return "ObjectStore.Builder{uri="
                + Redaction.redactUri(uri)
                + ", "
                + settings.describe()
                + "}";
    }
}
