package dev.vended.storage.testkit;

import java.util.Map;

/**
 * How many bit flips the local endpoint applied ({@code GET /_admin/flips}); see {@link
 * LocalS3Server#flipNextRequest(String, String)} and {@link
 * LocalS3Server#flipNextResponse(String, String)}.
 *
 * @param request request bodies (PutObject, UploadPart) that had a bit flipped
 * @param response response bodies (GetObject) that had a bit flipped
 * @param armed flips armed and not used yet
 */
public record FlipCounts(long request, long response, long armed) {

    static FlipCounts fromJson(Map<String, Object> m) {
        return new FlipCounts(num(m, "request"), num(m, "response"), num(m, "armed"));
    }

    private static long num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof Number ? ((Number) v).longValue() : 0L;
    }
}
