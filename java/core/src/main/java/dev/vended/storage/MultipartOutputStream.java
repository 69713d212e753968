package dev.vended.storage;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Writes one object, opened by {@link ObjectStore#openOutput(String, WriteOptions)}.
 *
 * <p>Bytes are gathered in a Java buffer of {@link #BUFFER_SIZE} bytes (so {@link #write(int)} and
 * small writes never cross JNI each) and handed to the native writer when it is full; writes of at
 * least that size go to the native writer directly. The native writer sends one PUT at {@link
 * #close()} when everything fits in one part, else runs a multipart upload whose parts upload
 * while the caller keeps writing (at most {@link WriteOptions#maxConcurrency()} at once; a write
 * blocks while that many are uploading). Every part is signed with the credential current when it
 * is sent; an upload may outlive any number of credential rotations.
 *
 * <p><b>Visibility.</b> Nothing is visible at the path until {@link #close()} returns normally.
 * {@link #flush()} makes nothing visible (it is a no-op). {@link #abort()}, a failed write or a
 * failed close abort the multipart upload once its parts in flight have ended, leaving no parts
 * behind; a stream that becomes unreachable without being closed is aborted the same way by a
 * {@link Cleaner}.
 *
 * <p><b>Parts left behind.</b> An abort needs a valid credential too. When it fails (typically the
 * credential expired while the provider fails, as in a catalog outage), the exception thrown keeps
 * its class and cause (for example {@link CredentialsException} caused by the provider's own
 * exception) and its message adds the location ({@code s3://bucket/key}), the upload id and that
 * the parts are still stored, invisible but billed; the abort is then retried in the background
 * with freshly fetched credentials (first after 1 s, the pause doubling to 30 s, for at most 10
 * minutes), and a warning naming the upload is logged if that fails too. Parts of a process killed
 * mid-upload are never aborted by this library: give the bucket a lifecycle rule that aborts
 * incomplete multipart uploads (S3: {@code AbortIncompleteMultipartUpload} with {@code
 * DaysAfterInitiation}, e.g. 1 day; GCS: the {@code AbortIncompleteMultipartUpload} lifecycle
 * action). On Azure an abort removes nothing: the blocks staged so far stay as the blob's
 * uncommitted blocks (Get Block List shows them, reads and listings do not) until Azure discards
 * them 7 days after staging; a failed close says so.
 *
 * <p><b>Errors.</b> A write after {@link #close()} or {@link #abort()} throws {@link IOException}
 * naming the path and the state. {@link #close()} is idempotent: after the first call (whatever its
 * outcome) it does nothing. A part size the store refuses is reported by {@link
 * ObjectStore#openOutput(String, WriteOptions)} as {@link InvalidOptionsException} naming {@code
 * part_size}. A failure of the native writer is rethrown as the {@link StorageException} subclass
 * the native side reported; the upload is then already aborted and later writes throw {@link
 * IOException} whose cause is that failure.
 *
 * <p>Not thread-safe.
 */
public final class MultipartOutputStream extends OutputStream {

    /** The Java-side buffer: 1 MiB. */
    public static final int BUFFER_SIZE = 1 << 20;

    private final String path;
    private final Writer writer;
    private final Cleaner.Cleanable cleanable;
    private byte[] buffer = new byte[BUFFER_SIZE];
    private int count;
    private long written;
    private String state; // null while open; "completed" / "aborted" / "failed"
    private IOException failure;
    private WriteResult result;

    /** The native handle; aborts the upload when run before completion. */
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

    MultipartOutputStream(String path, long handle) {
        this.path = path;
        this.writer = new Writer(handle);
        this.cleanable = ObjectStore.CLEANER.register(this, writer);
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
        if (len >= buffer.length) {
            drain();
            // Large writes go straight to the native writer, in buffer-sized calls so that the
            // native copy of each call stays bounded.
            int done = 0;
            while (done < len) {
                int k = Math.min(buffer.length, len - done);
                nativeWrite(b, off + done, k);
                done += k;
            }
            written += len;
            return;
        }
        int room = buffer.length - count;
        if (len > room) {
            System.arraycopy(b, off, buffer, count, room);
            count += room;
            drain();
            off += room;
            len -= room;
            written += room;
        }
        System.arraycopy(b, off, buffer, count, len);
        count += len;
        written += len;
        if (count == buffer.length) {
            drain();
        }
    }

    /**
     * Writes the remaining bytes of {@code src} (its position advances to its limit). A direct
     * buffer is handed to the native writer without an intermediate Java array.
     *
     * @param src the bytes to write
     * @throws IOException as {@link #write(byte[], int, int)}
     */
    public void write(ByteBuffer src) throws IOException {
        ensureOpen();
        int len = src.remaining();
        if (src.hasArray()) {
            write(src.array(), src.arrayOffset() + src.position(), len);
        } else if (src.isDirect() && len >= buffer.length) {
            drain();
            int at = src.position();
            try {
                NativeBridge.writerWriteDirect(writer.handle, src, at, len);
            } catch (StorageException | RuntimeException e) {
                throw fail(e);
            }
            written += len;
        } else {
            byte[] tmp = new byte[len];
            src.get(src.position(), tmp);
            write(tmp, 0, len);
        }
        src.position(src.position() + len);
    }

    /** Does nothing: data becomes visible only at {@link #close()}. */
    @Override
    public void flush() {}

    /**
     * Completes the object: hands the buffered bytes to the native writer, waits for every part and
     * completes the upload (or sends the single PUT). The object is visible once this returns.
     * Idempotent: later calls do nothing.
     *
     * @throws ObjectAlreadyExistsException in create-only mode when an object exists (the upload is
     *     aborted)
     * @throws PreconditionFailedException in if-match mode when the ETag differs (aborted)
     * @throws StorageException for other failures (aborted; if the abort failed too, the message
     *     names the location and upload id of the parts left, see the class description)
     */
    @Override
    public void close() throws IOException {
        if (state != null) {
            return;
        }
        drain(); // on failure the upload is already aborted and the state is "failed"
        String[] r;
        try {
            r = NativeBridge.writerClose(writer.handle); // releases the handle, also on failure
        } catch (StorageException | RuntimeException e) {
            throw fail(e);
        }
        state = "completed";
        buffer = null;
        cleanable.clean(); // no-op natively: the handle is already released
        result = WriteResult.fromNative(r);
    }

    /**
     * For {@link PendingOutputStream}: hands the buffered bytes to the native writer and waits for
     * every part like {@link #close()}, but returns the pending commit's JSON instead of completing
     * the upload. The stream is then closed ("completed": no more writes, {@link #abort()} throws).
     *
     * @return the pending commit as {@code PendingNative.closePending} returns it
     * @throws IOException if the stream is not open
     * @throws StorageException if a part failed (the upload is then aborted)
     */
    String closePending() throws IOException {
        ensureOpen();
        drain(); // on failure the upload is already aborted and the state is "failed"
        String json;
        try {
            json = PendingNative.closePending(writer.handle); // releases the handle, also on failure
        } catch (StorageException | RuntimeException e) {
            throw fail(e);
        }
        state = "completed";
        buffer = null;
        cleanable.clean(); // no-op natively: the handle is already released
        return json;
    }

    /**
     * Aborts the upload: nothing becomes visible and no parts are left (on Azure, staged blocks
     * stay uncommitted until Azure discards them; see the class description). Does nothing if the
     * stream was already aborted or failed (a failure aborts it already).
     *
     * @throws IllegalStateException if the stream was already completed by {@link #close()}
     * @throws StorageException if the store refused to abort the multipart upload; its message
     *     names the location and upload id, and the abort is retried in the background (the native
     *     handle is released in any case)
     */
    public void abort() throws StorageException {
        if ("completed".equals(state)) {
            throw new IllegalStateException(
                    "MultipartOutputStream of " + path + " is already completed; cannot abort");
        }
        if (state != null) {
            return;
        }
        state = "aborted";
        buffer = null;
        try {
            NativeBridge.writerAbort(writer.handle);
        } finally {
            cleanable.clean(); // no-op natively: the handle is released
        }
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
     * The completed object's ETag and version.
     *
     * @return the result, or {@code null} before a successful {@link #close()}
     */
    public WriteResult result() {
        return result;
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
        return "MultipartOutputStream{path="
                + path
                + ", written="
                + written
                + ", state="
                + (state == null ? "open" : state)
                + "}";
    }

    // ---------------------------------------------------------------------------------------

    private void ensureOpen() throws IOException {
        if (state != null) {
            IOException e =
                    new IOException(
                            "MultipartOutputStream of "
                                    + path
                                    + " is "
                                    + ("failed".equals(state) && failure != null
                                            ? "aborted after an earlier failure"
                                            : state)
                                    + "; no more bytes can be written");
            if (failure != null) {
                e.initCause(failure);
            }
            throw e;
        }
    }

    private void drain() throws IOException {
        if (count > 0) {
            nativeWrite(buffer, 0, count);
            count = 0;
        }
    }

    private void nativeWrite(byte[] b, int off, int len) throws IOException {
        try {
            NativeBridge.writerWrite(writer.handle, b, off, len);
        } catch (StorageException | RuntimeException e) {
            throw fail(e);
        }
    }

    /** Aborts after a failure and returns (or rethrows) it. */
    private IOException fail(Exception e) {
        state = "failed";
        buffer = null;
        cleanable.clean();
        if (e instanceof StorageException) {
            failure = (StorageException) e;
            return failure;
        }
        failure = new StorageException("writing " + path + " failed: " + e, e);
        if (e instanceof RuntimeException) {
            throw (RuntimeException) e;
        }
        return failure;
    }
}
