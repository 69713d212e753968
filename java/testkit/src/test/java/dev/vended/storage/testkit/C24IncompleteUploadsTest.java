package dev.vended.storage.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.WriteOptions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

/** C24: the testkit lists the multipart uploads a test left on the local endpoint. */
class C24IncompleteUploadsTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("c24-uploads");

    @Test
    @Timeout(60)
    void listsAnUploadInProgressUntilItIsClosedOrAborted() throws Exception {
        byte[] part = new byte[6 << 20];
        try (ObjectStore store = ObjectStore.open(S3.uri("t/"), S3.storageOptions())) {
            assertEquals(List.of(), S3.incompleteUploads());
            MultipartOutputStream kept =
                    store.openOutput("kept.bin", WriteOptions.defaults().withPartSize(5 << 20));
            kept.write(part);
            MultipartOutputStream dropped =
                    store.openOutput("dropped.bin", WriteOptions.defaults().withPartSize(5 << 20));
            dropped.write(part);

            List<IncompleteUpload> open = waitForUploads(2);
            assertEquals("c24-uploads", open.get(0).bucket());
            assertEquals("t/dropped.bin", open.get(0).key());
            assertEquals("t/kept.bin", open.get(1).key());
            assertFalse(open.get(0).uploadId().isEmpty());
            assertTrue(open.get(0).initiatedMillis() > 0);
            assertEquals(open, S3.server().incompleteUploads("c24-uploads"));
            assertEquals(List.of(), S3.server().incompleteUploads("no-such-bucket"));

            dropped.abort();
            kept.close();
            assertEquals(List.of(), S3.incompleteUploads());
        }
    }

    /** The first part's upload runs in the background: waits for it (bounded). */
    private static List<IncompleteUpload> waitForUploads(int count) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        List<IncompleteUpload> uploads = S3.incompleteUploads();
        while ((uploads.size() < count || uploads.stream().anyMatch(u -> u.parts() == 0))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
            uploads = S3.incompleteUploads();
        }
        assertEquals(count, uploads.size(), uploads.toString());
        return uploads;
    }
}
