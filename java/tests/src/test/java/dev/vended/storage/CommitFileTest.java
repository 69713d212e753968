package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ObjectStore#putCommit} through the binding (issue 31): a commit reports its ETag, another
 * writer's commit at the path is {@link ObjectAlreadyExistsException}, a commit whose answer was
 * lost after it was stored is recognised as ours, and a bucket that ignores create-only conditions
 * is a {@link StorageException} of kind {@code IO} naming the endpoint, with nothing written.
 */
@Timeout(120)
class CommitFileTest {

    private static final String BUCKET = "commits";
    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start(BUCKET);
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static List<Integer> putStatuses(String bucket, String key) throws Exception {
        return server.requests().stream()
                .filter(r -> r.method().equals("PUT") && bucket.equals(r.bucket()) && key.equals(r.key()))
                .map(RequestRecord::status)
                .toList();
    }

    @Test
    void aCommitIsCreateOnlyAndALostAnswerIsRecognisedAsOurs() throws Exception {
        try (ObjectStore store = ObjectStore.open(server.uri("t/"), server.rootOptions())) {
            CommitResult first = store.putCommit("_delta_log/0.json", new byte[] {1});
            assertNotNull(first.write().eTag());
            assertFalse(first.recognisedRetry());
            assertThrows(ObjectAlreadyExistsException.class,
                    () -> store.putCommit("_delta_log/0.json", new byte[] {1}));
            assertArrayEquals(new byte[] {1}, store.get("_delta_log/0.json"));

            server.send("POST", "/_admin/lose-answer?key=" + BUCKET + "/t/_delta_log/1.json", null, null);
            CommitResult retried = store.putCommit("_delta_log/1.json", new byte[] {2});
            assertTrue(retried.recognisedRetry());
            assertEquals(List.of(500, 412), putStatuses(BUCKET, "t/_delta_log/1.json"));
            assertArrayEquals(new byte[] {2}, store.get("_delta_log/1.json"));
        }
    }

    @Test
    void aBucketIgnoringConditionsIsRefusedNamingTheEndpoint() throws Exception {
        String bucket = "commits-ignoring";
        server.createBucket(bucket);
        server.send("POST", "/_admin/ignore-conditions?bucket=" + bucket, null, null);
        try (ObjectStore store = ObjectStore.open("s3://" + bucket + "/t/", server.rootOptions())) {
            StorageException e = assertThrows(StorageException.class,
                    () -> store.putCommit("_delta_log/0.json", new byte[] {1}));
            assertEquals(StorageException.Kind.IO, e.kind());
            assertTrue(e.getMessage().contains(server.endpoint()), e.getMessage());
            assertTrue(e.getMessage().contains("ignores create-only writes (If-None-Match: *)"), e.getMessage());
            assertTrue(putStatuses(bucket, "t/_delta_log/0.json").isEmpty(), "no commit sent");
        }
    }
}
