package dev.vended.storage.iceberg;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectAlreadyExistsException;

import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.io.PositionOutputStream;

import java.io.IOException;

/** Iceberg's {@link PositionOutputStream} on the library's {@link MultipartOutputStream}. */
final class VendedPositionOutputStream extends PositionOutputStream {

    private final String location;
    private final MultipartOutputStream out;

    VendedPositionOutputStream(String location, MultipartOutputStream out) {
        this.location = location;
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
     * @throws AlreadyExistsException for {@code create()} when the file exists
     * @throws IOException when the write fails (the upload is aborted)
     */
    @Override
    public void close() throws IOException {
        try {
            out.close();
        } catch (ObjectAlreadyExistsException e) {
            throw new AlreadyExistsException(e, "Location already exists: %s", location);
        }
    }

    @Override
    public String toString() {
        return location;
    }
}
