package dev.vended.storage;

/**
 * The calling thread was interrupted ({@link Thread#interrupt()}: Spark killing a task, an executor
 * shutting down) while it waited for a synchronous read; the request and its connection were
 * dropped. The thread's interrupt status stays set. Not retryable: the caller asked to stop.
 *
 * <p>Reads that wait for the native runtime check the status about every 50 ms (ranged reads,
 * whole objects, vectored {@code getRanges}, a stream's blocks). A stream's streaming GET ({@link
 * ReadPolicy#SEQUENTIAL}) reads its connection on the calling thread and is bounded by the store's
 * read timeout instead.
 */
public class StorageInterruptedException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#INTERRUPTED}.
     *
     * @param message what was interrupted; never contains a secret
     */
    public StorageInterruptedException(String message) {
        super(message, null, Kind.INTERRUPTED);
    }

    /** Constructed by the native library with the kind and retryability. */
    StorageInterruptedException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
