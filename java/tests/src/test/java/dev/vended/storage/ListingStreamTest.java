package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Listings fetched lazily page by page, as iterators and streams, and one level with "/". */
@Timeout(120)
class ListingStreamTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("listing");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void pagesAreFetchedLazily() throws Exception {
        // A key of its own, so that the endpoint's counters show exactly this test's requests.
        var creds = server.issueCredentials(3_600_000, null);
        try (ObjectStore store = ObjectStore.open(server.uri("lazy/"), server.options(creds))) {
            for (int i = 0; i < 25; i++) {
                store.put(String.format("dir/o%02d", i), new byte[i]);
            }
            long before = server.stats(creds.accessKeyId()).accepted();
            try (ObjectListing listing = store.listIterator("dir", 10)) {
                assertEquals(0, listing.pagesFetched());
                assertEquals(before, server.stats(creds.accessKeyId()).accepted(), "request at open");
                Set<String> seen = new TreeSet<>();
                for (int i = 0; i < 10; i++) {
                    assertTrue(listing.hasNext());
                    seen.add(listing.next().path());
                }
                assertEquals(1, listing.pagesFetched());
                assertTrue(server.stats(creds.accessKeyId()).accepted() > before, "no request sent");
                assertTrue(listing.hasNext());
                assertEquals(2, listing.pagesFetched());
                while (listing.hasNext()) {
                    seen.add(listing.next().path());
                }
                assertEquals(4, listing.pagesFetched(), "3 pages and the empty end");
                assertEquals(25, seen.size());
                assertTrue(seen.contains("dir/o07"), seen.toString());
                assertThrows(NoSuchElementException.class, listing::next);
                assertFalse(listing.hasNext());
            }
            KeyStats k = server.stats(creds.accessKeyId());
            assertEquals(0, k.rejected(), k.toString());
        }
    }

    @Test
    void streamsCloseTheListingAndStopEarly() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("stream/"), server.rootOptions())) {
            for (int i = 0; i < 30; i++) {
                store.put("s/" + i, new byte[] {(byte) i});
            }
            try (Stream<ObjectMeta> s = store.listStream("s")) {
                assertEquals(30, s.mapToLong(ObjectMeta::size).sum());
            }
            ObjectListing listing = store.listIterator(null, 5);
            List<String> first = listing.stream().limit(7).map(ObjectMeta::path).collect(Collectors.toList());
            assertEquals(7, first.size());
            assertEquals(2, listing.pagesFetched(), "limit(7) of pages of 5 fetches 2 pages");
            listing.close();
            listing.close(); // idempotent
            // Closed before the end: the objects already fetched remain, then nothing.
            int rest = 0;
            while (listing.hasNext()) {
                listing.next();
                rest++;
            }
            assertEquals(3, rest);
            assertEquals(2, listing.pagesFetched(), "no page fetched after close");
            assertThrows(IllegalArgumentException.class, () -> store.listIterator(null, -1));
        }
    }

    @Test
    void oneLevelWithTheDelimiter() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("delim/"), server.rootOptions())) {
            store.put("t/a.bin", new byte[1]);
            store.put("t/b.bin", new byte[2]);
            store.put("t/p=1/x.bin", new byte[3]);
            store.put("t/p=2/y/z.bin", new byte[4]);
            ListResult level = store.listWithDelimiter("t");
            assertEquals(
                    List.of("t/a.bin", "t/b.bin"),
                    level.objects().stream().map(ObjectMeta::path).sorted().collect(Collectors.toList()));
            assertEquals(List.of("t/p=1", "t/p=2"), level.commonPrefixes().stream().sorted().collect(Collectors.toList()));
            assertEquals(0, store.listWithDelimiter("nothing-here").objects().size());
        }
    }
}
