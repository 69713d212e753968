package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Collectors;

/** put / get / getRange / head / list / delete on memory://, file:// and the local S3 endpoint. */
@Timeout(120)
class RoundTripTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("roundtrip");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void memoryStore() throws Exception {
        try (ObjectStore store =
                ObjectStore.open("memory:///roundtrip-" + UUID.randomUUID() + "/", null)) {
            exercise(store, false);
        }
    }

    @Test
    void fileStore(@TempDir Path dir) throws Exception {
        String uri = dir.toUri().toString();
        assertTrue(uri.startsWith("file:///"), uri);
        try (ObjectStore store = ObjectStore.open(uri, null)) {
            exercise(store, false);
            store.put("on-disk/check.txt", "disk".getBytes(StandardCharsets.UTF_8));
        }
        assertEquals("disk", Files.readString(dir.resolve("on-disk/check.txt")));
    }

    @Test
    void s3StoreWithStaticCredentials() throws Exception {
        try (ObjectStore store =
                ObjectStore.open(
                        server.uri("rt-" + UUID.randomUUID() + "/"), server.rootOptions())) {
            exercise(store, true);
        }
    }

    @Test
    void s3StoresWithDifferentPrefixesSeeOnlyTheirOwnObjects() throws Exception {
        String base = "iso-" + UUID.randomUUID() + "/";
        try (ObjectStore a = ObjectStore.open(server.uri(base + "a/"), server.rootOptions());
                ObjectStore b = ObjectStore.open(server.uri(base + "b/"), server.rootOptions());
                ObjectStore all = ObjectStore.open(server.uri(base), server.rootOptions())) {
            a.put("x", new byte[] {1});
            b.put("x", new byte[] {2});
            assertArrayEquals(new byte[] {1}, a.get("x"));
            assertArrayEquals(new byte[] {2}, b.get("x"));
            assertEquals(List.of("x"), paths(a.list(null)));
            assertEquals(List.of("a/x", "b/x"), paths(all.list(null)));
        }
    }

    private static List<String> paths(List<ObjectMeta> metas) {
        return metas.stream().map(ObjectMeta::path).sorted().collect(Collectors.toList());
    }

    private static void exercise(ObjectStore store, boolean s3) throws Exception {
        Random random = new Random(42);
        byte[] one = bytes(random, 100);
        byte[] two = bytes(random, 2000);
        byte[] big = bytes(random, 3 * 1024 * 1024 + 17);

        store.put("dir/one.bin", one);
        store.put("dir/two.bin", two);
        store.put("other/big.bin", big);
        store.put("empty.bin", new byte[0]);

        assertArrayEquals(one, store.get("dir/one.bin"));
        assertArrayEquals(two, store.get("dir/two.bin"));
        assertArrayEquals(big, store.get("other/big.bin"));
        assertArrayEquals(new byte[0], store.get("empty.bin"));

        assertArrayEquals(Arrays.copyOfRange(two, 10, 20), store.getRange("dir/two.bin", 10, 20));
        assertArrayEquals(
                Arrays.copyOfRange(big, 1_000_000, 2_500_000),
                store.getRange("other/big.bin", 1_000_000, 2_500_000));

        ObjectMeta head = store.head("dir/two.bin");
        assertEquals("dir/two.bin", head.path());
        assertEquals(2000, head.size());
        assertTrue(head.lastModifiedMillis() > 1_600_000_000_000L, head.toString());
        if (s3) {
            assertNotNull(head.eTag(), head.toString());
        }

        assertEquals(
                List.of("dir/one.bin", "dir/two.bin", "empty.bin", "other/big.bin"),
                paths(store.list(null)));
        assertEquals(List.of("dir/one.bin", "dir/two.bin"), paths(store.list("dir")));
        List<ObjectMeta> other = store.list("other");
        assertEquals(1, other.size());
        assertEquals(big.length, other.get(0).size());
        assertEquals(List.of(), store.list("nothing-here"));

        // overwrite
        store.put("dir/one.bin", two);
        assertArrayEquals(two, store.get("dir/one.bin"));

        store.delete("dir/one.bin");
        assertThrows(ObjectNotFoundException.class, () -> store.get("dir/one.bin"));
        assertThrows(ObjectNotFoundException.class, () -> store.head("dir/one.bin"));
        assertThrows(ObjectNotFoundException.class, () -> store.getRange("dir/one.bin", 0, 1));
        assertThrows(ObjectNotFoundException.class, () -> store.get("never/written"));
        assertEquals(List.of("dir/two.bin", "empty.bin", "other/big.bin"), paths(store.list(null)));
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }
}
