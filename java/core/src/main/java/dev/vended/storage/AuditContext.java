package dev.vended.storage;

import java.util.Objects;

/**
 * The audit context of the calling thread: a short text the native side appends to the {@code
 * User-Agent} of every request of the operations this thread starts (synchronous calls, streams
 * and {@link AsyncObjectStore} operations; not the parallel part uploads a writer spawns), so that
 * endpoint logs (S3 server access logs, CloudTrail {@code userAgent}) tell which job or task made
 * them. The Hadoop FileSystem sets it to the Spark job and task ids inside Spark tasks.
 *
 * <p>The native side keeps characters {@code [A-Za-z0-9._:/=-]} and single spaces (anything else
 * becomes {@code _}) and at most 256 of them. Never put a secret in it. Setting the same value again
 * costs no native call: the last value is cached per thread.
 */
public final class AuditContext {

    private static final ThreadLocal<String> LAST = new ThreadLocal<>();

    private AuditContext() {}

    /**
     * Sets the calling thread's audit context, telling the native side only when it changed.
     *
     * @param context the context ({@code null} or empty: none)
     */
    public static void set(String context) {
        String value = context == null || context.isEmpty() ? null : context;
        if (Objects.equals(LAST.get(), value)) {
            return;
        }
        NativeLoader.load();
        NativeBridge.setAuditContext(value);
        if (value == null) {
            LAST.remove();
        } else {
            LAST.set(value);
        }
    }

    /**
     * The audit context last set on the calling thread.
     *
     * @return the context, or null
     */
    public static String current() {
        return LAST.get();
    }
}
