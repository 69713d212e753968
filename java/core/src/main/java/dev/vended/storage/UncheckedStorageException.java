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

    @Override
    public synchronized StorageException getCause() {
        return (StorageException) super.getCause();
    }
}
