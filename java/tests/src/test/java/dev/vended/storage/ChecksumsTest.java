package dev.vended.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.FlipCounts;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Checksums through the Java API (issue 32, docs/integrity.md): the local endpoint flips one bit
 * of a response or request body, {@code get}, {@code get(path, ByteBuffer)} and a stream read to
 * its end notice (the first two read once more), a flipped upload is refused, and the same flips
 * go through with storage option {@code checksums=false}, so the tests cannot pass by accident.
 */
@Timeout(120)
class ChecksumsTest {

    private static final String BUCKET = "sums";
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

    private static ObjectStore open(String prefix, boolean checksums) throws StorageException {
        Map<String, String> options = new HashMap<>(server.rootOptions());
        options.put("checksums", Boolean.toString(checksums));
        return ObjectStore.open(server.uri(prefix), options);
    }

    private static byte[] data(int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    @Test
    void aFlippedResponseIsReadAgainAndTheRightBytesReturned() throws Exception {
        byte[] src = data(1 << 20);
        try (ObjectStore store = open("again/", true)) {
            store.put("a.bin", src);
            long flipped = server.flips().response();
            // Counters belong to the object store, which stores of one bucket share: deltas.
            RequestStats before = store.requestStats();
            server.flipNextResponse(BUCKET, "again/a.bin");
            assertThat(store.get("a.bin")).isEqualTo(src);
            server.flipNextResponse(BUCKET, "again/a.bin");
            ByteBuffer dst = ByteBuffer.allocateDirect(src.length);
            assertThat(store.get("a.bin", dst)).isEqualTo(src.length);
            assertThat(dst.flip()).isEqualTo(ByteBuffer.wrap(src));
            assertThat(server.flips().response() - flipped).isEqualTo(2);
            RequestStats stats = store.requestStats();
            assertThat(stats.checksumMismatches() - before.checksumMismatches()).isEqualTo(2);
            assertThat(stats.checksumsMatched() - before.checksumsMatched()).isEqualTo(2);
        }
    }

    @Test
    void twoFlippedResponsesFailWithTheObjectAndBothValues() throws Exception {
        try (ObjectStore store = open("twice/", true)) {
            store.put("b.bin", data(4096));
            long mismatches = store.requestStats().checksumMismatches();
            server.flipNextResponse(BUCKET, "twice/b.bin");
            server.flipNextResponse(BUCKET, "twice/b.bin");
            assertThatThrownBy(() -> store.get("b.bin"))
                    .isInstanceOf(ChecksumMismatchException.class)
                    .hasMessageContaining("b.bin")
                    .hasMessageContaining("CRC64NVME")
                    .satisfies(e -> assertThat(((StorageException) e).kind())
                            .isEqualTo(StorageException.Kind.INTEGRITY));
            assertThat(server.flips().armed()).isZero();
            assertThat(store.requestStats().checksumMismatches() - mismatches).isEqualTo(2);
        }
    }

    @Test
    void aStreamReadToItsEndFailsAtItsEnd() throws Exception {
        byte[] src = data(3 << 20);
        try (ObjectStore store = open("stream/", true)) {
            store.put("c.bin", src);
            byte[] buf = new byte[64 << 10];
            long[] read = {0};
            long flipped = server.flips().response();
            try (InputStream in = store.openInput("c.bin")) {
                // After the stream's HEAD: the flip is for the GET's body.
                server.flipNextResponse(BUCKET, "stream/c.bin");
                assertThatThrownBy(() -> {
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        read[0] += n;
                    }
                }).isInstanceOf(ChecksumMismatchException.class).hasMessageContaining("c.bin");
            }
            assertThat(server.flips().response() - flipped).isEqualTo(1);
            // The bytes were handed on as they came; the failure is at the end, not before it.
            assertThat(read[0]).isLessThanOrEqualTo(src.length);
        }
    }

    @Test
    void aFlippedUploadIsRefusedAndNothingStored() throws Exception {
        try (ObjectStore store = open("upload/", true)) {
            server.flipNextRequest(BUCKET, "upload/d.bin");
            assertThatThrownBy(() -> store.put("d.bin", data(1 << 20)))
                    .isInstanceOf(StorageException.class)
                    .hasMessageContaining("BadDigest");
            assertThatThrownBy(() -> store.head("d.bin")).isInstanceOf(ObjectNotFoundException.class);
        }
    }

    @Test
    void withChecksumsOffTheSameFlipsGoThrough() throws Exception {
        byte[] src = data(1 << 20);
        try (ObjectStore store = open("off/", false)) {
            long mismatches = store.requestStats().checksumMismatches();
            store.put("e.bin", src);
            server.flipNextResponse(BUCKET, "off/e.bin");
            assertThat(store.get("e.bin")).isNotEqualTo(src).hasSameSizeAs(src);
            server.flipNextRequest(BUCKET, "off/f.bin");
            store.put("f.bin", src);
            assertThat(store.get("f.bin")).isNotEqualTo(src).hasSameSizeAs(src);
            FlipCounts flips = server.flips();
            assertThat(flips.armed()).isZero();
            assertThat(store.requestStats().checksumMismatches()).isEqualTo(mismatches);
        }
    }
}
