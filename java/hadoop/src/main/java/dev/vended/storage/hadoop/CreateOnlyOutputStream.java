package dev.vended.storage.hadoop;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectAlreadyExistsException;

import java.io.IOException;
import java.io.OutputStream;

import org.apache.hadoop.fs.FileAlreadyExistsException;

/**
 * The stream of {@code create(path, overwrite=false)}: a core stream in create-only mode ({@code
 * WriteOptions.withCreateOnly()}), whose {@link #close()} turns the store's refusal into Hadoop's
 * {@link FileAlreadyExistsException}.
 *
 * <p>Atomicity is the core's: an object of at most one part (5 MiB by default) is written with
 * one PUT carrying {@code If-None-Match: *}; a larger one is a multipart upload checked with a
 * HEAD before completing (an early refusal) and completed with a request carrying the condition,
 * so that the store itself refuses the second completion. Of two writers racing on a path exactly
 * one wins and the other's {@link #close()} fails (its upload aborted) on S3 (tested against the
 * local endpoint), on Azure with a SAS or bearer token (tested against Azurite), and on GCS
 * ({@code x-goog-if-generation-match: 0}; not tested against GCS or an emulator). Not atomic,
 * the HEAD being the only guard, so that two multipart writers closing at once can both succeed
 * (the last one's bytes staying): Azure with a shared key (its signature covers the condition
 * header, which the native {@code object_store} 0.14 cannot add), and S3-compatible servers that
 * ignore conditions on {@code CompleteMultipartUpload}. A completion whose answer was lost is
 * retried: if the lost attempt had completed, {@link #close()} may fail although this stream's
 * bytes were stored.
 */
final class CreateOnlyOutputStream extends OutputStream {

    private final MultipartOutputStream out;
    private final String uri;

    CreateOnlyOutputStream(MultipartOutputStream out, String uri) {
        this.out = out;
        this.uri = uri;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    /**
     * Completes the object.
     *
     * @throws FileAlreadyExistsException if an object appeared at the path since the stream was
     *     opened (another writer won); nothing of this stream's is stored then
     * @throws IOException if the upload fails
     */
    @Override
    public void close() throws IOException {
        try {
            out.close();
        } catch (ObjectAlreadyExistsException e) {
            FileAlreadyExistsException f =
                    new FileAlreadyExistsException(
                            uri + " was created by another writer while this one wrote it"
                                    + " (create with overwrite=false)");
            f.initCause(e);
            throw f;
        }
    }

    @Override
    public String toString() {
        return "CreateOnlyOutputStream{" + uri + "}";
    }
}
