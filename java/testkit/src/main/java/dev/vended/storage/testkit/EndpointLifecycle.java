package dev.vended.storage.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The configuration and lifecycle of one {@link LocalS3Extension}: the buckets and endpoint
 * choice set before the tests, and the {@link ActiveEndpoint} started by the first extension
 * context that asks (class or test) and stopped by that same context only.
 */
final class EndpointLifecycle {

    private final List<String> buckets = new ArrayList<>();
    private boolean localOnly;
    private Supplier<ExternalEndpoint> explicitTarget;

    /** The running endpoint, or {@code null}. */
    private volatile ActiveEndpoint active;
    /** Unique id of the extension context that started the endpoint (it alone stops it). */
    private String owner;

    /** See {@link LocalS3Extension#bucket(String)}. */
    synchronized void addBucket(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("bucket name is blank");
        }
        requireNotStarted();
        if (!buckets.contains(name)) {
            buckets.add(name);
        }
    }

    /** See {@link LocalS3Extension#localOnly()}. */
    synchronized void localOnly() {
        requireNotStarted();
        if (explicitTarget != null) {
            throw new IllegalStateException("localOnly() and target(...) exclude each other");
        }
        localOnly = true;
    }

    /** See {@link LocalS3Extension#target(Supplier)}. */
    synchronized void target(Supplier<ExternalEndpoint> target) {
        Objects.requireNonNull(target, "target");
        requireNotStarted();
        if (localOnly) {
            throw new IllegalStateException("localOnly() and target(...) exclude each other");
        }
        explicitTarget = target;
    }

    private void requireNotStarted() {
        if (active != null) {
            throw new IllegalStateException("the endpoint is already running");
        }
    }

    /** Starts the endpoint unless it is running (then a no-op). */
    synchronized void start(ExtensionContext context) throws Exception {
        if (owner != null) {
            return;
        }
        active =
                ActiveEndpoint.start(
                        buckets.isEmpty() ? List.of(LocalS3Extension.DEFAULT_BUCKET) : buckets,
                        localOnly,
                        explicitTarget);
        owner = context.getUniqueId();
    }

    /** Stops the endpoint if {@code context} started it. */
    synchronized void stop(ExtensionContext context) {
        if (owner == null || !owner.equals(context.getUniqueId())) {
            return;
        }
        owner = null;
        ActiveEndpoint a = active;
        active = null;
        if (a != null) {
            a.stop();
        }
    }

    /**
     * The running endpoint.
     *
     * @throws IllegalStateException if it is not running (outside the test lifecycle)
     */
    ActiveEndpoint running() {
        ActiveEndpoint a = active;
        if (a == null) {
            throw new IllegalStateException(
                    "LocalS3Extension is not running: register it with @RegisterExtension (static"
                            + " field for one endpoint per class) or @ExtendWith, and use it from"
                            + " tests or @BeforeAll/@BeforeEach methods");
        }
        return a;
    }

    @Override
    public String toString() {
        ActiveEndpoint a = active;
        return "LocalS3Extension{"
                + (a != null ? a.toString() : "not running")
                + ", buckets="
                + (a != null ? a.buckets : buckets)
                + "}";
    }
}
