package dev.vended.storage;

/** An operation, or the wait for fresh credentials from the provider, took longer than allowed. */
public class StorageTimeoutException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public StorageTimeoutException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public StorageTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
