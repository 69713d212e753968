package dev.vended.storage;

import java.lang.ref.Reference;

/**
 * A native call on an acquired store handle, and the plumbing around it ({@link #with}): the
 * handle is acquired for the call (so a concurrent close releases the native store only after the
 * call returns) and the owner is kept reachable until then (so its {@link java.lang.ref.Cleaner}
 * cannot release the handle mid-call).
 *
 * @param <T> what the call returns
 */
@FunctionalInterface
interface HandleCall<T> {

    /**
     * Makes the call.
     *
     * @param handle the native handle, valid during the call
     * @return the call's result
     * @throws StorageException as the native call
     */
    T apply(long handle) throws StorageException;

    /**
     * Runs {@code call} with {@code handle} acquired, then releases it and keeps {@code owner}
     * reachable until then.
     *
     * @param handle the owner's native handle
     * @param owner the object whose {@link java.lang.ref.Cleaner} closes {@code handle}
     * @param call the native call
     * @return the call's result
     * @throws IllegalStateException if the handle is closed (the call is not made)
     * @throws StorageException as the call
     */
    static <T> T with(NativeHandle handle, Object owner, HandleCall<T> call)
            throws StorageException {
        long h = handle.acquire();
        try {
            return call.apply(h);
        } finally {
            handle.release();
            Reference.reachabilityFence(owner);
        }
    }
}
