package dev.vended.storage;

import java.util.Locale;

/**
 * Whether a store may write: {@link #READ} or {@link #READ_WRITE} (the default). Set with {@link
 * ObjectStore.Builder#accessMode(AccessMode)}; it reaches the native core as the storage option
 * {@value #OPTION} ({@code read} / {@code read_write}), so it can also be given with the options.
 *
 * <p>A store opened {@link #READ}:
 *
 * <ul>
 *   <li>refuses every write (put, multipart upload, copy, rename, delete) itself, before any
 *       request is sent and before any credential is fetched: a {@link CredentialsException}
 *       (kind {@link StorageException.Kind#CREDENTIALS}, not retryable) whose message names the
 *       operation, the location and that the table was opened for reading;
 *   <li>is a store of its own: a {@code READ} store and a {@code READ_WRITE} store of one table
 *       never share a native store, a credential cache or a refresher, even with the same
 *       provider;
 *   <li>with a catalog spec as its provider, asks the catalog for the scope it needs where the
 *       protocol has one: a Unity Catalog spec asks for {@code READ} credentials ({@code
 *       PATH_READ} for a path). Iceberg REST and Lance Namespace have no read/write parameter
 *       (the catalog vends what the caller's principal may do), so there it only adds the local
 *       refusal.
 * </ul>
 *
 * <p>Your own {@link StorageOptionsProvider} is not told the mode: if your catalog can vend
 * narrower credentials for reading, construct one provider per mode (for example {@code new
 * OrdersCredentials(catalog, table, AccessMode.READ)}) and pass each to the store of that mode.
 * The stores are kept apart by mode whatever the provider's id, so a provider that ignores the
 * mode stays correct: a {@code READ} store then simply holds the provider's (broader) credential
 * and still refuses writes.
 */
public enum AccessMode {
    /** Reads, {@code HEAD}s and listings only; every write is refused locally. */
    READ("read"),
    /** Reads and writes (the default). */
    READ_WRITE("read_write");

    /** The storage option the mode travels in: {@code access_mode}. */
    public static final String OPTION = "access_mode";

    private final String optionValue;

    AccessMode(String optionValue) {
        this.optionValue = optionValue;
    }

    /**
     * The value of the {@value #OPTION} storage option for this mode.
     *
     * @return {@code read} or {@code read_write}
     */
    public String optionValue() {
        return optionValue;
    }

    /**
     * Reads a mode as the option or a configuration spells it: {@code read}, {@code read_write} or
     * {@code read-write}, case ignored.
     *
     * @param text the text
     * @return the mode
     * @throws IllegalArgumentException naming the text if it is none of those
     */
    public static AccessMode parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        switch (t) {
            case "read":
                return READ;
            case "read_write":
            case "read-write":
                return READ_WRITE;
            default:
                throw new IllegalArgumentException(
                        "access mode must be read or read_write, got '" + text + "'");
        }
    }
}
