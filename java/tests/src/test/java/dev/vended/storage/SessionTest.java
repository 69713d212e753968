package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.VendedCredentials;
import dev.vended.storage.testkit.IssuingProvider;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * {@link Session}: C11 (one session reused across a rotation in which gen1 is revoked at the
 * endpoint), invalidation by path-segment prefix, counters, settings and closing.
 */
@Timeout(60)
class SessionTest {

    private static final byte[] DIGITS = "0123456789".getBytes(StandardCharsets.UTF_8);

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("session");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** Vends one fixed credential set, under a shared {@code providerId}. */
    private static final class NamedProvider implements StorageOptionsProvider {
        private final String id;
        private final VendedCredentials creds;
        private int calls;

        NamedProvider(String id, VendedCredentials creds) {
            this.id = id;
            this.creds = creds;
        }

        @Override
        public synchronized Map<String, String> fetchStorageOptions() {
            calls++;
            return server.options(creds);
        }

        @Override
        public String providerId() {
            return id;
        }

        synchronized int calls() {
            return calls;
        }
    }

    private static String table() {
        return "tables/t-" + UUID.randomUUID() + "/";
    }

    /**
     * Fills the session's caches through a store signed with {@code gen1}, closes that store, then
     * revokes gen1 at the endpoint.
     */
    private static void fillWithGen1AndRevoke(
            Session session, String uri, VendedCredentials gen1, StorageOptionsProvider p1)
            throws Exception {
        try (ObjectStore store1 =
                ObjectStore.builder(uri)
                        .options(server.options(gen1))
                        .provider(p1)
                        .session(session)
                        .open()) {
            store1.put("data", DIGITS);
            assertEquals(10, store1.head("data").size());
            assertArrayEquals(bytes("234"), store1.getRange("data", 2, 5));
            assertArrayEquals(bytes("234"), store1.getRange("data", 2, 5)); // from the cache
        }
        server.revoke(gen1.accessKeyId());
    }

    @Test
    void c11_sessionReusedAcrossRotationWithSameProviderIdNeverSignsWithGen1() throws Exception {
        String uri = server.uri(table());
        String id = "c11-table-" + UUID.randomUUID();
        try (Session session = Session.create()) {
            VendedCredentials gen1 = server.issueCredentials(60_000, null);
            fillWithGen1AndRevoke(session, uri, gen1, new NamedProvider(id, gen1));
            KeyStats gen1Seen = server.stats(gen1.accessKeyId());

            // The table is opened again, as a catalog would, with gen2 in the options and a
            // provider that vends gen2.
            VendedCredentials gen2 = server.issueCredentials(90_000, null);
            NamedProvider p2 = new NamedProvider(id, gen2);
            try (ObjectStore store2 =
                    ObjectStore.open(uri, server.options(gen2), p2, null, session)) {
                assertArrayEquals(bytes("0123"), store2.getRange("data", 0, 4));
                assertArrayEquals(DIGITS, store2.get("data"));
                assertEquals(10, store2.head("data").size());
                // Cached data is portable: the same table (same credential source) reuses the
                // head cached under gen1 without any request.
                SessionStats before = session.stats();
                assertEquals(10, store2.head("data").size());
                assertEquals(before.hits() + 1, session.stats().hits());
                RefreshStats rs = store2.refreshStats();
                assertTrue(
                        rs.generation() >= 2,
                        () -> "the re-open's fresher options were not adopted: " + rs);
            }
            assertEquals(
                    gen1Seen,
                    server.stats(gen1.accessKeyId()),
                    "a request was signed with gen1 after its revocation");
            KeyStats k2 = server.stats(gen2.accessKeyId());
            assertTrue(k2.accepted() >= 2, k2::toString);
            assertEquals(0, k2.rejected(), k2::toString);
            assertEquals(0, p2.calls(), "the re-open's options sufficed; no provider call needed");
        }
    }

    @Test
    void c11_sessionReusedAcrossRotationWithNewProviderObjectFetchesGen2() throws Exception {
        String uri = server.uri(table());
        try (Session session = Session.create()) {
            VendedCredentials gen1 = server.issueCredentials(60_000, null);
            fillWithGen1AndRevoke(session, uri, gen1, new IssuingProvider(server, 60_000, null));
            KeyStats gen1Seen = server.stats(gen1.accessKeyId());

            // Re-opened with a new provider object (default identity) and no credentials in the
            // options: the provider vends gen2 on a native thread.
            IssuingProvider p2 = new IssuingProvider(server, 60_000, null);
            SessionStats before = session.stats();
            try (ObjectStore store2 =
                    ObjectStore.builder(uri)
                            .options(server.endpointOptions())
                            .provider(p2)
                            .session(session)
                            .open()) {
                assertEquals(10, store2.head("data").size());
                assertArrayEquals(bytes("234"), store2.getRange("data", 2, 5));
                assertArrayEquals(DIGITS, store2.get("data"));
            }
            SessionStats after = session.stats();
            assertEquals(
                    before.hits(),
                    after.hits(),
                    "another credential source was answered from entries cached under gen1's");
            assertEquals(before.misses() + 2, after.misses(), after::toString);
            assertEquals(
                    gen1Seen,
                    server.stats(gen1.accessKeyId()),
                    "a request was signed with gen1 after its revocation");
            assertEquals(1, p2.calls());
            String gen2 = p2.vendedKeyIds().get(0);
            KeyStats k2 = server.stats(gen2);
            assertTrue(k2.accepted() >= 3, k2::toString);
            assertEquals(0, k2.rejected(), k2::toString);
        }
    }

    @Test
    void invalidateDropsExactlyThePathSegmentPrefix() throws Exception {
        String base = "inv-" + UUID.randomUUID();
        String t1 = base + "/t1/";
        String t10 = base + "/t10/";
        try (Session session = Session.create();
                ObjectStore a =
                        ObjectStore.builder(server.uri(t1))
                                .options(server.rootOptions())
                                .session(session)
                                .open();
                ObjectStore b =
                        ObjectStore.builder(server.uri(t10))
                                .options(server.rootOptions())
                                .session(session)
                                .open();
                ObjectStore writer =
                        ObjectStore.open(server.uri(base + "/"), server.rootOptions())) {
            a.put("x.bin", DIGITS);
            b.put("x.bin", DIGITS);
            assertEquals(10, a.head("x.bin").size());
            assertArrayEquals(bytes("01"), a.getRange("x.bin", 0, 2));
            assertEquals(10, b.head("x.bin").size());
            assertArrayEquals(bytes("01"), b.getRange("x.bin", 0, 2));

            // Rewritten behind the session's back (a store without the session).
            writer.put("t1/x.bin", bytes("abc"));
            writer.put("t10/x.bin", bytes("abc"));
            assertEquals(10, a.head("x.bin").size(), "served from the cache until invalidated");
            assertEquals(10, b.head("x.bin").size());

            SessionStats before = session.stats();
            session.invalidate("s3://" + server.bucket() + "/" + base + "/t1");
            assertEquals(3, a.head("x.bin").size(), "t1 entries were not invalidated");
            assertArrayEquals(bytes("ab"), a.getRange("x.bin", 0, 2));
            assertEquals(10, b.head("x.bin").size(), "t10 must not match the prefix t1");
            assertArrayEquals(bytes("01"), b.getRange("x.bin", 0, 2));
            SessionStats after = session.stats();
            assertEquals(before.misses() + 2, after.misses(), after::toString);
            assertEquals(before.hits() + 2, after.hits(), after::toString);
            assertEquals(before.evictions(), after.evictions(), "invalidations are not evictions");

            // A trailing slash means the same.
            session.invalidate("s3://" + server.bucket() + "/" + base + "/t10/");
            assertEquals(3, b.head("x.bin").size());
            // So does the whole object's URI.
            writer.put("t10/x.bin", bytes("abcd"));
            session.invalidate("s3://" + server.bucket() + "/" + base + "/t10/x.bin");
            assertEquals(4, b.head("x.bin").size());
        }
    }

    @Test
    void cachedMetadataIsRelativeToTheReadingStoresPrefix() throws Exception {
        // Two stores of one bucket and one credential source share entries (same object, same
        // key); each must still see the path relative to its own prefix.
        String base = "rel-" + UUID.randomUUID();
        try (Session session = Session.create();
                ObjectStore table =
                        ObjectStore.builder(server.uri(base + "/table/"))
                                .options(server.rootOptions())
                                .session(session)
                                .open();
                ObjectStore bucket =
                        ObjectStore.builder(server.uri(""))
                                .options(server.rootOptions())
                                .session(session)
                                .open()) {
            table.put("x.bin", DIGITS);
            assertEquals("x.bin", table.head("x.bin").path());
            ObjectMeta viaBucket = bucket.head(base + "/table/x.bin");
            assertEquals(base + "/table/x.bin", viaBucket.path());
            assertEquals(10, viaBucket.size());
            assertEquals("x.bin", table.head("x.bin").path());
        }
    }

    @Test
    void statsCountHitsMissesEntriesAndOnlySmallRangesAreCached() throws Exception {
        String uri = server.uri("stats-" + UUID.randomUUID() + "/");
        try (Session session = Session.builder().maxRangeBytes(4).build();
                ObjectStore store =
                        ObjectStore.builder(uri)
                                .options(server.rootOptions())
                                .session(session)
                                .open()) {
            assertEquals(new SessionStats(0, 0, 0, 0), session.stats());
            assertEquals(0.0, session.stats().hitRate());
            store.put("d", DIGITS);
            store.head("d");
            store.head("d");
            store.getRange("d", 0, 4);
            store.getRange("d", 0, 4);
            SessionStats s = session.stats();
            assertEquals(2, s.hits(), s::toString);
            assertEquals(2, s.misses(), s::toString);
            assertEquals(2, s.entries(), s::toString);
            assertEquals(0.5, s.hitRate());

            // Longer than maxRangeBytes: never looked up nor cached.
            assertArrayEquals(bytes("01234"), store.getRange("d", 0, 5));
            assertArrayEquals(bytes("01234"), store.getRange("d", 0, 5));
            assertEquals(s, session.stats());

            // get() is never cached.
            store.get("d");
            assertEquals(s, session.stats());

            // A write through the store drops that object's entries.
            store.put("d", bytes("xyz"));
            assertEquals(3, store.head("d").size());
            assertEquals(s.misses() + 1, session.stats().misses());
        }
    }

    @Test
    void entriesExpireAfterTheTtlAndCapacityEvicts() throws Exception {
        String uri = server.uri("ttl-" + UUID.randomUUID() + "/");
        try (Session session =
                        Session.builder().ttl(Duration.ofMillis(300)).metadataCapacity(2).build();
                ObjectStore store =
                        ObjectStore.builder(uri)
                                .options(server.rootOptions())
                                .session(session)
                                .open()) {
            store.put("a", DIGITS);
            store.head("a");
            store.head("a");
            assertEquals(1, session.stats().hits());
            Thread.sleep(600);
            store.head("a");
            SessionStats s = session.stats();
            assertEquals(1, s.hits(), "an expired entry answered: " + s);
            assertTrue(s.evictions() >= 1, s::toString);

            for (int i = 0; i < 20; i++) {
                store.put("many/" + i, DIGITS);
                store.head("many/" + i);
            }
            SessionStats full = session.stats();
            assertTrue(full.entries() <= 2, full::toString);
            assertTrue(full.evictions() >= 18, full::toString);
        }
    }

    @Test
    void closedSessionThrowsIllegalStateExceptionAndStoresKeepWorking() throws Exception {
        String uri = server.uri("closed-" + UUID.randomUUID() + "/");
        Session session = Session.create();
        ObjectStore store =
                ObjectStore.builder(uri).options(server.rootOptions()).session(session).open();
        try {
            store.put("k", DIGITS);
            store.head("k");
            assertFalse(session.isClosed());
            session.close();
            session.close(); // idempotent
            assertTrue(session.isClosed());
            assertTrue(session.toString().contains("closed=true"), session.toString());

            IllegalStateException e = assertThrows(IllegalStateException.class, session::stats);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> session.invalidate("s3://x/y"));
            assertThrows(
                    IllegalStateException.class,
                    () ->
                            ObjectStore.builder(uri)
                                    .options(server.rootOptions())
                                    .session(session)
                                    .open());
            assertThrows(
                    IllegalStateException.class,
                    () -> ObjectStore.open(uri, server.rootOptions(), null, null, session));

            // A store opened before keeps its reference to the caches.
            assertEquals(10, store.head("k").size());
            assertArrayEquals(DIGITS, store.get("k"));
        } finally {
            store.close();
        }
    }

    @Test
    void badSettingsAndPrefixesAreRejected() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> Session.builder().metadataCapacity(0));
        assertThrows(
                IllegalArgumentException.class, () -> Session.builder().rangeCapacityBytes(-1));
        assertThrows(IllegalArgumentException.class, () -> Session.builder().maxRangeBytes(0));
        assertThrows(IllegalArgumentException.class, () -> Session.builder().ttl(Duration.ZERO));
        assertThrows(
                IllegalArgumentException.class, () -> Session.builder().ttl(Duration.ofNanos(10)));
        assertThrows(
                IllegalArgumentException.class,
                () -> Session.builder().ttl(Session.MAX_TTL.plusMillis(1)));
        assertThrows(NullPointerException.class, () -> Session.builder().ttl(null));
        try (Session session = Session.builder().ttl(Session.MAX_TTL).build()) {
            assertThrows(NullPointerException.class, () -> session.invalidate(null));
            assertThrows(InvalidOptionsException.class, () -> session.invalidate(""));
        }
    }

    @Test
    void nativeSideRejectsBadSettingsAndHandlesWithoutCrashing() throws Exception {
        ObjectStore.nativeVersion();
        // Longer than the caches support: an argument error, not an internal failure.
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> NativeBridge.sessionCreate(0, 0, 0, Long.MAX_VALUE));
        assertTrue(e.getMessage().contains("ttl"), e.getMessage());
        long h = NativeBridge.sessionCreate(0, 0, 0, 0);
        assertEquals(4, NativeBridge.sessionStats(h).length);
        assertThrows(InvalidOptionsException.class, () -> NativeBridge.sessionInvalidate(h, ""));
        assertThrows(IllegalArgumentException.class, () -> NativeBridge.sessionInvalidate(h, null));
        NativeBridge.sessionClose(h);
        NativeBridge.sessionClose(h);
        assertThrows(IllegalStateException.class, () -> NativeBridge.sessionStats(h));
        assertThrows(
                IllegalStateException.class, () -> NativeBridge.sessionInvalidate(h, "s3://b"));
        assertThrows(
                IllegalStateException.class,
                () -> NativeBridge.open("memory:///x/", null, null, null, null, -1, h));
        assertThrows(IllegalStateException.class, () -> NativeBridge.sessionStats(-5));
        // A store handle is not a session handle, and the other way round.
        long store = NativeBridge.open("memory:///session-handles/", null, null, null, null, -1, 0);
        try {
            assertThrows(IllegalStateException.class, () -> NativeBridge.sessionStats(store));
            long session = NativeBridge.sessionCreate(0, 0, 0, 0);
            try {
                assertThrows(IllegalStateException.class, () -> NativeBridge.get(session, "x"));
            } finally {
                NativeBridge.sessionClose(session);
            }
        } finally {
            NativeBridge.close(store);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
