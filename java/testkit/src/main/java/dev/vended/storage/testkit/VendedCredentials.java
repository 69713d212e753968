package dev.vended.storage.testkit;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One set of temporary AWS-style credentials, as an STS {@code AssumeRole} call or a catalog vends
 * them. {@link #toString()} never shows the secret or the token.
 *
 * @param accessKeyId the access key id (not secret)
 * @param secretAccessKey the secret access key
 * @param sessionToken the session token, or {@code null}
 * @param expiresAtMillis expiry, epoch milliseconds
 */
public record VendedCredentials(
        String accessKeyId, String secretAccessKey, String sessionToken, long expiresAtMillis) {

    /**
     * Validates the components.
     *
     * @param accessKeyId the access key id, not null
     * @param secretAccessKey the secret access key, not null
     * @param sessionToken the session token, or {@code null}
     * @param expiresAtMillis expiry, epoch milliseconds
     */
    public VendedCredentials {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretAccessKey, "secretAccessKey");
    }

    /**
     * These credentials as storage options: {@code aws_access_key_id}, {@code
     * aws_secret_access_key}, {@code aws_session_token} (if any) and {@code expires_at_millis}.
     *
     * @return a new mutable map
     */
    public Map<String, String> toOptions() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("aws_access_key_id", accessKeyId);
        options.put("aws_secret_access_key", secretAccessKey);
        if (sessionToken != null) {
            options.put("aws_session_token", sessionToken);
        }
        options.put("expires_at_millis", Long.toString(expiresAtMillis));
        return options;
    }

    @Override
    public String toString() {
        return "VendedCredentials{accessKeyId="
                + accessKeyId
                + ", secretAccessKey=<redacted>, sessionToken="
                + (sessionToken == null ? "none" : "<redacted>")
                + ", expiresAt="
                + Instant.ofEpochMilli(expiresAtMillis)
                + "}";
    }
}
