package dev.vended.storage;

/**
 * The URI or the storage options cannot be used: unknown scheme, missing bucket, a missing or
 * malformed option (for example {@code expires_at_millis} that is not epoch milliseconds, or an
 * access key id without its secret), or a provider whose {@link
 * StorageOptionsProvider#providerId()} is unusable.
 */
public class InvalidOptionsException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#INVALID_OPTIONS}.
     *
     * @param message what went wrong; never contains a secret
     */
    public InvalidOptionsException(String message) {
        super(message, null, Kind.INVALID_OPTIONS);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#INVALID_OPTIONS}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public InvalidOptionsException(String message, Throwable cause) {
        super(message, cause, Kind.INVALID_OPTIONS);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    InvalidOptionsException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
