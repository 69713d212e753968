package dev.vended.storage;

/** An operation, or the wait for fresh credentials from the provider, took longer than allowed. */
public class StorageTimeoutException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#TIMEOUT}.
     *
     * @param message what went wrong; never contains a secret
     */
    public StorageTimeoutException(String message) {
        super(message, null, Kind.TIMEOUT);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#TIMEOUT}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public StorageTimeoutException(String message, Throwable cause) {
        super(message, cause, Kind.TIMEOUT);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    StorageTimeoutException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
