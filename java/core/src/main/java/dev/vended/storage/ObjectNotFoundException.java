package dev.vended.storage;

/** The object (or the prefix it was looked up under) does not exist. */
public class ObjectNotFoundException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#NOT_FOUND}.
     *
     * @param message what went wrong; never contains a secret
     */
    public ObjectNotFoundException(String message) {
        super(message, null, Kind.NOT_FOUND);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#NOT_FOUND}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public ObjectNotFoundException(String message, Throwable cause) {
        super(message, cause, Kind.NOT_FOUND);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    ObjectNotFoundException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
