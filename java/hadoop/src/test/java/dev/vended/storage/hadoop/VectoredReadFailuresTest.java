package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.PreconditionFailedException;
import dev.vended.storage.testkit.LocalS3Server;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How {@code readVectored} fails. On an open stream it reads the version the stream was opened at:
 * once the object is replaced, its ranges fail with the stream's change exception ({@link
 * PreconditionFailedException}), as the stream's own reads do, instead of handing a Parquet reader
 * a footer of one version and column chunks of another. An allocator that throws midway fails
 * every range and gets the buffers it already gave back through {@code release}.
 */
class VectoredReadFailuresTest {

    private static final String BUCKET = "vectored-failures";
    private static LocalS3Server server;
    private static FileSystem fs;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "versions", "s3a://" + BUCKET + "/t/", null);
        fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    @AfterAll
    static void stop() throws IOException {
        if (fs != null) {
            fs.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static void write(Path p, byte seed) throws IOException {
        byte[] data = new byte[3 << 20];
        java.util.Arrays.fill(data, seed);
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(data);
        }
    }

    private static List<FileRange> ranges() {
        // Two GETs: the ranges are 2 MiB apart.
        return List.of(FileRange.createFileRange(0, 100), FileRange.createFileRange(2 << 20, 100));
    }

    @Test
    void rangesOfAReplacedObjectFailInsteadOfMixingVersions() throws Exception {
        Path p = new Path("s3a://" + BUCKET + "/t/replaced.bin");
        write(p, (byte) 1);
        try (FSDataInputStream in = fs.open(p)) {
            List<FileRange> before = ranges();
            in.readVectored(before, ByteBuffer::allocate);
            for (FileRange r : before) {
                assertThat(r.getData().get(60, TimeUnit.SECONDS).get(50)).isEqualTo((byte) 1);
            }
            write(p, (byte) 2);
            List<FileRange> after = ranges();
            in.readVectored(after, ByteBuffer::allocate);
            for (FileRange r : after) {
                assertThatThrownBy(() -> r.getData().get(60, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(PreconditionFailedException.class);
            }
        }
        // A stream opened after the change reads the new version.
        try (FSDataInputStream in = fs.open(p)) {
            List<FileRange> fresh = ranges();
            in.readVectored(fresh, ByteBuffer::allocate);
            for (FileRange r : fresh) {
                assertThat(r.getData().get(60, TimeUnit.SECONDS).get(50)).isEqualTo((byte) 2);
            }
        }
    }

    @Test
    void anAllocatorThatThrowsMidwayGetsItsBuffersBackThroughRelease() throws Exception {
        Path p = new Path("s3a://" + BUCKET + "/t/allocator.bin");
        write(p, (byte) 3);
        List<ByteBuffer> given = new ArrayList<>();
        List<ByteBuffer> released = new ArrayList<>();
        IntFunction<ByteBuffer> allocate =
                n -> {
                    synchronized (given) {
                        if (given.size() == 1) {
                            throw new IllegalStateException("pool exhausted");
                        }
                        ByteBuffer b = ByteBuffer.allocate(n);
                        given.add(b);
                        return b;
                    }
                };
        try (FSDataInputStream in = fs.open(p)) {
            List<FileRange> two = ranges();
            in.readVectored(
                    two,
                    allocate,
                    b -> {
                        synchronized (released) {
                            released.add(b);
                        }
                    });
            for (FileRange r : two) {
                assertThatThrownBy(() -> r.getData().get(60, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasStackTraceContaining("pool exhausted");
            }
        }
        synchronized (released) {
            assertThat(given).hasSize(1);
            assertThat(released).hasSize(1);
            assertThat(released.get(0)).isSameAs(given.get(0));
        }
    }
}
