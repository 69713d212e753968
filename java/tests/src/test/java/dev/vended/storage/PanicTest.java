package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * A Rust panic never crosses into the JVM: it becomes a {@link StorageException} carrying the panic
 * message, and the library keeps working. Uses {@link NativeTestHooks}, which only the test build of
 * the native library (cargo feature {@code test-hooks}) exports; the tests module's pom builds it
 * and points {@code -Dvended.storage.native.library} at it.
 */
@Timeout(60)
class PanicTest {

    @RepeatedTest(3)
    void panicInTheCallingThreadBecomesAnException() throws Exception {
        StorageException e =
                assertThrows(
                        StorageException.class,
                        () -> NativeTestHooks.panic("boom in caller \u00e9", false));
        assertTrue(e.getMessage().contains("boom in caller \u00e9"), e.getMessage());
        stillWorks();
    }

    @RepeatedTest(3)
    void panicOnARuntimeThreadBecomesAnException() throws Exception {
        StorageException e =
                assertThrows(
                        StorageException.class,
                        () -> NativeTestHooks.panic("boom in runtime", true));
        assertTrue(e.getMessage().contains("boom in runtime"), e.getMessage());
        stillWorks();
    }

    private static void stillWorks() throws Exception {
        try (ObjectStore store = ObjectStore.open("memory:///after-panic/", null)) {
            store.put("ok", new byte[] {4});
            assertArrayEquals(new byte[] {4}, store.get("ok"));
        }
    }
}
