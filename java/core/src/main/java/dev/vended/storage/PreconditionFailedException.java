package dev.vended.storage;

/**
 * A conditional request failed: the object changed (ETag or version mismatch) since it was read.
 */
public class PreconditionFailedException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#PRECONDITION}.
     *
     * @param message what went wrong; never contains a secret
     */
    public PreconditionFailedException(String message) {
        super(message, null, Kind.PRECONDITION);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#PRECONDITION}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public PreconditionFailedException(String message, Throwable cause) {
        super(message, cause, Kind.PRECONDITION);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    PreconditionFailedException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
