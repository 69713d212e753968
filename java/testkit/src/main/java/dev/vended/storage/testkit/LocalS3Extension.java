package dev.vended.storage.testkit;

import static dev.vended.storage.testkit.ActiveEndpoint.ttlMillis;
import static dev.vended.storage.testkit.ActiveEndpoint.unchecked;
import static dev.vended.storage.testkit.ActiveEndpoint.uncheckedRun;

import dev.vended.storage.ObjectStore;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A JUnit 5 extension that gives a test class an S3 endpoint: by default the project's enforcing
 * local endpoint ({@code local-s3}, which rejects expired and revoked credentials and keeps
 * per-key counters), started on 127.0.0.1 on a free port before the class's tests and stopped
 * after them; or, when configured, an endpoint the user already runs (LocalStack, MinIO, real S3).
 *
 * <pre>{@code
 * @RegisterExtension
 * static LocalS3Extension s3 = LocalS3Extension.create().bucket("data");
 *
 * @Test
 * void readsAcrossExpiry() throws Exception {
 *     RecordingProvider provider = s3.provider(Duration.ofSeconds(2));
 *     try (ObjectStore store = ObjectStore.open(s3.uri("t/"), provider.fetchStorageOptions(), provider)) {
 *         ...
 *     }
 * }
 * }</pre>
 *
 * or {@code @ExtendWith(LocalS3Extension.class)} with a {@code LocalS3Extension} parameter on
 * the test methods (default bucket {@value #DEFAULT_BUCKET}).
 *
 * <p><b>The local endpoint</b> is the {@code local-s3} binary of {@link
 * LocalS3Server#binaryFromProperty()}: the system property {@value LocalS3Server#BINARY_PROPERTY},
 * else the binary bundled in the testkit jar for this platform. Its stderr goes to a file under
 * the directory named by {@value LocalS3Server#LOG_DIR_PROPERTY} (or a temporary directory).
 *
 * <p><b>An external endpoint</b> is used instead when the system property {@code
 * vended.storage.test.endpoint} or the environment variable {@value
 * ExternalEndpoint#ENDPOINT_ENV} is set (with {@value ExternalEndpoint#ACCESS_KEY_ID_ENV}, {@value
 * ExternalEndpoint#SECRET_ACCESS_KEY_ENV}, optional {@value ExternalEndpoint#SESSION_TOKEN_ENV},
 * {@value ExternalEndpoint#REGION_ENV} (default {@code us-east-1}) and {@value
 * ExternalEndpoint#BUCKET_ENV} (replaces the default bucket); see {@link
 * ExternalEndpoint#fromEnvironment()}), or when the test gives one with {@link
 * #target(Supplier)}. {@link #localOnly()} ignores the environment. The buckets must exist there:
 * the extension checks before the tests that each can be listed and fails the class with the
 * endpoint's answer otherwise. An external endpoint cannot mint, scope or revoke credentials and
 * keeps no counters, so:
 *
 * <ul>
 *   <li>{@link #endpoint()}, {@link #bucket()}, {@link #uri(String)}, {@link #storageOptions()},
 *       {@link #endpointOptions()} and {@link #provider(Duration)} work on both (there the
 *       provider re-vends the configured static credentials with {@code expires_at_millis = now +
 *       ttl}: the client refreshes on schedule, but the endpoint does not enforce the expiry);
 *   <li>the capabilities only the local endpoint has — {@link #mintCredentials}, {@link
 *       #provider(Duration, String)} (prefix scope), {@link #revoke}, {@link #stats()}, {@link
 *       #requests()}, {@link #incompleteUploads()}, {@link #createBucket}, {@link #server()} —
 *       <em>abort</em> the calling test (JUnit reports it skipped, with a message naming the
 *       capability and the endpoint), as {@code assumeTrue} would: the test asked for something
 *       this endpoint cannot show. Check {@link #isLocal()} first to branch instead, or use
 *       {@link #localOnly()} for tests that must always run.
 * </ul>
 *
 * <p>Registered on a static field or with {@code @ExtendWith}, the endpoint lives for the test
 * class (nested classes share it); on an instance field, for each test.
 */
public final class LocalS3Extension
        implements BeforeAllCallback,
                AfterAllCallback,
                BeforeEachCallback,
                AfterEachCallback,
                ParameterResolver {

    /** The bucket of an extension that names none. */
    public static final String DEFAULT_BUCKET = "vended-test";

    private final EndpointLifecycle state = new EndpointLifecycle();

    /**
     * An extension with the default bucket {@value #DEFAULT_BUCKET}, for {@code
     * ExtendWith(LocalS3Extension.class)}; prefer {@link #create()} in code.
     */
    public LocalS3Extension() {}

    /**
     * A new extension; name buckets with {@link #bucket(String)} (without any, {@value
     * #DEFAULT_BUCKET}).
     *
     * @return the extension
     */
    public static LocalS3Extension create() {
        return new LocalS3Extension();
    }

    /**
     * Adds a bucket to create at start (on the local endpoint) or to expect (on an external one).
     * The first is the default bucket of {@link #bucket()} and {@link #uri(String)}.
     *
     * @param name an S3 bucket name
     * @return this
     * @throws IllegalStateException if the endpoint is already running
     */
    public synchronized LocalS3Extension bucket(String name) {
        state.addBucket(name);
        return this;
    }

    /**
     * Always uses the enforcing local endpoint, whatever {@value ExternalEndpoint#ENDPOINT_ENV}
     * says: for tests that prove expiry, revocation or scopes and must never be skipped.
     *
     * @return this
     * @throws IllegalStateException if the endpoint is already running, or {@link
     *     #target(Supplier)} was called
     */
    public synchronized LocalS3Extension localOnly() {
        state.localOnly();
        return this;
    }

    /**
     * Uses the endpoint {@code target} supplies (asked once, before the tests, so it may be an
     * endpoint another extension registered earlier has just started) instead of the local one
     * or the environment's.
     *
     * @param target supplies the endpoint
     * @return this
     * @throws IllegalStateException if the endpoint is already running, or {@link #localOnly()}
     *     was called
     */
    public synchronized LocalS3Extension target(Supplier<ExternalEndpoint> target) {
        state.target(target);
        return this;
    }

    // -------------------------------------------------------------------------------------
    // Lifecycle

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        state.start(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        state.stop(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        state.start(context); // no-op when a class-level start happened
    }

    @Override
    public void afterEach(ExtensionContext context) {
        state.stop(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == LocalS3Extension.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return this;
    }

    // -------------------------------------------------------------------------------------
    // Both kinds of endpoint

    /**
     * Whether the tests run against the enforcing local endpoint (rather than an external one).
     *
     * @return {@code true} for the local endpoint
     * @throws IllegalStateException if the endpoint is not running (outside the test lifecycle)
     */
    public boolean isLocal() {
        return running().server != null;
    }

    /**
     * The endpoint URL.
     *
     * @return e.g. {@code http://127.0.0.1:41234}
     * @throws IllegalStateException if the endpoint is not running
     */
    public String endpoint() {
        ActiveEndpoint a = running();
        return a.server != null ? a.server.endpoint() : a.external.endpoint();
    }

    /**
     * The region to sign for.
     *
     * @return {@code us-east-1} for the local endpoint
     * @throws IllegalStateException if the endpoint is not running
     */
    public String region() {
        ActiveEndpoint a = running();
        return a.server != null ? LocalS3Server.REGION : a.external.region();
    }

    /**
     * The default bucket: the first one named (or the one {@value ExternalEndpoint#BUCKET_ENV}
     * names on an external endpoint).
     *
     * @return the bucket name
     * @throws IllegalStateException if the endpoint is not running
     */
    public String bucket() {
        return running().buckets.get(0);
    }

    /**
     * Every bucket, the default first.
     *
     * @return the bucket names
     * @throws IllegalStateException if the endpoint is not running
     */
    public List<String> buckets() {
        return running().buckets;
    }

    /**
     * {@code s3://<default bucket>/<prefix>}.
     *
     * @param prefix a prefix such as {@code "table-1/"}, or empty
     * @return the URI
     * @throws IllegalStateException if the endpoint is not running
     */
    public String uri(String prefix) {
        return "s3://" + bucket() + "/" + (prefix == null ? "" : prefix);
    }

    /**
     * Options that reach the endpoint, without credentials: {@code aws_endpoint}, {@code
     * aws_region}, {@code aws_allow_http}.
     *
     * @return a new mutable map
     * @throws IllegalStateException if the endpoint is not running
     */
    public Map<String, String> endpointOptions() {
        return running().endpointOptions();
    }

    /**
     * Options for {@link ObjectStore#open(String, Map)}: {@link #endpointOptions()} plus static
     * credentials that do not expire — the local endpoint's root key, or the external endpoint's
     * configured keys.
     *
     * @return a new mutable map
     * @throws IllegalStateException if the endpoint is not running
     */
    public Map<String, String> storageOptions() {
        return running().storageOptions();
    }

    /**
     * {@link #endpointOptions()} plus {@code credentials} and their {@code expires_at_millis}.
     *
     * @param credentials e.g. from {@link #mintCredentials(Duration)}
     * @return a new mutable map
     * @throws IllegalStateException if the endpoint is not running
     */
    public Map<String, String> storageOptions(VendedCredentials credentials) {
        Objects.requireNonNull(credentials, "credentials");
        Map<String, String> m = endpointOptions();
        m.putAll(credentials.toOptions());
        return m;
    }

    /**
     * A provider that vends credentials living {@code ttl}, recording every call ({@link
     * RecordingProvider#calls()}, {@link RecordingProvider#vendedKeyIds()}, ...). On the local
     * endpoint each call mints a new key that the endpoint rejects once {@code ttl} has passed
     * (400 {@code ExpiredToken}); on an external endpoint each call re-vends the configured static
     * credentials with {@code expires_at_millis = now + ttl}, which the client honours but the
     * endpoint does not enforce.
     *
     * @param ttl lifetime of each credential set (0 to 10 years)
     * @return a new provider
     * @throws IllegalArgumentException if {@code ttl} is negative or longer than 10 years
     * @throws IllegalStateException if the endpoint is not running
     */
    public RecordingProvider provider(Duration ttl) {
        long ttlMillis = ttlMillis(ttl);
        return running().provider(ttlMillis);
    }

    // -------------------------------------------------------------------------------------
    // Local endpoint only

    /**
     * A provider like {@link #provider(Duration)} whose keys the endpoint confines to {@code
     * prefix} in the default bucket (any other object, and listing outside it, gets 403 {@code
     * AccessDenied}). Local endpoint only: elsewhere the calling test is aborted (skipped).
     *
     * @param ttl lifetime of each credential set (0 to 10 years)
     * @param prefix a key prefix such as {@code "table-1/"} (plain string prefix, as in IAM)
     * @return a new provider
     * @throws IllegalArgumentException if {@code ttl} is out of range
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public RecordingProvider provider(Duration ttl, String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        long ttlMillis = ttlMillis(ttl);
        LocalS3Server s = requireLocal("prefix-scoped credentials");
        return new IssuingProvider(s, ttlMillis, bucket() + "/" + prefix);
    }

    /**
     * A provider like {@link #provider(Duration, String)} whose keys may do only what {@code
     * access} allows (see {@link #mintCredentials(Duration, String, KeyAccess)}). Local endpoint
     * only: elsewhere the calling test is aborted (skipped).
     *
     * @param ttl lifetime of each credential set (0 to 10 years)
     * @param prefix a key prefix in the default bucket, or {@code null} for every bucket
     * @param access what the keys may do there
     * @return a new provider
     * @throws IllegalArgumentException if {@code ttl} is out of range
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public RecordingProvider provider(Duration ttl, String prefix, KeyAccess access) {
        Objects.requireNonNull(access, "access");
        long ttlMillis = ttlMillis(ttl);
        LocalS3Server s = requireLocal("credentials with a scope or access level");
        return new IssuingProvider(
                s, ttlMillis, prefix == null ? null : bucket() + "/" + prefix, access);
    }

    /**
     * Mints a temporary key (access key id, secret, session token, expiry), as STS would, that
     * the endpoint rejects after {@code ttl}. Local endpoint only: elsewhere the calling test is
     * aborted (skipped).
     *
     * @param ttl lifetime (0, already expired, to 10 years)
     * @return the credentials with the endpoint's exact expiry
     * @throws IllegalArgumentException if {@code ttl} is out of range
     * @throws UncheckedIOException if the endpoint refuses
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public VendedCredentials mintCredentials(Duration ttl) {
        return mint(ttl, null);
    }

    /**
     * {@link #mintCredentials(Duration)} confined to {@code prefix} in the default bucket.
     *
     * @param ttl lifetime (0 to 10 years)
     * @param prefix a key prefix such as {@code "table-1/"}
     * @return the credentials
     * @throws IllegalArgumentException if {@code ttl} is out of range
     * @throws UncheckedIOException if the endpoint refuses
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public VendedCredentials mintCredentials(Duration ttl, String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        return mint(ttl, prefix);
    }

    /**
     * {@link #mintCredentials(Duration, String)} for a key that may do only what {@code access}
     * allows: {@link KeyAccess#READ_ONLY} (GET, HEAD, LIST), {@code KeyAccess.READ_ONLY
     * .withoutList()}, {@code KeyAccess.READ_WRITE.withoutList()}; a refused call gets 403 {@code
     * AccessDenied} saying why. Local endpoint only: elsewhere the calling test is aborted.
     *
     * @param ttl lifetime (0 to 10 years)
     * @param prefix a key prefix in the default bucket, or {@code null} for every bucket
     * @param access what the key may do there
     * @return the credentials
     * @throws IllegalArgumentException if {@code ttl} is out of range
     * @throws UncheckedIOException if the endpoint refuses
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public VendedCredentials mintCredentials(Duration ttl, String prefix, KeyAccess access) {
        Objects.requireNonNull(access, "access");
        long ttlMillis = ttlMillis(ttl);
        String capability = "minting credentials with a scope or access level";
        return running().mint(capability, ttlMillis, prefix, access);
    }

    private VendedCredentials mint(Duration ttl, String prefix) {
        long ttlMillis = ttlMillis(ttl);
        String capability = prefix == null ? "minting credentials" : "prefix-scoped credentials";
        return running().mint(capability, ttlMillis, prefix, null);
    }

    /**
     * Revokes a key: the endpoint answers later requests signed with it 403 {@code
     * InvalidAccessKeyId}. Local endpoint only: elsewhere the calling test is aborted (skipped).
     *
     * @param accessKeyId the key
     * @throws UncheckedIOException if the endpoint refuses (e.g. the root key)
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public void revoke(String accessKeyId) {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        LocalS3Server s = requireLocal("revoking credentials");
        uncheckedRun(() -> s.revoke(accessKeyId));
    }

    /**
     * The endpoint's counters per access key. Local endpoint only: elsewhere the calling test is
     * aborted (skipped).
     *
     * @return access key id to counters
     * @throws UncheckedIOException if the endpoint answers something unexpected
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public Map<String, KeyStats> stats() {
        LocalS3Server s = requireLocal("per-key request counters");
        return unchecked(s::stats);
    }

    /**
     * The endpoint's counters for one key ({@link KeyStats#NONE} if it never saw it). Local
     * endpoint only: elsewhere the calling test is aborted (skipped).
     *
     * @param accessKeyId the key
     * @return its counters
     * @throws UncheckedIOException if the endpoint answers something unexpected
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public KeyStats stats(String accessKeyId) {
        return stats().getOrDefault(accessKeyId, KeyStats.NONE);
    }

    /**
     * The endpoint's request log, oldest first. Local endpoint only: elsewhere the calling test
     * is aborted (skipped).
     *
     * @return every S3/STS request answered so far (the last 100 000)
     * @throws UncheckedIOException if the endpoint answers something unexpected
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public List<RequestRecord> requests() {
        LocalS3Server s = requireLocal("the request log");
        return unchecked(s::requests);
    }

    /**
     * The multipart uploads the local endpoint holds that were started and neither completed nor
     * aborted, in every bucket: a test asserts with it that a failed upload left no parts behind.
     * Local endpoint only: elsewhere the calling test is aborted (skipped).
     *
     * @return the uploads ordered by bucket, key, then start time; empty when none
     * @throws UncheckedIOException if the endpoint answers something unexpected
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public List<IncompleteUpload> incompleteUploads() {
        LocalS3Server s = requireLocal("listing incomplete uploads");
        return unchecked(s::incompleteUploads);
    }

    /**
     * Creates another bucket. Local endpoint only: elsewhere the calling test is aborted
     * (skipped); name buckets with {@link #bucket(String)} instead.
     *
     * @param name the bucket name
     * @throws UncheckedIOException if the endpoint refuses (e.g. an invalid name)
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public void createBucket(String name) {
        Objects.requireNonNull(name, "name");
        LocalS3Server s = requireLocal("creating buckets");
        uncheckedRun(() -> s.createBucket(name));
    }

    /**
     * The running local endpoint (STS {@code AssumeRole}, admin API, log file). Local endpoint
     * only: elsewhere the calling test is aborted (skipped).
     *
     * @return the server
     * @throws org.opentest4j.TestAbortedException on an external endpoint
     */
    public LocalS3Server server() {
        return requireLocal("the local endpoint's server");
    }

    // -------------------------------------------------------------------------------------

    private ActiveEndpoint running() {
        return state.running();
    }

    private LocalS3Server requireLocal(String capability) {
        return state.running().requireLocal(capability);
    }

    @Override
    public String toString() {
        return state.toString();
    }
}
