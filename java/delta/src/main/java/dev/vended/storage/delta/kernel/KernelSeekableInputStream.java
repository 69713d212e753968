package dev.vended.storage.delta.kernel;

import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.SeekableObjectInputStream;

import io.delta.kernel.defaults.engine.fileio.SeekableInputStream;

import java.io.EOFException;
import java.io.IOException;
import java.util.Objects;

/**
 * Kernel's {@link SeekableInputStream} on the library's {@link SeekableObjectInputStream}: every
 * ranged GET is signed with the credential current when it is sent, and the adaptive read policy
 * makes a JSON log file one streaming GET and a Parquet footer and its column chunks ranged GETs.
 * An object found missing by a read (its size was known, so no HEAD was sent at open) is a {@link
 * java.io.FileNotFoundException}.
 */
final class KernelSeekableInputStream extends SeekableInputStream {

    private final String path;
    private final SeekableObjectInputStream in;

    KernelSeekableInputStream(String path, SeekableObjectInputStream in) {
        this.path = path;
        this.in = in;
    }

    @Override
    public long getPos() {
        return in.getPos();
    }

    @Override
    public void seek(long newPos) throws IOException {
        in.seek(newPos);
    }

    @Override
    public int read() throws IOException {
        try {
            return in.read();
        } catch (ObjectNotFoundException e) {
            throw KernelErrors.notFound(path, e);
        }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        try {
            return in.read(b, off, len);
        } catch (ObjectNotFoundException e) {
            throw KernelErrors.notFound(path, e);
        }
    }

    /**
     * Reads exactly {@code len} bytes from the current position, which advances by {@code len}.
     *
     * @throws EOFException if the object ends first (naming the path, the position and the size)
     */
    @Override
    public void readFully(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        long start = in.getPos();
        int done = 0;
        while (done < len) { // each read returns at least one byte or -1
            int n = read(b, off + done, len - done);
            if (n < 0) {
                throw new EOFException(
                        String.format(
                                "cannot read %d bytes at position %d: %s ends at %d bytes",
                                len, start, path, in.length()));
            }
            done += n;
        }
    }

    @Override
    public long skip(long n) throws IOException {
        return in.skip(n);
    }

    @Override
    public int available() throws IOException {
        return in.available();
    }

    @Override
    public void close() {
        in.close();
    }

    @Override
    public String toString() {
        return "KernelSeekableInputStream{" + path + ", pos=" + in.getPos() + "}";
    }
}
