package dev.vended.storage.testkit;

import java.util.Map;

/**
 * One request the local endpoint answered, from its request log ({@code GET /_admin/requests}).
 *
 * @param accessKeyId the access key id that signed the request; empty for unsigned requests
 * @param method the HTTP method, e.g. {@code GET}
 * @param bucket the bucket addressed (path-style), or {@code null}
 * @param key the object key addressed, or {@code null}
 * @param accepted whether the request passed authentication and authorization
 * @param reason for a rejected request the S3 error code ({@code ExpiredToken}, {@code
 *     InvalidAccessKeyId}, {@code InvalidToken}, {@code AccessDenied}, {@code
 *     SignatureDoesNotMatch}), otherwise {@code null}
 * @param status the HTTP status of the answer
 * @param userAgent the request's {@code User-Agent} header (at most 512 bytes kept), or {@code
 *     null} without one
 */
public record RequestRecord(
        String accessKeyId,
        String method,
        String bucket,
        String key,
        boolean accepted,
        String reason,
        int status,
        String userAgent) {

    static RequestRecord fromJson(Map<String, Object> m) {
        Object status = m.get("status");
        return new RequestRecord(
                str(m, "access_key_id", ""),
                str(m, "method", ""),
                str(m, "bucket", null),
                str(m, "key", null),
                Boolean.TRUE.equals(m.get("accepted")),
                str(m, "reason", null),
                status instanceof Number ? ((Number) status).intValue() : 0,
                str(m, "user_agent", null));
    }

    private static String str(Map<String, Object> m, String key, String absent) {
        Object v = m.get(key);
        return v instanceof String ? (String) v : absent;
    }
}
