package dev.vended.storage.testkit;

import java.util.Map;

/**
 * What the local endpoint recorded for one access key.
 *
 * @param accepted requests signed with the key and served
 * @param rejected requests signed with the key and refused, for any reason
 * @param expired refused because the credentials had expired
 * @param invalidKey refused because the key was unknown or revoked
 * @param badToken refused because the session token was missing or wrong
 * @param denied refused with 403 AccessDenied: the key's scope does not cover the resource, or its
 *     {@link KeyAccess} does not allow the operation (a write by a read-only key, a listing by a
 *     key without LIST)
 */
public record KeyStats(
        long accepted, long rejected, long expired, long invalidKey, long badToken, long denied) {

    /** Stats of a key the endpoint never saw. */
    public static final KeyStats NONE = new KeyStats(0, 0, 0, 0, 0, 0);

    static KeyStats fromJson(Map<String, Object> m) {
        return new KeyStats(
                num(m, "accepted"),
                num(m, "rejected"),
                num(m, "expired"),
                num(m, "invalid_key"),
                num(m, "bad_token"),
                num(m, "denied"));
    }

    private static long num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        return v instanceof Number ? ((Number) v).longValue() : 0L;
    }
}
