package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.CommitResult;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import io.delta.storage.LogStore;

import java.io.IOException;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link VendedLogStore} on the local S3 endpoint ({@code s3a://} served by {@link
 * VendedFileSystem}, 4 s credentials): the contract, a commit whose answer is lost after it was
 * stored (recognised as ours, written once), a genuinely different commit (FileAlreadyExists), an
 * endpoint that ignores {@code If-None-Match} (refused before any commit, one probe), and the
 * error for a path another file system serves.
 */
class VendedLogStoreS3Test extends LogStoreContract {

    private static final String BUCKET = "delta-logstore";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Override
    Path table(String name) {
        return new Path("s3a://" + BUCKET + "/" + name + "/");
    }

    @Override
    Configuration conf(String name, int writer) {
        return Tables.s3(Tables.base(), server.endpoint(), name + "-w" + writer, BUCKET, name, 4_000);
    }

    private static List<Integer> putStatuses(String key) throws IOException {
        return server.requests().stream()
                .filter(r -> r.method().equals("PUT") && BUCKET.equals(r.bucket()) && key.equals(r.key()))
                .map(RequestRecord::status)
                .toList();
    }

    private static void assertNoKeyRejected(String table) throws IOException {
        List<String> keys = DeltaTestProvider.keys(table);
        assertThat(keys).isNotEmpty();
        for (String k : keys) {
            KeyStats s = server.stats(k);
            assertThat(s.rejected()).as("key %s of %s: %s", k, table, s).isZero();
        }
    }

    @Test
    void aCommitWhoseAnswerWasLostAfterItWasStoredIsOursWrittenOnce() throws Exception {
        Path t = table("lost-answer");
        Configuration c = conf("lost-answer", 0);
        LogStore store = new VendedLogStore(c);
        String key = "lost-answer/_delta_log/00000000000000000000.json";
        server.send("POST", "/_admin/lose-answer?key=" + BUCKET + "/" + key, null, null);

        store.write(version(t, 0), List.of("{\"commitInfo\":{}}").iterator(), false, c);

        assertThat(putStatuses(key))
                .as("stored and answered 500, then the retry refused by the condition")
                .containsExactly(500, 412);
        assertThat(server.send("GET", "/_admin/lost-answers", null, null))
                .contains("\"armed\":0");
        assertThat(lines(store, version(t, 0), c)).containsExactly("{\"commitInfo\":{}}");
        assertThat(names(store.listFrom(version(t, 0), c)))
                .containsExactly("00000000000000000000.json");
        // The next version after a genuinely different writer took it: FileAlreadyExists.
        LogStore other = new VendedLogStore(conf("lost-answer", 1));
        other.write(version(t, 1), List.of("theirs").iterator(), false, conf("lost-answer", 1));
        assertThatThrownBy(() -> store.write(version(t, 1), List.of("mine").iterator(), false, c))
                .isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
        assertThat(lines(store, version(t, 1), c)).containsExactly("theirs");
        assertNoKeyRejected("lost-answer-w0");
    }

    /**
     * The trap the per-write id avoids: Delta's {@code S3SingleDriverLogStore} on the same file
     * system (whose create is create-only) reports its own stored commit as a conflict when the
     * answer was lost, so Delta would commit the same actions again at the next version.
     */
    @Test
    void s3SingleDriverLogStoreReportsItsOwnLandedCommitAsAConflict() throws Exception {
        Path t = table("single-lost");
        Configuration c = conf("single-lost", 0);
        LogStore store = new io.delta.storage.S3SingleDriverLogStore(c);
        String key = "single-lost/_delta_log/00000000000000000000.json";
        server.send("POST", "/_admin/lose-answer?key=" + BUCKET + "/" + key, null, null);

        assertThatThrownBy(() -> store.write(version(t, 0), List.of("mine").iterator(), false, c))
                .isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
        assertThat(lines(store, version(t, 0), c)).as("its own commit").containsExactly("mine");
        assertThat(putStatuses(key)).containsExactly(500, 412);
    }

    @Test
    void theCoreReportsARecognisedRetryOnce() throws Exception {
        Configuration c = conf("lost-core", 0);
        VendedFileSystem fs = (VendedFileSystem) table("lost-core").getFileSystem(c);
        var o = fs.storeObject(version(table("lost-core"), 0));
        server.send("POST", "/_admin/lose-answer?key=" + BUCKET + "/" + o.key(), null, null);
        CommitResult first = o.store().putCommit(o.key(), "a\n".getBytes());
        assertThat(first.recognisedRetry()).isTrue();
        var next = fs.storeObject(version(table("lost-core"), 1));
        assertThat(next.store().putCommit(next.key(), "b\n".getBytes()).recognisedRetry()).isFalse();
        fs.close();
    }

    @Test
    void anEndpointIgnoringIfNoneMatchIsRefusedBeforeAnyCommit() throws Exception {
        String bucket = "delta-ignoring";
        server.createBucket(bucket);
        server.send("POST", "/_admin/ignore-conditions?bucket=" + bucket, null, null);
        Configuration c = Tables.s3(Tables.base(), server.endpoint(), "ignoring", bucket, "t", 4_000);
        Path t = new Path("s3a://" + bucket + "/t/");
        LogStore store = new VendedLogStore(c);
        for (int v = 0; v < 3; v++) {
            int version = v;
            assertThatThrownBy(() -> store.write(version(t, version), List.of("x").iterator(), false, c))
                    .isInstanceOf(IOException.class)
                    .isNotInstanceOf(java.nio.file.FileAlreadyExistsException.class)
                    .hasMessageContaining(server.endpoint())
                    .hasMessageContaining("ignores create-only writes")
                    .hasMessageContaining("S3DynamoDBLogStore");
        }
        List<RequestRecord> inBucket =
                server.requests().stream().filter(r -> bucket.equals(r.bucket())).toList();
        assertThat(inBucket.stream().filter(r -> r.key() != null && r.key().endsWith(".json")))
                .as("no commit written")
                .isEmpty();
        assertThat(inBucket.stream()
                        .filter(r -> r.key() != null && r.key().contains(".vended-create-only-probe-"))
                        .map(r -> r.method() + " " + r.status()))
                .as("one probe for the store")
                .containsExactly("PUT 200", "PUT 200", "DELETE 204");
    }

    @Test
    void aPathOfAnotherFileSystemNamesTheSettingsToFix() {
        Configuration c = new Configuration(false);
        LogStore store = new VendedLogStore(c);
        assertThatThrownBy(() -> store.write(new Path("file:///tmp/t/_delta_log/0.json"),
                        List.of("x").iterator(), false, c))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("fs.file.impl=" + VendedFileSystem.class.getName())
                .hasMessageContaining("spark.delta.logStore.file.impl");
    }
}
