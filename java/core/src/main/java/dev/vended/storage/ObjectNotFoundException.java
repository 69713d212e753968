package dev.vended.storage;

/** The object (or the prefix it was looked up under) does not exist. */
public class ObjectNotFoundException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public ObjectNotFoundException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public ObjectNotFoundException(String message, Throwable cause) {
        super(message, cause);
    }
}
