package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.EmulatorProcess;
import dev.vended.storage.testkit.FakeGcsServer;

import io.delta.storage.LogStore;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link VendedLogStore} on GCS ({@code gs://} on fake-gcs-server behind the testkit's
 * token-checking proxy, served by {@code VendedFileSystem}, 4 s tokens). GCS's create-only upload
 * is {@code x-goog-if-generation-match: 0}, which this emulator setup does not honour (the proxy
 * turns object_store's XML upload into fake-gcs-server's signed-URL upload): the probe before the
 * first commit detects it and every commit is refused, naming the endpoint and the condition,
 * with no commit file written; reads, listings and {@code overwrite=true} writes work. Fails when
 * fake-gcs-server is not installed, unless {@code VENDED_STORAGE_SKIP_EMULATORS=1}.
 */
class VendedLogStoreGcsTest {

    private static final String BUCKET = "delta-gcs";
    private static FakeGcsServer gcs;

    @BeforeAll
    static void start() throws IOException {
        Path tool = EmulatorProcess.toolsDirectory().resolve(FakeGcsServer.TOOL);
        if (!Files.exists(tool)) {
            boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
            Assumptions.assumeFalse(skip, tool + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
            throw new AssertionError(tool + " not found: run bin/install-emulators.sh (or set"
                    + " VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
        }
        gcs = FakeGcsServer.start();
        gcs.createBucket(BUCKET);
        GcsTestProvider.server = gcs;
    }

    @AfterAll
    static void stop() {
        if (gcs != null) {
            gcs.close();
        }
    }

    @Test
    void anEmulatorIgnoringTheGenerationConditionIsRefusedAndNothingIsCommitted() throws Exception {
        org.apache.hadoop.fs.Path t = new org.apache.hadoop.fs.Path("gs://" + BUCKET + "/t/");
        Configuration c = Tables.gcs(Tables.base(), gcs.url(), "gcs-t", BUCKET, "t", 4_000);
        LogStore store = new VendedLogStore(c);
        for (int v = 0; v < 2; v++) {
            org.apache.hadoop.fs.Path p = LogStoreContract.version(t, v);
            assertThatThrownBy(() -> store.write(p, List.of("x").iterator(), false, c))
                    .isInstanceOf(IOException.class)
                    .isNotInstanceOf(FileAlreadyExistsException.class)
                    .hasMessageContaining("the endpoint " + gcs.url())
                    .hasMessageContaining("ignores create-only writes (x-goog-if-generation-match: 0)")
                    .hasMessageContaining("S3DynamoDBLogStore");
        }
        org.apache.hadoop.fs.Path last =
                new org.apache.hadoop.fs.Path(new org.apache.hadoop.fs.Path(t, "_delta_log"), "_last_checkpoint");
        store.write(last, List.of("{\"version\":0}").iterator(), true, c);
        assertThat(LogStoreContract.lines(store, last, c)).containsExactly("{\"version\":0}");
        assertThat(LogStoreContract.names(store.listFrom(LogStoreContract.version(t, 0), c)))
                .as("no commit file, no probe left")
                .containsExactly("_last_checkpoint");
        assertThat(gcs.proxy().rejections()).as("requests rejected by the proxy").isZero();
    }
}
