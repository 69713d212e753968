package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

/** How the provider id passed to the native side is derived (no native library needed). */
class ProviderIdTest {

    static class PlainProvider implements StorageOptionsProvider {
        @Override
        public Map<String, String> fetchStorageOptions() {
            return null;
        }
    }

    static class NamedProvider extends PlainProvider {
        private final String id;

        NamedProvider(String id) {
            this.id = id;
        }

        @Override
        public String providerId() {
            return id;
        }
    }

    static class InheritsNamed extends NamedProvider {
        InheritsNamed() {
            super("inherited-id");
        }
    }

    interface TableProvider extends StorageOptionsProvider {
        @Override
        default String providerId() {
            return "table:db.t";
        }
    }

    @Test
    void defaultIdentityIsPassedAsNull() throws Exception {
        assertNull(ObjectStore.nativeProviderId(new PlainProvider()));
        StorageOptionsProvider lambda = () -> null;
        assertNull(ObjectStore.nativeProviderId(lambda));
    }

    @Test
    void defaultIdentityStringNamesClassAndIdentityHash() {
        PlainProvider p = new PlainProvider();
        assertEquals(
                PlainProvider.class.getName()
                        + "@"
                        + Integer.toHexString(System.identityHashCode(p)),
                p.providerId());
    }

    @Test
    void overriddenIdIsPassed() throws Exception {
        assertEquals("catalog:t1", ObjectStore.nativeProviderId(new NamedProvider("catalog:t1")));
        assertEquals("inherited-id", ObjectStore.nativeProviderId(new InheritsNamed()));
        TableProvider table = () -> null;
        assertEquals("table:db.t", ObjectStore.nativeProviderId(table));
    }

    @Test
    void nullOrBlankOverriddenIdIsInvalid() {
        for (String id : new String[] {null, "", "   "}) {
            InvalidOptionsException e =
                    assertThrows(
                            InvalidOptionsException.class,
                            () -> ObjectStore.nativeProviderId(new NamedProvider(id)));
            assertTrue(e.getMessage().contains(NamedProvider.class.getName()), e.getMessage());
        }
    }

    @Test
    void throwingOverriddenIdIsInvalidWithCause() {
        IllegalStateException boom = new IllegalStateException("no id today");
        StorageOptionsProvider p =
                new PlainProvider() {
                    @Override
                    public String providerId() {
                        throw boom;
                    }
                };
        InvalidOptionsException e =
                assertThrows(InvalidOptionsException.class, () -> ObjectStore.nativeProviderId(p));
        assertSame(boom, e.getCause());
        assertTrue(e.getMessage().contains("no id today"), e.getMessage());
    }

    @Test
    void openRejectsBadProviderIdBeforeTouchingNativeCode() {
        assertThrows(
                InvalidOptionsException.class,
                () -> ObjectStore.open("memory://", Map.of(), new NamedProvider(" ")));
    }

    @Test
    void leadTimeConversion() {
        assertEquals(-1L, ObjectStore.leadTimeMillis(null));
        assertEquals(0L, ObjectStore.leadTimeMillis(Duration.ZERO));
        assertEquals(1500L, ObjectStore.leadTimeMillis(Duration.ofMillis(1500)));
        assertEquals(
                Long.MAX_VALUE, ObjectStore.leadTimeMillis(Duration.ofSeconds(Long.MAX_VALUE)));
        assertThrows(
                IllegalArgumentException.class,
                () -> ObjectStore.leadTimeMillis(Duration.ofMillis(-1)));
    }
}
