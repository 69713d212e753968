package dev.vended.storage;

/**
 * A whole-object read received bytes whose checksum differs from the one the service stores for
 * the object (storage option {@code checksums}, on by default). The message names the object,
 * the algorithm ({@code CRC64NVME}, {@code CRC32C} or {@code MD5}) and both values (base64). The
 * bytes of the failed read are not returned.
 */
public class ChecksumMismatchException extends StorageException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception, of kind {@link StorageException.Kind#INTEGRITY}.
     *
     * @param message what went wrong; never contains a secret
     */
    public ChecksumMismatchException(String message) {
        super(message, null, Kind.INTEGRITY);
    }

    /** Constructed by the native library with the core's kind and retryability. */
    ChecksumMismatchException(String message, Throwable cause, String kind, boolean retryable) {
        super(message, cause, kind, retryable);
    }
}
