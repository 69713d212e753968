package dev.vended.storage;

/**
 * The request was not authorized, or no usable credentials could be obtained.
 *
 * <p>Thrown when the endpoint rejects a request (access denied, {@code ExpiredToken}, {@code
 * InvalidAccessKeyId}, ...) even after one retry with freshly fetched credentials, and when the
 * {@link StorageOptionsProvider} fails: it throws, or returns options that cannot be used. In the
 * latter case the message names the provider and carries the provider's own message, and {@link
 * #getCause()} is the throwable the provider threw.
 */
public class CredentialsException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public CredentialsException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public CredentialsException(String message, Throwable cause) {
        super(message, cause);
    }
}
