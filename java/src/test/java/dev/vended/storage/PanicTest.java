package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

/**
 * A Rust panic never crosses into the JVM: it becomes a {@link StorageException} carrying the panic
 * message, and the library keeps working (needs {@code VENDED_STORAGE_TEST_HOOKS=1}, which the pom
 * sets for surefire).
 */
@Timeout(60)
class PanicTest {

    @BeforeEach
    void hooksEnabled() {
        assumeTrue(
                "1".equals(System.getenv("VENDED_STORAGE_TEST_HOOKS")),
                "VENDED_STORAGE_TEST_HOOKS=1 not set");
    }

    @RepeatedTest(3)
    void panicInTheCallingThreadBecomesAnException() throws Exception {
        StorageException e =
                assertThrows(
                        StorageException.class,
                        () -> NativeBridge.testPanic("boom in caller \u00e9", false));
        assertTrue(e.getMessage().contains("boom in caller \u00e9"), e.getMessage());
        stillWorks();
    }

    @RepeatedTest(3)
    void panicOnARuntimeThreadBecomesAnException() throws Exception {
        StorageException e =
                assertThrows(
                        StorageException.class,
                        () -> NativeBridge.testPanic("boom in runtime", true));
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
