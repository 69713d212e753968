package dev.vended.storage.delta.kernel;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;
import dev.vended.storage.WriteOptions;

import io.delta.kernel.defaults.engine.fileio.OutputFile;
import io.delta.kernel.defaults.engine.fileio.PositionOutputStream;
import io.delta.kernel.utils.CloseableIterator;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Kernel's {@link OutputFile} for one object. An object store never shows a partly written object,
 * so every write here is atomic; "do not replace" is the library's create-only write ({@link
 * WriteOptions#withCreateOnly()}: one conditional PUT for an object up to one part, a conditional
 * completion for a multipart one), decided at the store, never an existence check first.
 */
final class KernelOutputFile implements OutputFile {

    private final ObjectStore store;
    private final String key;
    private final String path;

    KernelOutputFile(ObjectStore store, String key, String path) {
        this.store = store;
        this.key = key;
        this.path = path;
    }

    @Override
    public String path() {
        return path;
    }

    /**
     * Opens a stream writing the object. As Kernel's Hadoop implementation does, {@code
     * atomicWrite} ({@code true} for checkpoint Parquet files) also means "do not replace": its
     * {@code close()} then throws {@link java.nio.file.FileAlreadyExistsException} when the object
     * exists. With {@code false} (data files) an existing object is replaced.
     *
     * @param atomicWrite create only
     * @return the stream; the object appears when it is closed
     * @throws IOException if the upload cannot be started
     */
    @Override
    public PositionOutputStream create(boolean atomicWrite) throws IOException {
        return new KernelPositionOutputStream(path, open(!atomicWrite));
    }

    /**
     * Writes {@code data}, each element followed by {@code \n} (as Delta's log stores write a
     * commit), as one object, and closes {@code data}. Streams: memory stays bounded by the
     * library's part buffers whatever the size.
     *
     * @param data the lines, closed when this returns or throws
     * @param overwrite whether to replace an existing object
     * @throws java.nio.file.FileAlreadyExistsException if {@code overwrite} is false and the
     *     object exists (nothing is written)
     * @throws IOException for other failures; an iterator that throws aborts the upload, so no
     *     object is created
     */
    @Override
    public void writeAtomically(CloseableIterator<String> data, boolean overwrite)
            throws IOException {
        try (data) {
            write(
                    overwrite,
                    out -> {
                        while (data.hasNext()) { // bounded by the caller's finite iterator
                            out.write((data.next() + "\n").getBytes(StandardCharsets.UTF_8));
                        }
                    });
        }
    }

    /**
     * Writes what {@code in} holds as a create-only object (for {@link
     * VendedKernelFileIO#copyFileAtomically}); a failed read aborts the upload.
     *
     * @param in the source, read to its end (not closed)
     * @throws java.nio.file.FileAlreadyExistsException if the object exists (nothing is written)
     * @throws IOException for other failures
     */
    void copyFrom(InputStream in) throws IOException {
        write(false, in::transferTo);
    }

    /** What one write puts into the stream. */
    private interface Body {
        void writeTo(OutputStream out) throws IOException;
    }

    /** Opens the upload, runs {@code body}, completes it; aborts it if {@code body} fails. */
    private void write(boolean overwrite, Body body) throws IOException {
        MultipartOutputStream out = open(overwrite);
        try {
            body.writeTo(out);
        } catch (IOException | RuntimeException | Error e) {
            abortQuietly(out, e);
            throw e;
        }
        try {
            out.close();
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    private MultipartOutputStream open(boolean overwrite) throws IOException {
        try {
            WriteOptions options =
                    overwrite ? WriteOptions.defaults() : WriteOptions.defaults().withCreateOnly();
            return store.openOutput(key, options);
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    private static void abortQuietly(MultipartOutputStream out, Throwable failure) {
        try {
            out.abort();
        } catch (StorageException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "KernelOutputFile{" + path + "}";
    }
}
