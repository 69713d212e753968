package dev.vended.storage.hadoop;

import dev.vended.storage.SeekableObjectInputStream;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;

import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;

/**
 * Hadoop's view of a {@link SeekableObjectInputStream}: {@code Seekable}, {@code
 * PositionedReadable} (positioned reads do not move the position) and {@link ByteBufferReadable}.
 * The read-ahead block of the underlying stream serves small and one-byte reads. Not thread-safe,
 * like every Hadoop input stream.
 */
final class VendedInputStream extends FSInputStream implements ByteBufferReadable {

    private final SeekableObjectInputStream in;
    private final FileSystem.Statistics statistics;
    private final String uri;
    private volatile boolean closed;

    VendedInputStream(SeekableObjectInputStream in, FileSystem.Statistics statistics, String uri) {
        this.in = in;
        this.statistics = statistics;
        this.uri = uri;
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + ": " + uri);
        }
    }

    private void count(long n) {
        if (n > 0 && statistics != null) {
            statistics.incrementBytesRead(n);
        }
    }

    @Override
    public synchronized void seek(long pos) throws IOException {
        ensureOpen();
        if (pos < 0) {
            throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + pos + ": " + uri);
        }
        if (pos > in.length()) {
            throw new EOFException(
                    FSExceptionMessages.CANNOT_SEEK_PAST_EOF + " " + pos + " > " + in.length() + ": " + uri);
        }
        in.seek(pos);
    }

    @Override
    public synchronized long getPos() throws IOException {
        ensureOpen();
        return in.getPos();
    }

    @Override
    public boolean seekToNewSource(long targetPos) {
        return false;
    }

    @Override
    public synchronized int read() throws IOException {
        ensureOpen();
        int b = in.read();
        if (b >= 0) {
            count(1);
        }
        return b;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        validatePositionedReadArgs(in.getPos(), b, off, len);
        if (len == 0) {
            return 0;
        }
        int n = in.read(b, off, len);
        count(n);
        return n;
    }

    @Override
    public synchronized int read(ByteBuffer dst) throws IOException {
        ensureOpen();
        int n = in.read(dst);
        count(n);
        return n;
    }

    /** Reads up to {@code len} bytes at {@code position}; the stream's position does not move. */
    @Override
    public synchronized int read(long position, byte[] buffer, int offset, int length)
            throws IOException {
        ensureOpen();
        validatePositionedReadArgs(position, buffer, offset, length);
        if (length == 0) {
            return 0;
        }
        if (position >= in.length()) {
            return -1;
        }
        int n = (int) Math.min(length, in.length() - position);
        in.readFully(position, buffer, offset, n);
        count(n);
        return n;
    }

    @Override
    public synchronized void readFully(long position, byte[] buffer, int offset, int length)
            throws IOException {
        ensureOpen();
        validatePositionedReadArgs(position, buffer, offset, length);
        if (length == 0) {
            return;
        }
        if (position + length > in.length()) {
            throw new EOFException(
                    FSExceptionMessages.EOF_IN_READ_FULLY
                            + " reading "
                            + length
                            + " bytes at "
                            + position
                            + " of "
                            + in.length()
                            + ": "
                            + uri);
        }
        in.readFully(position, buffer, offset, length);
        count(length);
    }

    @Override
    public synchronized long skip(long n) throws IOException {
        ensureOpen();
        return in.skip(n);
    }

    @Override
    public synchronized int available() throws IOException {
        ensureOpen();
        long left = in.length() - in.getPos();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, left));
    }

    @Override
    public void close() {
        closed = true;
        in.close();
    }

    @Override
    public String toString() {
        return "VendedInputStream{" + uri + ", closed=" + closed + "}";
    }
}
