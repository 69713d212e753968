package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.InvalidOptionsException;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.PendingCommit;
import dev.vended.storage.PendingCommits;
import dev.vended.storage.PendingOutputStream;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link PendingCommits} (java/core) against the local endpoint. */
class PendingCommitsTest {
    private static final String BUCKET = "pending";
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

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static ObjectStore open() throws Exception {
        return ObjectStore.open(server.uri(""), server.rootOptions());
    }

    @Test
    void anObjectIsInvisibleUntilCommittedByAnotherStoreFromItsJson() throws Exception {
        byte[] data = bytes(11 << 20, 3);
        String json;
        try (ObjectStore writer = open()) {
            PendingOutputStream out = PendingCommits.of(writer).openPendingOutput("c/obj");
            out.write(data, 0, 7);
            out.write(data, 7, data.length - 7);
            out.close();
            PendingCommit p = out.pendingCommit();
            assertThat(p.length()).isEqualTo(data.length);
            assertThat(p.partCount()).isEqualTo(3);
            assertThat(p.location()).isEqualTo("s3://" + BUCKET + "/c/obj");
            assertThat(p.toString()).contains(p.uploadId()).doesNotContain("secret");
            assertThatThrownBy(() -> writer.head("c/obj")).isInstanceOf(ObjectNotFoundException.class);
            assertThat(server.incompleteUploads(BUCKET)).hasSize(1);
            json = p.json();
        }
        try (ObjectStore driver = open()) {
            PendingCommits commits = PendingCommits.of(driver);
            commits.commit(PendingCommit.fromJson(json));
            assertThat(driver.get("c/obj")).isEqualTo(data);
            assertThat(server.incompleteUploads(BUCKET)).isEmpty();
            assertThatThrownBy(() -> commits.commit(PendingCommit.fromJson(json)))
                    .isInstanceOf(ObjectNotFoundException.class);
        }
    }

    @Test
    void abortLeavesNoUploadAndRecordedUploadsAreAbortedUnderAPrefix() throws Exception {
        try (ObjectStore store = open()) {
            PendingCommits commits = PendingCommits.of(store);
            PendingOutputStream out = commits.openPendingOutput("a/one");
            out.write(bytes(100, 1));
            out.close();
            commits.abort(out.pendingCommit());
            assertThatThrownBy(() -> store.head("a/one")).isInstanceOf(ObjectNotFoundException.class);

            for (int i = 0; i < 3; i++) {
                PendingOutputStream o =
                        commits.openPendingOutput("a/f" + i, "a/_rec/" + i + ".json", null);
                o.write(bytes(10, i));
                // left open, as by a task that died
            }
            assertThat(server.incompleteUploads(BUCKET).stream().filter(u -> u.key().startsWith("a/")))
                    .hasSize(3);
            assertThat(commits.abortUploadsUnder("a/_rec")).isEqualTo(3);
            assertThat(server.incompleteUploads(BUCKET).stream().filter(u -> u.key().startsWith("a/")))
                    .isEmpty();
            assertThat(store.list("a/_rec")).isEmpty();
        }
    }

    @Test
    void malformedJsonNamesTheKey() {
        assertThatThrownBy(() -> PendingCommit.fromJson("{\"version\":1}"))
                .isInstanceOf(InvalidOptionsException.class)
                .hasMessageContaining("pending_commit");
    }
}
