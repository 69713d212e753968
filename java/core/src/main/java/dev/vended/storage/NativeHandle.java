package dev.vended.storage;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * A native handle plus a count of calls in flight, shared by {@link ObjectStore} and {@link
 * Session}.
 *
 * <p>{@code state} is the number of calls in flight, with the sign bit set once closed; the native
 * handle is released exactly once, by whoever brings it to "closed with no calls in flight". This
 * object is also the {@link java.lang.ref.Cleaner} action of its owner, so it must not refer to the
 * owner.
 */
final class NativeHandle implements Runnable {
    private static final long CLOSED = Long.MIN_VALUE;

    private final long value;
    private final String closedMessage;
    private final LongConsumer release;
    private final AtomicLong state = new AtomicLong();

    /**
     * @param value the native handle
     * @param closedMessage the message of the {@link IllegalStateException} thrown once closed,
     *     e.g. {@code "ObjectStore is closed: s3://bucket/t/"}; never contains a secret
     * @param release the native call that releases the handle (a static method reference, never a
     *     lambda capturing the owner)
     */
    NativeHandle(long value, String closedMessage, LongConsumer release) {
        this.value = value;
        this.closedMessage = closedMessage;
        this.release = release;
    }

    /**
     * Registers one call in flight.
     *
     * @return the native handle, valid until the matching {@link #release()}
     * @throws IllegalStateException if closed
     */
    long acquire() {
        while (true) {
            long s = state.get();
            if (s < 0) {
                throw new IllegalStateException(closedMessage);
            }
            if (state.compareAndSet(s, s + 1)) {
                return value;
            }
        }
    }

    /** Ends a call registered by {@link #acquire()}. */
    void release() {
        if (state.decrementAndGet() == CLOSED) {
            release.accept(value);
        }
    }

    boolean isClosed() {
        return state.get() < 0;
    }

    /** Closes: idempotent; the native handle goes once no call is in flight. */
    @Override
    public void run() {
        while (true) {
            long s = state.get();
            if (s < 0) {
                return;
            }
            if (state.compareAndSet(s, s | CLOSED)) {
                if (s == 0) {
                    release.accept(value);
                }
                return;
            }
        }
    }
}
