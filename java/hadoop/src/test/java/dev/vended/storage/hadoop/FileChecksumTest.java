package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.LocalS3Server;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link VendedFileSystem#getFileChecksum}: the stored full-object checksum, equal for copies of
 * the same bytes written in different ways, different for other bytes, {@code null} for
 * directories and with checksums off.
 */
@Timeout(120)
class FileChecksumTest {

    private static final String BUCKET = "checksum-bucket";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static FileSystem fs(boolean checksums) throws IOException {
        Configuration c = VendedFileSystemTest.conf(server);
        String name = checksums ? "sums" : "nosums";
        VendedFileSystemTest.table(c, server, name, "s3a://" + BUCKET + "/" + name + "/", null);
        if (!checksums) {
            c.set("vended.storage.table." + name + ".options.checksums", "false");
        }
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(FileSystem fs, Path p, byte[] data, int pieces) throws IOException {
        try (FSDataOutputStream out = fs.create(p, true)) {
            int step = Math.max(1, data.length / pieces);
            for (int off = 0; off < data.length; off += step) {
                out.write(data, off, Math.min(step, data.length - off));
            }
        }
    }

    @Test
    void copiesOfTheSameBytesHaveEqualChecksumsAndOtherBytesDoNot() throws Exception {
        try (FileSystem fs = fs(true)) {
            byte[] data = bytes(300_000, 1);
            Path a = new Path("s3a://" + BUCKET + "/sums/a.bin");
            Path b = new Path("s3a://" + BUCKET + "/sums/copy/b.bin");
            Path other = new Path("s3a://" + BUCKET + "/sums/other.bin");
            write(fs, a, data, 1);
            write(fs, b, data, 7);
            write(fs, other, bytes(300_000, 2), 1);
            FileChecksum ca = fs.getFileChecksum(a);
            assertThat(ca).isNotNull();
            assertThat(ca.getAlgorithmName()).isEqualTo("CRC64NVME");
            assertThat(ca.getLength()).isEqualTo(8);
            assertThat(fs.getFileChecksum(b)).isEqualTo(ca);
            assertThat(fs.getFileChecksum(other)).isNotEqualTo(ca);
            // Writable round trip, as Hadoop ships checksums between processes.
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            ca.write(new DataOutputStream(buffer));
            VendedFileChecksum back = new VendedFileChecksum();
            back.readFields(new DataInputStream(new ByteArrayInputStream(buffer.toByteArray())));
            assertThat(back).isEqualTo(ca).hasSameHashCodeAs(ca);
            assertThat(back.toString()).startsWith("CRC64NVME:");
            // A directory has none; a missing file is not found.
            assertThat(fs.getFileChecksum(new Path("s3a://" + BUCKET + "/sums/copy"))).isNull();
            assertThatThrownBy(() -> fs.getFileChecksum(new Path("s3a://" + BUCKET + "/sums/none.bin")))
                    .isInstanceOf(FileNotFoundException.class);
        }
    }

    @Test
    void withChecksumsOffThereIsNone() throws Exception {
        try (FileSystem fs = fs(false)) {
            Path p = new Path("s3a://" + BUCKET + "/nosums/a.bin");
            write(fs, p, bytes(1000, 3), 1);
            assertThat(fs.getFileChecksum(p)).isNull();
        }
    }
}
