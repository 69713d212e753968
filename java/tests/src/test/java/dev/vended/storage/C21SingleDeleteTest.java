package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.UUID;

/** C21: deleting one object sends exactly one DELETE (the endpoint's request log). */
@Timeout(60)
class C21SingleDeleteTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c21");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    /** Entries of the endpoint's request log with this method and key. */
    private static long logged(String method, String key) throws Exception {
        String log = server.send("GET", "/_admin/requests", null, null);
        long n = 0;
        for (String entry : log.split("\\}")) {
            if (entry.contains("\"method\":\"" + method + "\"")
                    && entry.contains("\"key\":\"" + key + "\"")) {
                n++;
            }
        }
        return n;
    }

    @Test
    void c21_singleDeleteIsOneRequest() throws Exception {
        String prefix = "c21-" + UUID.randomUUID() + "/";
        try (ObjectStore store = ObjectStore.open(server.uri(prefix), server.rootOptions())) {
            store.put("one.bin", new byte[] {1, 2, 3});
            store.delete("one.bin");
            assertEquals(1, logged("DELETE", prefix + "one.bin"));
            assertEquals(0, logged("POST", prefix + "one.bin"), "no bulk delete");
            assertThrows(ObjectNotFoundException.class, () -> store.head("one.bin"));
        }
    }
}
