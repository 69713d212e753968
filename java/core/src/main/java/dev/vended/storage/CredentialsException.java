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
     * Creates the exception, of kind {@link StorageException.Kind#CREDENTIALS}.
     *
     * @param message what went wrong; never contains a secret
     */
    public CredentialsException(String message) {
        super(message, null, Kind.CREDENTIALS);
    }

    /**
     * Creates the exception, of kind {@link StorageException.Kind#CREDENTIALS}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public CredentialsException(String message, Throwable cause) {
        super(message, cause, Kind.CREDENTIALS);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    CredentialsException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
