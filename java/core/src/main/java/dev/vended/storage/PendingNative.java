package dev.vended.storage;

/**
 * Native methods of deferred commits; see {@code crates/jni/src/pending.rs} for the contract. The
 * library is loaded by {@link NativeBridge} (an {@link ObjectStore} exists before any of these is
 * called).
 */
final class PendingNative {
    private PendingNative() {}

    static native long open(
            long store, String path, long partSize, int maxConcurrency, String record)
            throws StorageException;

    static native String closePending(long writer) throws StorageException;

    static native String[] describe(String json) throws StorageException;

    static native String[] complete(long store, String json) throws StorageException;

    static native void abort(long store, String json) throws StorageException;

    static native long abortRecorded(long store, String prefix) throws StorageException;
}
