package dev.vended.storage;

/**
 * Test-only native methods of the async binding, exported only by the test build of the native
 * library (cargo feature {@code test-hooks}); see {@link NativeTestHooks}.
 */
final class AsyncTestHooks {

    static {
        NativeLoader.load();
    }

    private AsyncTestHooks() {}

    /**
     * Starts a native task whose operation panics with {@code message}; {@code sink} hears when it
     * ended, as for {@link AsyncNative}'s {@code start*} methods.
     *
     * @param message the panic message
     * @param sink told the task id once the task ended
     * @return the task id
     */
    static native long startPanic(String message, AsyncNative.Sink sink);
}
