package dev.vended.storage;

import java.util.Map;

/**
 * A source of storage options (credentials, endpoint, region, ...) that the native object store
 * calls whenever it needs fresh credentials.
 *
 * <p>Typical implementations ask a table catalog for the credentials it vends for one table (Lance
 * Namespace {@code DescribeTable}, Iceberg REST {@code loadCredentials}, Unity Catalog, Polaris).
 * The native side calls {@link #fetchStorageOptions()} before the current credentials expire (by
 * the store's lead time), from a background thread that is attached to the JVM as a daemon, and
 * never from more than one thread at a time for the same store: concurrent requests wait for one
 * refresh instead of calling the provider each.
 *
 * <h2>Keys</h2>
 *
 * Keys follow the Rust {@code object_store} configuration names:
 *
 * <ul>
 *   <li>{@code aws_access_key_id}, {@code aws_secret_access_key}, {@code aws_session_token}
 *   <li>{@code aws_region}, {@code aws_endpoint}, {@code aws_allow_http}
 *   <li>{@code expires_at_millis}: when the credentials expire, as epoch <b>milliseconds</b> in a
 *       decimal string, e.g. {@code "1767225600000"}. Values that look like epoch seconds, are
 *       negative, not a number, or already in the past are rejected as a failed refresh.
 * </ul>
 *
 * Options the provider does not return (for example endpoint and region) keep the values the store
 * was opened with.
 *
 * <h2>Failures</h2>
 *
 * If {@code fetchStorageOptions} throws, the store keeps using the credentials it has while they
 * are still valid, backs off and retries. Once they have expired, callers get a {@link
 * CredentialsException} whose message names the provider and whose cause is the throwable the
 * provider threw. Implementations must be thread-safe and should not block for long.
 */
@FunctionalInterface
public interface StorageOptionsProvider {

    /**
     * Returns the complete storage options to use from now on.
     *
     * @return the options, including {@code expires_at_millis} for credentials that expire; or
     *     {@code null} when there is nothing new (the store keeps its current options). Neither
     *     keys nor values may be {@code null}.
     * @throws Exception when the options cannot be obtained; the store reports it as the cause of a
     *     {@link CredentialsException} once its credentials have expired
     */
    Map<String, String> fetchStorageOptions() throws Exception;

    /**
     * Names the credential source for the native store cache.
     *
     * <p>Stores are shared only between opens whose URI, non-secret options and credential source
     * are equal. By default the credential source is this very object: the native side keeps a
     * reference to it and compares providers by object identity, exactly (the default string
     * returned here, which contains the identity hash code, is informational only and is never used
     * as a cache key, since hash codes can collide).
     *
     * <p>Override it to share one native store and one credential cache across equal provider
     * instances, for example every Spark task of one job that reads the same table through its own
     * deserialized copy of the provider: return a stable string that identifies the credential
     * source completely (catalog, table, principal), such as {@code
     * "rest-catalog:https://catalog/v1:db.table:alice"}. Two providers with the same id must vend
     * interchangeable credentials. The id must not contain secrets.
     *
     * @return a non-blank identifier of this credential source
     */
    default String providerId() {
        return getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(this));
    }
}
