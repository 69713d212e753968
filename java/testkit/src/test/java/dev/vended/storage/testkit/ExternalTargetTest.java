package dev.vended.storage.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.vended.storage.ObjectStore;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.opentest4j.TestAbortedException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The extension pointed at an endpoint it did not start (here a second local endpoint reached
 * with its static root key, standing in for LocalStack or MinIO): what works, what skips, what
 * fails; and the environment configuration.
 */
class ExternalTargetTest {

    /** The "external" endpoint the cases below target. */
    static LocalS3Server backing;

    @BeforeAll
    static void startBacking() throws Exception {
        backing = LocalS3Server.start("ext-external");
    }

    @AfterAll
    static void stopBacking() {
        if (backing != null) {
            backing.close();
        }
    }

    static ExternalEndpoint backingTarget() {
        return new ExternalEndpoint(
                backing.endpoint(),
                "us-east-1",
                LocalS3Server.ROOT_ACCESS_KEY_ID,
                LocalS3Server.ROOT_SECRET_ACCESS_KEY,
                null);
    }

    /** Run by {@link #capabilitiesOfTheLocalEndpointSkipTheTestThatAsksForThem()}. */
    static class ExternalCases {
        @RegisterExtension
        static final LocalS3Extension S3 =
                LocalS3Extension.create()
                        .bucket("ext-external")
                        .target(ExternalTargetTest::backingTarget);

        private static final byte[] DATA = "external".getBytes(StandardCharsets.UTF_8);

        @Test
        void storageOptionsReachTheEndpoint() throws Exception {
            assertFalse(S3.isLocal());
            assertEquals(backing.endpoint(), S3.endpoint());
            assertEquals("ext-external", S3.bucket());
            Map<String, String> options = S3.storageOptions();
            assertEquals("true", options.get("aws_allow_http"));
            assertFalse(options.containsKey("expires_at_millis"));
            try (ObjectStore store = ObjectStore.open(S3.uri("static/"), options)) {
                store.put("x", DATA);
                assertArrayEquals(DATA, store.get("x"));
            }
        }

        @Test
        @Timeout(60)
        void providerReVendsTheStaticKeysWithTheTtl() throws Exception {
            RecordingProvider provider = S3.provider(Duration.ofSeconds(2));
            Map<String, String> first = provider.fetchStorageOptions();
            long expires = Long.parseLong(first.get("expires_at_millis"));
            long lifetime = expires - System.currentTimeMillis();
            assertTrue(lifetime > 1_000 && lifetime <= 2_000, "lifetime " + lifetime);
            try (ObjectStore store = ObjectStore.open(S3.uri("revend/"), first, provider)) {
                store.put("x", DATA);
                Waits.sleepUntil(expires + 200); // the scenario: past the announced expiry
                assertArrayEquals(DATA, store.get("x"));
            }
            assertTrue(provider.calls() >= 2, "calls " + provider.calls());
            assertEquals(
                    List.of(LocalS3Server.ROOT_ACCESS_KEY_ID),
                    provider.vendedKeyIds().stream().distinct().toList());
        }

        @Test
        void mintCredentials() {
            S3.mintCredentials(Duration.ofSeconds(5));
        }

        @Test
        void scopedProvider() {
            S3.provider(Duration.ofSeconds(5), "p/");
        }

        @Test
        void revoke() {
            S3.revoke("AKID");
        }

        @Test
        void stats() {
            S3.stats();
        }

        @Test
        void requests() {
            S3.requests();
        }

        @Test
        void server() {
            S3.server();
        }
    }

    /** Run by {@link #aMissingExternalBucketFailsTheClass()}. */
    static class MissingBucketCases {
        @RegisterExtension
        static final LocalS3Extension S3 =
                LocalS3Extension.create()
                        .bucket("no-such-bucket")
                        .target(ExternalTargetTest::backingTarget);

        @Test
        void neverRuns() {
            throw new AssertionError("ran without its bucket");
        }
    }

    @Test
    @Timeout(120)
    void capabilitiesOfTheLocalEndpointSkipTheTestThatAsksForThem() {
        Events tests =
                EngineTestKit.engine("junit-jupiter")
                        .selectors(selectClass(ExternalCases.class))
                        .execute()
                        .testEvents();
        tests.assertStatistics(s -> s.started(8).succeeded(2).aborted(6).failed(0));
        Map<String, String> reasons = new HashMap<>();
        tests.aborted()
                .stream()
                .forEach(
                        e ->
                                reasons.put(
                                        e.getTestDescriptor().getDisplayName(),
                                        e.getPayload(
                                                        org.junit.platform.engine
                                                                .TestExecutionResult.class)
                                                .flatMap(
                                                        org.junit.platform.engine
                                                                        .TestExecutionResult
                                                                ::getThrowable)
                                                .map(Throwable::getMessage)
                                                .orElse("")));
        assertEquals(6, reasons.size(), reasons.toString());
        assertTrue(
                reasons.get("mintCredentials()").startsWith("minting credentials needs the"),
                reasons.toString());
        assertTrue(
                reasons.get("scopedProvider()").startsWith("prefix-scoped credentials"),
                reasons.toString());
        assertTrue(reasons.get("revoke()").startsWith("revoking credentials"), reasons.toString());
        for (String reason : reasons.values()) {
            assertTrue(reason.contains(backing.endpoint()), reason);
            assertTrue(reason.contains("test skipped"), reason);
        }
    }

    @Test
    @Timeout(120)
    void aMissingExternalBucketFailsTheClass() {
        Events all =
                EngineTestKit.engine("junit-jupiter")
                        .selectors(selectClass(MissingBucketCases.class))
                        .execute()
                        .allEvents();
        assertEquals(0, all.started().stream().filter(e -> e.getTestDescriptor().isTest()).count());
        Throwable failure =
                all.failed()
                        .stream()
                        .findFirst()
                        .flatMap(
                                e ->
                                        e.getPayload(
                                                        org.junit.platform.engine
                                                                .TestExecutionResult.class)
                                                .flatMap(
                                                        org.junit.platform.engine
                                                                        .TestExecutionResult
                                                                ::getThrowable))
                        .orElseThrow(() -> new AssertionError("the class did not fail"));
        assertTrue(
                failure.getMessage().startsWith("bucket no-such-bucket cannot be listed at "),
                failure.getMessage());
        assertFalse(failure.getMessage().contains(LocalS3Server.ROOT_SECRET_ACCESS_KEY));
    }

    @Test
    void abortIsTheJUnitAssumptionException() {
        // The same exception assumeTrue throws, so any JUnit 5 runner reports a skip.
        assertTrue(
                org.junit.jupiter.api.Assumptions.class
                        .getPackageName()
                        .startsWith("org.junit.jupiter"));
        assertThrows(
                TestAbortedException.class,
                () -> org.junit.jupiter.api.Assumptions.abort("probe"));
    }

    @Test
    void environmentConfiguration() {
        Map<String, String> env = new HashMap<>();
        assertEquals(Optional.empty(), ExternalEndpoint.fromLookup(env::get));

        env.put(ExternalEndpoint.ENDPOINT_ENV, "http://127.0.0.1:4566");
        env.put(ExternalEndpoint.ACCESS_KEY_ID_ENV, "AKIDEXAMPLE");
        IllegalStateException missing =
                assertThrows(
                        IllegalStateException.class, () -> ExternalEndpoint.fromLookup(env::get));
        assertTrue(
                missing.getMessage().contains(ExternalEndpoint.SECRET_ACCESS_KEY_ENV),
                missing.getMessage());
        assertTrue(
                missing.getMessage().contains("vended.storage.test.secretAccessKey"),
                missing.getMessage());

        env.put(ExternalEndpoint.SECRET_ACCESS_KEY_ENV, "SECRET-VALUE");
        ExternalEndpoint e = ExternalEndpoint.fromLookup(env::get).orElseThrow();
        assertEquals("us-east-1", e.region());
        assertEquals(null, e.sessionToken());
        assertEquals("true", e.endpointOptions().get("aws_allow_http"));
        assertFalse(e.toString().contains("SECRET-VALUE"), e.toString());

        env.put(ExternalEndpoint.REGION_ENV, "eu-west-1");
        env.put(ExternalEndpoint.SESSION_TOKEN_ENV, "TOKEN-VALUE");
        env.put(ExternalEndpoint.ENDPOINT_ENV, "https://s3.eu-west-1.amazonaws.com");
        e = ExternalEndpoint.fromLookup(env::get).orElseThrow();
        assertEquals("eu-west-1", e.region());
        assertEquals("false", e.endpointOptions().get("aws_allow_http"));
        assertFalse(e.toString().contains("TOKEN-VALUE"), e.toString());
        assertEquals(
                "vended.storage.test.endpoint",
                ExternalEndpoint.propertyName(ExternalEndpoint.ENDPOINT_ENV));
    }
}
