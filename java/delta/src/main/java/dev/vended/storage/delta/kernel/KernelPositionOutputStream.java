package dev.vended.storage.delta.kernel;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.StorageException;

import io.delta.kernel.defaults.engine.fileio.PositionOutputStream;

import java.io.IOException;

/**
 * Kernel's {@link PositionOutputStream} on the library's {@link MultipartOutputStream}: the object
 * becomes visible, whole, when {@link #close()} returns, never partly written.
 */
final class KernelPositionOutputStream extends PositionOutputStream {

    private final String path;
    private final MultipartOutputStream out;

    KernelPositionOutputStream(String path, MultipartOutputStream out) {
        this.path = path;
        this.out = out;
    }

    @Override
    public long getPos() {
        return out.bytesWritten();
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
    public void flush() {
        out.flush();
    }

    /**
     * Completes the write.
     *
     * @throws java.nio.file.FileAlreadyExistsException for a create-only file whose path exists
     *     (nothing is written)
     * @throws IOException when the write fails (the upload is aborted)
     */
    @Override
    public void close() throws IOException {
        try {
            out.close();
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    @Override
    public String toString() {
        return "KernelPositionOutputStream{" + path + "}";
    }
}
