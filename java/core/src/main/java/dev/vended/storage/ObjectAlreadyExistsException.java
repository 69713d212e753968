package dev.vended.storage;

/** The object already exists and the operation was asked not to overwrite it. */
public class ObjectAlreadyExistsException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public ObjectAlreadyExistsException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public ObjectAlreadyExistsException(String message, Throwable cause) {
        super(message, cause);
    }
}
