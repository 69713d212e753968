package dev.vended.storage.testkit;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * An S3-compatible endpoint the tests did not start (LocalStack, MinIO, moto, real S3) and the
 * static credentials to reach it. {@link #toString()} never shows the secret or the token.
 *
 * @param endpoint the endpoint URL, e.g. {@code http://127.0.0.1:4566} or {@code
 *     https://s3.eu-west-1.amazonaws.com}
 * @param region the region to sign for
 * @param accessKeyId the access key id
 * @param secretAccessKey the secret access key
 * @param sessionToken the session token, or {@code null}
 */
public record ExternalEndpoint(
        String endpoint,
        String region,
        String accessKeyId,
        String secretAccessKey,
        String sessionToken) {

    /** Environment variable (or system property {@code vended.storage.test.endpoint}): the URL. */
    public static final String ENDPOINT_ENV = "VENDED_STORAGE_TEST_ENDPOINT";

    /** Environment variable (or {@code vended.storage.test.accessKeyId}): the access key id. */
    public static final String ACCESS_KEY_ID_ENV = "VENDED_STORAGE_TEST_ACCESS_KEY_ID";

    /** Environment variable (or {@code vended.storage.test.secretAccessKey}): the secret. */
    public static final String SECRET_ACCESS_KEY_ENV = "VENDED_STORAGE_TEST_SECRET_ACCESS_KEY";

    /** Environment variable (or {@code vended.storage.test.sessionToken}), optional. */
    public static final String SESSION_TOKEN_ENV = "VENDED_STORAGE_TEST_SESSION_TOKEN";

    /** Environment variable (or {@code vended.storage.test.region}), default {@code us-east-1}. */
    public static final String REGION_ENV = "VENDED_STORAGE_TEST_REGION";

    /**
     * Environment variable (or {@code vended.storage.test.bucket}), optional: the bucket to use
     * instead of the test's first (default) bucket.
     */
    public static final String BUCKET_ENV = "VENDED_STORAGE_TEST_BUCKET";

    /**
     * Validates the components.
     *
     * @param endpoint not blank
     * @param region not blank
     * @param accessKeyId not blank
     * @param secretAccessKey not blank
     * @param sessionToken the session token, or {@code null}
     */
    public ExternalEndpoint {
        requireText(endpoint, "endpoint");
        requireText(region, "region");
        requireText(accessKeyId, "accessKeyId");
        requireText(secretAccessKey, "secretAccessKey");
        if (sessionToken != null && sessionToken.isBlank()) {
            sessionToken = null;
        }
    }

    /**
     * The endpoint configured by system properties {@code vended.storage.test.*} or, where a
     * property is unset, the environment variables {@value #ENDPOINT_ENV}, {@value
     * #ACCESS_KEY_ID_ENV}, {@value #SECRET_ACCESS_KEY_ENV}, {@value #SESSION_TOKEN_ENV} and
     * {@value #REGION_ENV}.
     *
     * @return the endpoint, or empty when no endpoint URL is configured
     * @throws IllegalStateException if the URL is configured but a key is missing (the message
     *     names the missing variable, never a secret)
     */
    public static Optional<ExternalEndpoint> fromEnvironment() {
        return fromLookup(ExternalEndpoint::setting);
    }

    /** {@link #fromEnvironment()} reading settings through {@code lookup} (environment name in). */
    static Optional<ExternalEndpoint> fromLookup(UnaryOperator<String> lookup) {
        String endpoint = lookup.apply(ENDPOINT_ENV);
        if (endpoint == null) {
            return Optional.empty();
        }
        String akid = lookup.apply(ACCESS_KEY_ID_ENV);
        String secret = lookup.apply(SECRET_ACCESS_KEY_ENV);
        if (akid == null || secret == null) {
            throw new IllegalStateException(
                    ENDPOINT_ENV
                            + " is set ("
                            + endpoint
                            + ") but "
                            + (akid == null ? ACCESS_KEY_ID_ENV : SECRET_ACCESS_KEY_ENV)
                            + " is not (or its system property "
                            + propertyName(akid == null ? ACCESS_KEY_ID_ENV : SECRET_ACCESS_KEY_ENV)
                            + ")");
        }
        String region = lookup.apply(REGION_ENV);
        return Optional.of(
                new ExternalEndpoint(
                        endpoint,
                        region == null ? "us-east-1" : region,
                        akid,
                        secret,
                        lookup.apply(SESSION_TOKEN_ENV)));
    }

    /**
     * A setting: the system property {@link #propertyName(String)} if set and not blank, else the
     * environment variable if set and not blank, else {@code null}.
     */
    static String setting(String envName) {
        String v = System.getProperty(propertyName(envName));
        if (v == null || v.isBlank()) {
            v = System.getenv(envName);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** {@code VENDED_STORAGE_TEST_ACCESS_KEY_ID} to {@code vended.storage.test.accessKeyId}. */
    static String propertyName(String envName) {
        String rest = envName.substring("VENDED_STORAGE_TEST_".length()).toLowerCase(Locale.ROOT);
        StringBuilder b = new StringBuilder("vended.storage.test.");
        boolean upper = false;
        for (char c : rest.toCharArray()) {
            if (c == '_') {
                upper = true;
            } else {
                b.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return b.toString();
    }

    /**
     * {@code aws_endpoint}, {@code aws_region} and {@code aws_allow_http} ({@code true} for an
     * {@code http://} endpoint).
     *
     * @return a new mutable map
     */
    public Map<String, String> endpointOptions() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("aws_endpoint", endpoint);
        m.put("aws_region", region);
        m.put(
                "aws_allow_http",
                Boolean.toString(endpoint.toLowerCase(Locale.ROOT).startsWith("http://")));
        return m;
    }

    /**
     * The static credentials, announced to expire at {@code expiresAtMillis}.
     *
     * @param expiresAtMillis epoch milliseconds
     * @return the credentials
     */
    public VendedCredentials credentials(long expiresAtMillis) {
        return new VendedCredentials(accessKeyId, secretAccessKey, sessionToken, expiresAtMillis);
    }

    private static void requireText(String value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " is blank");
        }
    }

    @Override
    public String toString() {
        return "ExternalEndpoint{endpoint="
                + endpoint
                + ", region="
                + region
                + ", accessKeyId="
                + accessKeyId
                + ", secretAccessKey=<redacted>, sessionToken="
                + (sessionToken == null ? "none" : "<redacted>")
                + "}";
    }
}
