package dev.vended.storage;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Writes one object as a multipart upload that {@link #close()} does <em>not</em> complete: it
 * returns a {@link PendingCommit} (see {@link #pendingCommit()}) that {@link
 * PendingCommits#commit(PendingCommit)} completes later. Nothing is visible at the path before
 * that. The upload starts when the stream is opened; parts of the part size upload while the
 * caller writes. Writes go through a {@link MultipartOutputStream} (its buffering, direct
 * writes and failure handling), whose completion this stream replaces. Not
 * thread-safe. A stream dropped without {@code close()} or {@link #abort()} aborts its upload when
 * garbage-collected.
 */
public final class PendingOutputStream extends OutputStream {
    private final MultipartOutputStream out;
    private final Consumer<PendingCommit> onClose;
    private PendingCommit pending;

    PendingOutputStream(String path, long handle, Consumer<PendingCommit> onClose) {
        this.out = new MultipartOutputStream(path, handle);
        this.onClose = onClose;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
    }

    /**
     * Writes the remaining bytes of {@code src} (its position advances to its limit); see {@link
     * MultipartOutputStream#write(ByteBuffer)}.
     *
     * @param src the bytes to write
     * @throws IOException as {@link #write(byte[], int, int)}
     */
    public void write(ByteBuffer src) throws IOException {
        out.write(src);
    }

    /** Does nothing: data becomes visible only when the pending commit is committed. */
    @Override
    public void flush() {}

    /**
     * Uploads the rest and waits for every part, without completing the upload; the {@link
     * PendingCommit} is then available from {@link #pendingCommit()} (and handed to the consumer
     * given when opening). Idempotent.
     *
     * @throws StorageException if a part failed (the upload is then aborted)
     * @throws IOException if the stream was aborted or failed earlier
     */
    @Override
    public void close() throws IOException {
        if (pending != null) {
            return;
        }
        pending = PendingCommit.fromJson(out.closePending());
        if (onClose != null) {
            onClose.accept(pending);
        }
    }

    /**
     * Aborts the upload: nothing is left (on Azure, staged blocks stay uncommitted until Azure
     * discards them after 7 days). Does nothing once closed or aborted.
     *
     * @throws StorageException if the store refused the abort
     */
    public void abort() throws StorageException {
        if (pending != null) {
            return;
        }
        out.abort();
    }

    /**
     * The pending commit, once {@link #close()} returned.
     *
     * @return the pending commit, or {@code null} before
     */
    public PendingCommit pendingCommit() {
        return pending;
    }

    /**
     * The bytes written so far.
     *
     * @return bytes
     */
    public long bytesWritten() {
        return out.bytesWritten();
    }

    /**
     * The object's path, relative to the store's prefix.
     *
     * @return the path
     */
    public String path() {
        return out.path();
    }

    @Override
    public String toString() {
        return "PendingOutputStream{path=" + out.path() + ", written=" + out.bytesWritten() + "}";
    }
}
