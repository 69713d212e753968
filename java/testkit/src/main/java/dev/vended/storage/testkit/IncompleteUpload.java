package dev.vended.storage.testkit;

import java.io.IOException;
import java.util.Map;

/**
 * A multipart upload the local endpoint holds that was started and neither completed nor aborted:
 * its parts still take space, as they would on S3 until a lifecycle rule ({@code
 * AbortIncompleteMultipartUpload}) removes them. Listed by {@link
 * LocalS3Server#incompleteUploads()} ({@code GET /_admin/uploads}).
 *
 * @param bucket the bucket of the upload
 * @param key the object key the upload would create
 * @param uploadId the upload id returned by {@code CreateMultipartUpload}
 * @param parts the number of distinct parts stored so far (0 or more)
 * @param initiatedMillis when the upload was started, epoch milliseconds (endpoint clock)
 */
public record IncompleteUpload(
        String bucket, String key, String uploadId, int parts, long initiatedMillis) {

    static IncompleteUpload fromJson(Map<String, Object> m) throws IOException {
        Object parts = m.get("parts");
        Object initiated = m.get("initiated_millis");
        if (!(m.get("bucket") instanceof String bucket)
                || !(m.get("key") instanceof String key)
                || !(m.get("upload_id") instanceof String uploadId)
                || !(parts instanceof Number)
                || !(initiated instanceof Number)) {
            throw new IOException(
                    "an upload entry lacks bucket, key, upload_id, parts or initiated_millis");
        }
        return new IncompleteUpload(
                bucket,
                key,
                uploadId,
                ((Number) parts).intValue(),
                ((Number) initiated).longValue());
    }
}
