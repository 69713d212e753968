package dev.vended.storage;

import java.nio.ByteBuffer;
import java.util.function.IntFunction;

/**
 * The JNI entry points of native completion for {@link AsyncObjectStore} (Rust: {@code
 * crates/jni/src/async_ops/}).
 *
 * <p>Each {@code start*} method validates its arguments like the synchronous {@link NativeBridge}
 * call ({@link IllegalArgumentException}; {@link IllegalStateException} for a closed store handle),
 * spawns the operation on the native runtime and returns at once with a task id ({@code > 0}).
 * When the task ends (done, failed or cancelled) a native runtime thread calls {@link
 * Sink#ready(long)} exactly once; the receiver then calls {@link #take(long)} exactly once, on a
 * Java thread of its choosing. The native task keeps its own reference to the store, so it
 * finishes even if the store handle is closed meanwhile.
 */
final class AsyncNative {

    static {
        NativeLoader.load();
    }

    private AsyncNative() {}

    /** Told by the native runtime that a task ended; must only hand the task to an executor. */
    abstract static class Sink {
        /**
         * Called once per task, on a native runtime thread (a daemon); never blocks, never runs
         * user code.
         *
         * @param task the task id {@code start*} returned
         */
        abstract void ready(long task);
    }

    /** A whole object; {@link #take} gives its {@code byte[]}. */
    static native long startGet(long store, String path, Sink sink);

    /** Bytes {@code [start, end)}; {@link #take} gives a {@code byte[]}. */
    static native long startGetRange(long store, String path, long start, long end, Sink sink);

    /**
     * Ranges {@code [starts[i], ends[i])}; {@link #take} gives a {@code byte[][]}, in order. Ranges
     * less than {@code minSeek} bytes apart are merged into one GET while it stays at most {@code
     * maxMerged} bytes; a negative {@code minSeek} means the store's default rule. Every GET is
     * pinned to {@code ifMatch} when given; without, the GETs must answer one ETag.
     */
    static native long startGetRanges(
            long store,
            String path,
            long[] starts,
            long[] ends,
            long minSeek,
            long maxMerged,
            String ifMatch,
            Sink sink);

    /**
     * One PUT of {@code data} (copied before this returns). {@code mode}: 0 a plain put ({@link
     * #take} gives {@code null}), 1 create only, 2 if the ETag is {@code eTag} (both: {@link #take}
     * gives {@code {eTag, version}}).
     */
    static native long startPut(long store, String path, byte[] data, int mode, String eTag, Sink sink);

    /** Metadata; {@link #take} gives the 5 strings of {@link ObjectMeta#fromNative}. */
    static native long startHead(long store, String path, Sink sink);

    /** Every object under {@code prefix} ({@code null}: all); 5 strings per object. */
    static native long startList(long store, String prefix, Sink sink);

    /** Deletes; {@link #take} gives {@code null}. */
    static native long startDelete(long store, String path, Sink sink);

    /** Server-side copy, or rename when {@code rename}; {@link #take} gives {@code null}. */
    static native long startCopy(
            long store, String from, String to, boolean ifNotExists, boolean rename, Sink sink);

    /**
     * The result of an ended task, as described at its {@code start*} method, and frees the task;
     * {@code null} for a cancelled task.
     *
     * @throws StorageException the exception the synchronous call would throw
     */
    static native Object take(long task) throws StorageException;

    /**
     * For a {@link #startGetRanges} task: instead of {@link #take}'s {@code byte[][]}, each range
     * is copied into a buffer of {@code allocate} (called on this thread with the range's length,
     * in order, once the task has succeeded; heap or direct) at its position, which is not moved.
     * Frees the task; returns {@code null}.
     *
     * @throws StorageException as {@link #take}
     * @throws IllegalArgumentException if a buffer is read-only or has too little room
     */
    static native Object takeRangesInto(long task, IntFunction<ByteBuffer> allocate)
            throws StorageException;

    /**
     * Stops a running task: its request is dropped, and {@link Sink#ready(long)} follows.
     *
     * @return {@code false} if the task already ended or is unknown
     */
    static native boolean cancel(long task);
}
