package dev.vended.storage.hadoop;

import static dev.vended.storage.hadoop.PathResolver.mayBeObject;
import static dev.vended.storage.hadoop.PathResolver.notFound;

import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.StoredChecksum;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The checksum {@link VendedFileSystem#getFileChecksum} returns: the full-object checksum the
 * service stores for a file (S3 {@code CRC64NVME} or a full-object {@code CRC32C}, Azure {@code
 * MD5}, GCS {@code CRC32C}), read with one {@code HEAD}. It depends on the file's bytes only, not
 * on how they were uploaded (single request or parts of any size), so two copies of the same bytes
 * on the same cloud have equal checksums: {@code distcp -checksum} (and {@link #equals}) compares
 * them by algorithm name and bytes. It is not comparable with HDFS's checksums (another algorithm
 * name), and a file without a stored checksum has none ({@code null}, which distcp skips).
 */
public final class VendedFileChecksum extends FileChecksum {

    private String algorithm;
    private byte[] bytes;

    /** An empty checksum, for {@link #readFields} (Hadoop's {@code Writable} contract). */
    public VendedFileChecksum() {
        this("", new byte[0]);
    }

    /**
     * A checksum.
     *
     * @param algorithm the algorithm's name, e.g. {@code CRC64NVME}
     * @param bytes the checksum's bytes (CRCs big-endian); copied
     */
    public VendedFileChecksum(String algorithm, byte[] bytes) {
        this.algorithm = algorithm;
        this.bytes = bytes.clone();
    }

    /**
     * The stored checksum of the file at {@code f}, or {@code null} for a directory, a table's
     * root, a file the service stores no checksum for, and with storage option {@code
     * checksums=false}.
     *
     * @throws java.io.FileNotFoundException when nothing is stored at the path
     * @throws IOException for other failures of the {@code HEAD}
     */
    static VendedFileChecksum of(FileSystem fs, PathResolver paths, Path f) throws IOException {
        PathResolver.Target t = paths.resolve(f);
        if (t.table() == null || !mayBeObject(t.table(), t.key())) {
            return null;
        }
        try {
            StoredChecksum c = paths.store(t).storedChecksum(t.key());
            return c == null ? null : new VendedFileChecksum(c.algorithm(), c.bytes());
        } catch (ObjectNotFoundException e) {
            if (fs.getFileStatus(f).isDirectory()) {
                return null; // a directory (a key with children), not an object
            }
            throw notFound(t.path(), e);
        }
    }

    @Override
    public String getAlgorithmName() {
        return algorithm;
    }

    @Override
    public int getLength() {
        return bytes.length;
    }

    @Override
    public byte[] getBytes() {
        return bytes.clone();
    }

    @Override
    public void write(DataOutput out) throws IOException {
        out.writeUTF(algorithm);
        out.writeInt(bytes.length);
        out.write(bytes);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
        algorithm = in.readUTF();
        int n = in.readInt();
        if (n < 0 || n > 64) {
            throw new IOException("not a VendedFileChecksum: " + n + " bytes");
        }
        bytes = new byte[n];
        in.readFully(bytes);
    }

    @Override
    public String toString() {
        return algorithm + ":" + java.util.Base64.getEncoder().encodeToString(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileChecksum f
                && algorithm.equals(f.getAlgorithmName())
                && Arrays.equals(bytes, f.getBytes());
    }

    @Override
    public int hashCode() {
        return algorithm.hashCode() * 31 + Arrays.hashCode(bytes);
    }
}
