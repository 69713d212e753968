package dev.vended.storage;

import java.io.UncheckedIOException;

/**
 * A {@link StorageException} thrown where a checked exception cannot be: from an {@link
 * java.util.Iterator} or {@link java.util.stream.Stream} ({@link ObjectListing}).
 */
public class UncheckedStorageException extends UncheckedIOException {
    private static final long serialVersionUID = 1L;

    /**
     * Wraps a storage failure.
     *
     * @param cause the failure (its message becomes this exception's message)
     */
    public UncheckedStorageException(StorageException cause) {
        super(cause.getMessage(), cause);
    }

    /**
     * The wrapped failure's kind; see {@link StorageException#kind()}.
     *
     * @return the kind, never {@code null}
     */
    public StorageException.Kind kind() {
        return getCause().kind();
    }

    /**
     * Whether the wrapped failure is retryable; see {@link StorageException#isRetryable()}.
     *
     * @return {@code true} when a later retry makes sense
     */
    public boolean isRetryable() {
        return getCause().isRetryable();
    }

    @Override
    public synchronized StorageException getCause() {
        return (StorageException) super.getCause();
    }
}
