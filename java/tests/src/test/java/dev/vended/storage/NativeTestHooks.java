package dev.vended.storage;

/**
 * Test-only native methods, exported only by the test build of the native library (cargo feature
 * {@code test-hooks} of {@code vended-storage-jni}); the shipped library has none of them. The
 * tests module's pom builds that library and loads it through {@code
 * -Dvended.storage.native.library} (see {@link NativeLoader}).
 */
final class NativeTestHooks {

    static {
        NativeLoader.load();
    }

    private NativeTestHooks() {}

    /**
     * Panics in native code with {@code message}, in the calling thread or (when {@code inRuntime})
     * inside a task on the native runtime, to show that a panic becomes a Java exception.
     *
     * @param message the panic message
     * @param inRuntime panic on a runtime thread instead of the calling thread
     * @throws StorageException carrying the panic message (always)
     */
    static native void panic(String message, boolean inRuntime) throws StorageException;

    /**
     * Stream blocks lent by the native side and not yet released (process-wide).
     *
     * @return the count
     */
    static native long liveBlocks();
}
