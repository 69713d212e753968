package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.UUID;

/** putIfAbsent / putIfMatch, create-only and if-match output streams, copies and renames. */
@Timeout(120)
class ConditionalPutTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("conditional");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void exercise(ObjectStore store) throws Exception {
        WriteResult created = store.putIfAbsent("c", new byte[] {1});
        assertNotNull(created.eTag());
        assertThrows(ObjectAlreadyExistsException.class, () -> store.putIfAbsent("c", new byte[] {2}));
        assertArrayEquals(new byte[] {1}, store.get("c"));

        String eTag = store.head("c").eTag();
        assertEquals(created.eTag(), eTag);
        WriteResult replaced = store.putIfMatch("c", new byte[] {3}, eTag);
        assertNotEquals(eTag, replaced.eTag());
        assertThrows(
                PreconditionFailedException.class, () -> store.putIfMatch("c", new byte[] {4}, eTag));
        assertArrayEquals(new byte[] {3}, store.get("c"));

        // The same modes through the output stream (checked at close; nothing written on failure).
        MultipartOutputStream exists = store.openOutput("c", WriteOptions.defaults().withCreateOnly());
        exists.write(9);
        assertThrows(ObjectAlreadyExistsException.class, exists::close);
        MultipartOutputStream stale =
                store.openOutput("c", WriteOptions.defaults().withIfMatch(eTag));
        stale.write(9);
        assertThrows(PreconditionFailedException.class, stale::close);
        assertArrayEquals(new byte[] {3}, store.get("c"));
        try (MultipartOutputStream ok =
                store.openOutput("c", WriteOptions.defaults().withIfMatch(replaced.eTag()))) {
            ok.write(5);
        }
        assertArrayEquals(new byte[] {5}, store.get("c"));

        store.copy("c", "d");
        assertArrayEquals(new byte[] {5}, store.get("d"));
        store.rename("d", "e");
        assertThrows(ObjectNotFoundException.class, () -> store.head("d"));
        assertArrayEquals(new byte[] {5}, store.get("e"));
        assertThrows(ObjectNotFoundException.class, () -> store.copy("missing", "x"));
    }

    @Test
    void onTheLocalEndpoint() throws Exception {
        Map<String, String> options = server.rootOptions();
        options.put("aws_copy_if_not_exists", "multipart");
        try (ObjectStore store = ObjectStore.open(server.uri("cond/"), options)) {
            exercise(store);
            assertThrows(ObjectAlreadyExistsException.class, () -> store.copyIfNotExists("c", "e"));
            store.copyIfNotExists("c", "f");
            assertArrayEquals(new byte[] {5}, store.get("f"));
            assertThrows(ObjectAlreadyExistsException.class, () -> store.renameIfNotExists("f", "e"));
            store.renameIfNotExists("f", "g");
            assertThrows(ObjectNotFoundException.class, () -> store.head("f"));
        }
    }

    @Test
    void copyIfNotExistsNeedsTheOptionOnS3() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("noopt/"), server.rootOptions())) {
            store.put("a", new byte[] {1});
            assertThrows(InvalidOptionsException.class, () -> store.copyIfNotExists("a", "b"));
        }
    }

    @Test
    void inMemory() throws Exception {
        try (ObjectStore store =
                ObjectStore.open("memory:///cond-" + UUID.randomUUID() + "/", null)) {
            exercise(store);
            assertThrows(ObjectAlreadyExistsException.class, () -> store.copyIfNotExists("c", "e"));
        }
    }
}
