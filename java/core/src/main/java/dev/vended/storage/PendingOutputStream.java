package dev.vended.storage;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Writes one object as a multipart upload that {@link #close()} does <em>not</em> complete: it
 * returns a {@link PendingCommit} (see {@link #pendingCommit()}) that {@link
 * PendingCommits#commit(PendingCommit)} completes later. Nothing is visible at the path before
 * that. The upload starts when the stream is opened; parts of the part size upload while the
 * caller writes. Writes are buffered in Java ({@link MultipartOutputStream#BUFFER_SIZE}). Not
 * thread-safe. A stream dropped without {@code close()} or {@link #abort()} aborts its upload when
 * garbage-collected.
 */
public final class PendingOutputStream extends OutputStream {
    private final String path;
    private final Writer writer;
    private final Cleaner.Cleanable cleanable;
    private final Consumer<PendingCommit> onClose;
    private byte[] buffer = new byte[MultipartOutputStream.BUFFER_SIZE];
    private int count;
    private long written;
    private boolean closed;
    private PendingCommit pending;

    private static final class Writer implements Runnable {
        private final long handle;

        Writer(long handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            try {
                NativeBridge.writerAbort(handle); // no-op once closed
            } catch (Exception e) {
                // A Cleaner must not throw; the native side releases the handle in any case.
            }
        }
    }

    PendingOutputStream(String path, long handle, Consumer<PendingCommit> onClose) {
        this.path = path;
        this.writer = new Writer(handle);
        this.cleanable = ObjectStore.CLEANER.register(this, writer);
        this.onClose = onClose;
    }

    @Override
    public void write(int b) throws IOException {
        ensureOpen();
        buffer[count++] = (byte) b;
        written++;
        if (count == buffer.length) {
            drain();
        }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        ensureOpen();
        while (len > 0) {
            int k = Math.min(buffer.length - count, len);
            System.arraycopy(b, off, buffer, count, k);
            count += k;
            off += k;
            len -= k;
            written += k;
            if (count == buffer.length) {
                drain();
            }
        }
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
     * @throws IOException if the stream was aborted
     */
    @Override
    public void close() throws IOException {
        if (pending != null) {
            return;
        }
        ensureOpen();
        try {
            drain();
            String json = PendingNative.closePending(writer.handle);
            pending = PendingCommit.fromJson(json);
        } finally {
            closed = true;
            buffer = null;
            cleanable.clean(); // no-op natively once released
        }
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
        if (closed) {
            return;
        }
        closed = true;
        buffer = null;
        try {
            NativeBridge.writerAbort(writer.handle);
        } finally {
            cleanable.clean();
        }
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
        return written;
    }

    /**
     * The object's path, relative to the store's prefix.
     *
     * @return the path
     */
    public String path() {
        return path;
    }

    @Override
    public String toString() {
        return "PendingOutputStream{path=" + path + ", written=" + written + "}";
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException(
                    "PendingOutputStream of " + path + " is closed; no more bytes can be written");
        }
    }

    private void drain() throws IOException {
        if (count > 0) {
            try {
                NativeBridge.writerWrite(writer.handle, buffer, 0, count);
            } catch (StorageException | RuntimeException e) {
                closed = true;
                cleanable.clean();
                throw e;
            }
            count = 0;
        }
    }
}
