package dev.vended.storage;

/** The object already exists and the operation was asked not to overwrite it. */
public class ObjectAlreadyExistsException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#ALREADY_EXISTS}.
     *
     * @param message what went wrong; never contains a secret
     */
    public ObjectAlreadyExistsException(String message) {
        super(message, null, Kind.ALREADY_EXISTS);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#ALREADY_EXISTS}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public ObjectAlreadyExistsException(String message, Throwable cause) {
        super(message, cause, Kind.ALREADY_EXISTS);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    ObjectAlreadyExistsException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
