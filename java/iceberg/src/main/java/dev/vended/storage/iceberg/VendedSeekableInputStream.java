package dev.vended.storage.iceberg;

import dev.vended.storage.SeekableObjectInputStream;

import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.IOException;

/**
 * Iceberg's {@link SeekableInputStream} (and {@link RangeReadable}, for Parquet footers and
 * vectored reads) on the library's {@link SeekableObjectInputStream}, whose read policy is
 * adaptive: a scan is one GET, random access ranged GETs.
 */
final class VendedSeekableInputStream extends SeekableInputStream implements RangeReadable {

    private final SeekableObjectInputStream in;

    VendedSeekableInputStream(SeekableObjectInputStream in) {
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
        return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return in.read(b, off, len);
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
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
        in.readFully(position, buffer, offset, length);
    }

    @Override
    public int readTail(byte[] buffer, int offset, int length) throws IOException {
        long size = in.length();
        int n = (int) Math.min(length, size);
        in.readFully(size - n, buffer, offset, n);
        return n;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    @Override
    public String toString() {
        return in.toString();
    }
}
