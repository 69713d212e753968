package dev.vended.storage;

import static dev.vended.storage.testkit.ScriptedProvider.throwing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.ScriptedProvider;
import dev.vended.storage.testkit.Waits;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;

/**
 * C16: the provider throws (RuntimeException, Error, checked Exception), returns null, or returns a
 * map with a null value. The failure reaches the caller as a {@link CredentialsException} that
 * names the provider and carries the provider's throwable; the next call works. (Run with {@code
 * -Pxcheck-jni} to also check for JNI warnings.)
 */
@Timeout(60)
class C16ProviderExceptionTest {

    /** The first retry delay after a failed refresh, short to keep the tests quick. */
    private static final Duration BACKOFF = Duration.ofMillis(100);


    private static final byte[] SEED = "seed".getBytes(StandardCharsets.UTF_8);

    private static LocalS3Server server;
    private static String prefix;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c16");
        prefix = "c16-" + UUID.randomUUID() + "/";
        try (ObjectStore root = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            root.put("seed.bin", SEED);
        }
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** A step that vends fresh credentials valid for {@code ttlMillis}. */
    private static ScriptedProvider.Step vend(long ttlMillis) {
        return () -> server.options(server.issueCredentials(ttlMillis, null));
    }

    /** Opens a store with endpoint options only (no credentials) and reads the seed. */
    private static byte[] openAndRead(ScriptedProvider provider) throws StorageException {
        try (ObjectStore store =
                ObjectStore.open(server.uri(prefix), server.endpointOptions(), provider)) {
            return store.get("seed.bin");
        }
    }

    private static void assertProviderFailure(
            StorageException e,
            ScriptedProvider provider,
            Class<? extends Throwable> causeClass,
            String causeMessage) {
        Throwable cause = e.getCause();
        assertNotNull(cause, () -> "no cause on " + e);
        assertEquals(causeClass, cause.getClass(), () -> "cause of " + e);
        assertEquals(causeMessage, cause.getMessage());
        String m = e.getMessage();
        assertTrue(m.contains(causeMessage), () -> "message lacks the provider's message: " + m);
        assertTrue(
                m.contains(ScriptedProvider.class.getSimpleName()),
                () -> "message does not name the provider (" + provider.providerId() + "): " + m);
    }

    @Test
    void c16_runtimeExceptionOnOpenThenSuccess() throws Exception {
        RuntimeException boom = new RuntimeException("catalog down");
        ScriptedProvider provider = new ScriptedProvider(throwing(boom), vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertProviderFailure(e, provider, RuntimeException.class, "catalog down");

        assertArrayEquals(SEED, openAndRead(provider));
        assertTrue(provider.calls() >= 2, "provider not called again");
    }

    @Test
    void c16_errorOnOpenThenSuccess() throws Exception {
        ScriptedProvider provider =
                new ScriptedProvider(
                        throwing(new AssertionError("catalog assertion")), vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertProviderFailure(e, provider, AssertionError.class, "catalog assertion");

        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_checkedExceptionOnOpenThenSuccess() throws Exception {
        ScriptedProvider provider =
                new ScriptedProvider(
                        throwing(new TimeoutException("catalog timed out")), vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertProviderFailure(e, provider, TimeoutException.class, "catalog timed out");

        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_runtimeExceptionOnRefreshAfterExpiryThenSuccess() throws Exception {
        VendedCredentials gen1 = server.issueCredentials(1_500, null);
        RuntimeException boom = new RuntimeException("catalog down");
        ScriptedProvider provider = new ScriptedProvider(throwing(boom));

        try (ObjectStore store =
                ObjectStore.builder(server.uri(prefix))
                        .options(server.options(gen1))
                        .provider(provider)
                        .initialBackoff(BACKOFF)
                        .open()) {
            assertArrayEquals(SEED, store.get("seed.bin"));

            Waits.sleepUntil(gen1.expiresAtMillis() + 300); // the scenario: gen1 expires

            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> store.get("seed.bin"));
            assertProviderFailure(e, provider, RuntimeException.class, "catalog down");
            assertFalse(e.getMessage().contains(gen1.secretAccessKey()));

            provider.otherwise(vend(60_000));
            // A failed refresh backs off (C17): the next provider call comes after the backoff.
            Waits.sleepUntil(System.currentTimeMillis() + 3 * BACKOFF.toMillis());
            assertArrayEquals(SEED, store.get("seed.bin"));
        }
        assertEquals(
                0,
                server.stats(gen1.accessKeyId()).rejected(),
                "expired gen1 was sent to the endpoint");
    }

    @Test
    void c16_nullWhileInitialOptionsAreValidKeepsWorking() throws Exception {
        VendedCredentials gen1 = server.issueCredentials(4_000, null);
        ScriptedProvider provider = new ScriptedProvider(() -> null);

        try (ObjectStore store =
                ObjectStore.open(
                        server.uri(prefix),
                        server.options(gen1),
                        provider,
                        Duration.ofSeconds(2))) {
            assertArrayEquals(SEED, store.get("seed.bin"));

            // Into the lead window: a refresh is due, the provider has nothing new.
            Waits.sleepUntil(gen1.expiresAtMillis() - 1_200);
            assertArrayEquals(SEED, store.get("seed.bin"));
            assertTrue(
                    provider.awaitCalls(1, Duration.ofSeconds(5)),
                    "provider never asked for a refresh inside the lead window");
            assertArrayEquals(SEED, store.get("seed.bin"));
            store.list(null);
        }
        KeyStats k = server.stats(gen1.accessKeyId());
        assertEquals(0, k.rejected(), k.toString());
        assertTrue(k.accepted() >= 3, k.toString());
    }

    @Test
    void c16_mapWithNullValueIsAClearErrorThenSuccess() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        ScriptedProvider provider =
                new ScriptedProvider(
                        () -> {
                            Map<String, String> m = server.options(creds);
                            m.put("aws_session_token", null);
                            return m;
                        },
                        vend(60_000));

        StorageException e = assertThrows(StorageException.class, () -> openAndRead(provider));
        assertTrue(
                e instanceof CredentialsException || e instanceof InvalidOptionsException,
                "unexpected exception type: " + e);
        assertTrue(e.getMessage().contains("aws_session_token"), e.getMessage());
        assertTrue(e.getMessage().contains(ScriptedProvider.class.getSimpleName()), e.getMessage());
        assertFalse(e.getMessage().contains(creds.secretAccessKey()), e.getMessage());

        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void c16_mapWithNonStringValueIsAClearErrorThenSuccess() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        ScriptedProvider provider =
                new ScriptedProvider(
                        () -> {
                            Map raw = new HashMap<>(server.options(creds));
                            raw.put("expires_at_millis", Long.valueOf(creds.expiresAtMillis()));
                            return (Map<String, String>) raw;
                        },
                        vend(60_000));

        StorageException e = assertThrows(StorageException.class, () -> openAndRead(provider));
        assertTrue(
                e instanceof CredentialsException || e instanceof InvalidOptionsException,
                "unexpected exception type: " + e);
        assertTrue(e.getMessage().contains("expires_at_millis"), e.getMessage());
        assertFalse(e.getMessage().contains(creds.secretAccessKey()), e.getMessage());

        assertArrayEquals(SEED, openAndRead(provider));
    }

    /** An {@code Error} of the provider's own, of the kind that is never meant to be caught. */
    static final class CatalogMemoryError extends VirtualMachineError {
        private static final long serialVersionUID = 1L;

        CatalogMemoryError(String message) {
            super(message);
        }
    }

    /** A failure must name the provider and carry the very throwable the provider threw. */
    private static void assertCarriesProvidersThrowable(
            CredentialsException e, ScriptedProvider provider, Throwable thrown) {
        assertSame(thrown, e.getCause(), () -> "cause of " + e + " is not the provider's own");
        String m = e.getMessage();
        assertTrue(m.contains(thrown.getMessage()), () -> "message lacks the provider's: " + m);
        assertTrue(m.contains(thrown.getClass().getName()), () -> "message lacks the class: " + m);
        assertTrue(
                m.contains(ScriptedProvider.class.getName()),
                () -> "message does not name the provider (" + provider.providerId() + "): " + m);
    }

    @Test
    void c16_customVirtualMachineErrorOnOpenThenSuccess() throws Exception {
        Error boom = new CatalogMemoryError("catalog client out of memory");
        ScriptedProvider provider = new ScriptedProvider(throwing(boom), vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertCarriesProvidersThrowable(e, provider, boom);
        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_outOfMemoryErrorInstanceOnOpenThenSuccess() throws Exception {
        Error boom = new OutOfMemoryError("simulated: catalog response too large");
        ScriptedProvider provider = new ScriptedProvider(throwing(boom), vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertCarriesProvidersThrowable(e, provider, boom);
        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_checkedExceptionOnRefreshAfterExpiryIsTheCauseThenSuccess() throws Exception {
        VendedCredentials gen1 = server.issueCredentials(1_500, null);
        IOException boom = new IOException("catalog unreachable");
        ScriptedProvider provider = new ScriptedProvider(throwing(boom));

        try (ObjectStore store =
                ObjectStore.builder(server.uri(prefix))
                        .options(server.options(gen1))
                        .provider(provider)
                        .initialBackoff(BACKOFF)
                        .open()) {
            assertArrayEquals(SEED, store.get("seed.bin"));
            Waits.sleepUntil(gen1.expiresAtMillis() + 300); // the scenario: gen1 expires

            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> store.get("seed.bin"));
            assertCarriesProvidersThrowable(e, provider, boom);
            assertTrue(
                    provider.threads().get(0).startsWith("vended-storage-"),
                    () -> "refresh not on a native runtime thread: " + provider.threads());

            provider.otherwise(vend(60_000));
            // A failed refresh backs off (C17): the next provider call comes after the backoff.
            Waits.sleepUntil(System.currentTimeMillis() + 3 * BACKOFF.toMillis());
            assertArrayEquals(SEED, store.get("seed.bin"));
        }
    }

    @Test
    void c16_mapWithNullKeyIsAClearErrorThenSuccess() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        ScriptedProvider provider =
                new ScriptedProvider(
                        () -> {
                            Map<String, String> m = new HashMap<>(server.options(creds));
                            m.put(null, "orphan");
                            return m;
                        },
                        vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertTrue(e.getMessage().contains("null key"), e.getMessage());
        assertTrue(e.getMessage().contains(ScriptedProvider.class.getName()), e.getMessage());
        assertFalse(e.getMessage().contains(creds.secretAccessKey()), e.getMessage());
        assertNull(e.getCause(), "the provider threw nothing");

        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void c16_mapWithIntegerValueOrKeyIsAClearErrorThenSuccess() throws Exception {
        VendedCredentials creds = server.issueCredentials(60_000, null);
        ScriptedProvider provider =
                new ScriptedProvider(
                        () -> {
                            Map raw = new HashMap<>(server.options(creds));
                            raw.put("client_retries", Integer.valueOf(3));
                            return (Map<String, String>) raw;
                        },
                        () -> {
                            Map raw = new HashMap<>(server.options(creds));
                            raw.put(Integer.valueOf(7), "seven");
                            return (Map<String, String>) raw;
                        },
                        vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertTrue(e.getMessage().contains("client_retries"), e.getMessage());
        assertTrue(e.getMessage().contains("not a String"), e.getMessage());
        assertTrue(e.getMessage().contains(ScriptedProvider.class.getName()), e.getMessage());
        assertFalse(e.getMessage().contains(creds.secretAccessKey()), e.getMessage());

        e = assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertTrue(e.getMessage().contains("key that is not a String"), e.getMessage());

        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_mapWhoseIterationThrowsCarriesThatThrowable() throws Exception {
        IllegalStateException boom = new IllegalStateException("lazy catalog map failed");
        ScriptedProvider provider =
                new ScriptedProvider(
                        () ->
                                new java.util.AbstractMap<String, String>() {
                                    @Override
                                    public java.util.Set<Map.Entry<String, String>> entrySet() {
                                        throw boom;
                                    }
                                },
                        vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertCarriesProvidersThrowable(e, provider, boom);
        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_mapWhoseIteratorFailsMidwayIsAnErrorNotAPartialMap() throws Exception {
        // size() says 4 entries; the iterator yields 2, then throws. A partial map (credentials
        // without the endpoint, say) must never be taken for the whole answer.
        ScriptedProvider provider =
                new ScriptedProvider(
                        () ->
                                new java.util.AbstractMap<String, String>() {
                                    @Override
                                    public int size() {
                                        return 4;
                                    }

                                    @Override
                                    public java.util.Set<Map.Entry<String, String>> entrySet() {
                                        return new java.util.AbstractSet<>() {
                                            @Override
                                            public int size() {
                                                return 4;
                                            }

                                            @Override
                                            public java.util.Iterator<Map.Entry<String, String>>
                                                    iterator() {
                                                return new java.util.Iterator<>() {
                                                    private int served;

                                                    @Override
                                                    public boolean hasNext() {
                                                        return true;
                                                    }

                                                    @Override
                                                    public Map.Entry<String, String> next() {
                                                        if (served == 2) {
                                                            throw new java.util
                                                                    .ConcurrentModificationException(
                                                                    "catalog map changed");
                                                        }
                                                        served++;
                                                        return Map.entry("k" + served, "v");
                                                    }
                                                };
                                            }
                                        };
                                    }
                                },
                        vend(60_000));

        CredentialsException e =
                assertThrows(CredentialsException.class, () -> openAndRead(provider));
        assertTrue(e.getMessage().contains("ended after 2 of its 4 entries"), e.getMessage());
        assertArrayEquals(SEED, openAndRead(provider));
    }

    @Test
    void c16_failuresLeaveNativeThreadsUsable() throws Exception {
        // Failures and successes alternate on the native runtime's (reused) blocking threads;
        // a pending exception left behind would break the next call on that thread.
        int rounds = 12;
        List<Throwable> causes = new ArrayList<>();
        ScriptedProvider provider = new ScriptedProvider();
        for (int i = 0; i < rounds; i++) {
            Throwable t =
                    switch (i % 4) {
                        case 0 -> new RuntimeException("catalog down #" + i);
                        case 1 -> new TimeoutException("catalog timeout #" + i);
                        case 2 -> new CatalogMemoryError("catalog oom #" + i);
                        default -> new AssertionError("catalog assertion #" + i);
                    };
            causes.add(t);
            provider.then(throwing(t)).then(vend(60_000));
        }
        for (int i = 0; i < rounds; i++) {
            Throwable expected = causes.get(i);
            CredentialsException e =
                    assertThrows(CredentialsException.class, () -> openAndRead(provider));
            assertSame(expected, e.getCause(), "round " + i);
            assertArrayEquals(SEED, openAndRead(provider), "round " + i);
        }
        List<String> threads = provider.threads();
        assertEquals(2 * rounds, threads.size(), threads::toString);
        boolean reusedAfterThrow = false;
        for (int i = 0; i < threads.size(); i += 2) {
            assertTrue(
                    threads.get(i).startsWith("vended-storage-")
                            && threads.get(i).endsWith("(daemon)"),
                    threads::toString);
            if (threads.subList(i + 1, threads.size()).contains(threads.get(i))) {
                reusedAfterThrow = true;
            }
        }
        assertTrue(
                reusedAfterThrow,
                () -> "no native thread was used again after a throw: " + threads);
    }
}
