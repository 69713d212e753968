package dev.vended.storage;

/**
 * A conditional request failed: the object changed (ETag or version mismatch) since it was read.
 */
public class PreconditionFailedException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public PreconditionFailedException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public PreconditionFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
