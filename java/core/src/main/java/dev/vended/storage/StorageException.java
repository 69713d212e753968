package dev.vended.storage;

/**
 * Base class of every checked exception thrown by {@link ObjectStore}.
 *
 * <p>The subclasses name the failures callers usually handle differently: {@link
 * ObjectNotFoundException}, {@link ObjectAlreadyExistsException}, {@link
 * PreconditionFailedException}, {@link CredentialsException}, {@link InvalidOptionsException} and
 * {@link StorageTimeoutException}. Anything else (I/O errors, unexpected endpoint answers) is
 * reported as a plain {@code StorageException}.
 *
 * <p>Messages never contain secrets (secret keys, session tokens, SAS tokens, passwords).
 */
public class StorageException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what went wrong; never contains a secret
     */
    public StorageException(String message) {
        super(message);
    }

    /**
     * Creates the exception. The native library constructs it through this constructor (JNI
     * signature {@code (Ljava/lang/String;Ljava/lang/Throwable;)V}).
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
