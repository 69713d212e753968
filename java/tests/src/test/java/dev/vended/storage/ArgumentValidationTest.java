package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** Argument checks that happen in Java before any native call (no native library needed). */
class ArgumentValidationTest {

    @Test
    void nullUriIsNamed() {
        NullPointerException e =
                assertThrows(NullPointerException.class, () -> ObjectStore.open(null, Map.of()));
        assertEquals("uri", e.getMessage());
        assertThrows(NullPointerException.class, () -> ObjectStore.builder(null));
    }

    @Test
    void nullOptionValueIsInvalidAndNamesTheKey() {
        Map<String, String> options = new HashMap<>();
        options.put("aws_region", null);
        InvalidOptionsException e =
                assertThrows(
                        InvalidOptionsException.class, () -> ObjectStore.open("s3://b/", options));
        assertTrue(e.getMessage().contains("aws_region"), e.getMessage());
    }

    @Test
    void nullOptionKeyIsRejected() {
        Map<String, String> options = new HashMap<>();
        options.put(null, "x");
        assertThrows(NullPointerException.class, () -> ObjectStore.open("s3://b/", options));
    }

    @Test
    void negativeLeadTimeIsRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> ObjectStore.open("memory://", null, () -> null, Duration.ofSeconds(-1)));
    }

    @Test
    void decodesNativeObjectMeta() {
        ObjectMeta m =
                ObjectMeta.fromNative(
                        new String[] {"a/b", "12", "1767225600000", "\"e\"", null}, 0);
        assertEquals(new ObjectMeta("a/b", 12, 1767225600000L, "\"e\"", null), m);
        assertEquals(1767225600000L, m.lastModified().toEpochMilli());
        assertThrows(
                IllegalStateException.class,
                () -> ObjectMeta.fromNative(new String[] {"a", "x", "1", null, null}, 0));
        assertThrows(
                IllegalStateException.class, () -> ObjectMeta.fromNative(new String[] {"a"}, 0));
    }

    @Test
    void decodesNativeRefreshStats() {
        RefreshStats s = RefreshStats.fromNative(new long[] {3, 1, 1000, -1, 0, 4, 0, 0, 0, 0});
        assertEquals(new RefreshStats(3, 1, 1000, -1, 0, 4), s);
        assertEquals(Optional.empty(), s.expiresAt());
        assertEquals(
                5L,
                RefreshStats.fromNative(new long[] {0, 0, 0, 5, 0, 0, 0, 0, 0, 0})
                        .expiresAt()
                        .get()
                        .toEpochMilli());
        assertThrows(IllegalStateException.class, () -> RefreshStats.fromNative(new long[] {1}));
        assertThrows(IllegalStateException.class, () -> RefreshStats.fromNative(null));
    }

    @Test
    void everyExceptionHasTheConstructorTheNativeSideUses() throws Exception {
        Class<?>[] classes = {
            StorageException.class,
            ObjectNotFoundException.class,
            ObjectAlreadyExistsException.class,
            PreconditionFailedException.class,
            CredentialsException.class,
            InvalidOptionsException.class,
            StorageTimeoutException.class
        };
        RuntimeException cause = new RuntimeException("c");
        for (Class<?> c : classes) {
            Object e = c.getConstructor(String.class, Throwable.class).newInstance("m", cause);
            assertTrue(e instanceof StorageException, c.getName());
            assertTrue(e instanceof java.io.IOException, c.getName());
            assertEquals("m", ((Throwable) e).getMessage());
            assertEquals(cause, ((Throwable) e).getCause());
            Object bare = c.getConstructor(String.class, Throwable.class).newInstance("m", null);
            assertNull(((Throwable) bare).getCause());
        }
    }
}
