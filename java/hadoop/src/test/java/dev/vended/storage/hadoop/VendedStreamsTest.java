package dev.vended.storage.hadoop;

import static org.apache.hadoop.fs.Options.OpenFileOptions.FS_OPTION_OPENFILE_LENGTH;
import static org.apache.hadoop.fs.Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.ReadPolicy;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StoreStatisticNames;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.util.functional.FutureIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Vectored reads, {@code openFile} options, capabilities, IOStatistics and {@code
 * create(overwrite=false)} of {@link VendedFileSystem}, against the local endpoint, whose request
 * log gives the GETs and HEADs sent.
 */
class VendedStreamsTest {

    private static final String BUCKET = "streams-test";
    private static final int TIMEOUT_S = 60;
    private static LocalS3Server server;
    private static FileSystem fs;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "streams", "s3a://" + BUCKET + "/t/", null);
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

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static Path write(String name, byte[] data) throws IOException {
        Path p = new Path("s3a://" + BUCKET + "/t/" + name);
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(data);
        }
        return p;
    }

    /** Requests of {@code method} on the object of {@code p} logged after {@code from}. */
    private static long requests(String method, Path p, int from) throws IOException {
        String key = p.toUri().getPath().substring(1);
        List<RequestRecord> all = server.requests();
        return all.subList(from, all.size()).stream()
                .filter(r -> method.equals(r.method()) && key.equals(r.key()))
                .count();
    }

    private static int logged() throws IOException {
        return server.requests().size();
    }

    private static void assertRange(FileRange r, byte[] data) throws Exception {
        ByteBuffer b = r.getData().get(TIMEOUT_S, TimeUnit.SECONDS);
        assertThat(b.remaining()).as("range %s", r).isEqualTo(r.getLength());
        byte[] got = new byte[b.remaining()];
        b.get(got);
        byte[] want = new byte[r.getLength()];
        System.arraycopy(data, (int) r.getOffset(), want, 0, want.length);
        assertThat(got).as("range %s", r).isEqualTo(want);
    }

    @Test
    void readVectoredMergesOnlyCloseRangesAndFailsOnlyThePastEofRange() throws Exception {
        byte[] data = bytes(6 << 20, 3);
        Path p = write("vectored.bin", data);
        for (boolean direct : new boolean[] {false, true}) {
            List<FileRange> near = new ArrayList<>();
            // adjacent, nearby (gaps of a few KiB) and unsorted
            near.add(FileRange.createFileRange(1000, 100));
            near.add(FileRange.createFileRange(0, 1000));
            near.add(FileRange.createFileRange(1100, 4096));
            for (int i = 0; i < 12; i++) {
                near.add(FileRange.createFileRange(20_000 + i * 10_000, 777 + i));
            }
            FileRange far = FileRange.createFileRange(5L << 20, 65_536);
            FileRange last = FileRange.createFileRange(data.length - 30, 10);
            FileRange pastEof = FileRange.createFileRange(data.length - 5, 10);
            FileRange empty = FileRange.createFileRange(300_000, 0);
            List<FileRange> all = new ArrayList<>(near);
            all.add(far);
            all.add(last);
            all.add(pastEof);
            all.add(empty);
            int from = logged();
            try (FSDataInputStream in = fs.open(p)) {
                assertThat(in.hasCapability(StreamCapabilities.VECTOREDIO)).isTrue();
                long before = in.getPos();
                in.readVectored(all, direct ? ByteBuffer::allocateDirect : ByteBuffer::allocate);
                for (FileRange r : all) {
                    if (r == pastEof) {
                        assertThatThrownBy(() -> r.getData().get(TIMEOUT_S, TimeUnit.SECONDS))
                                .isInstanceOf(ExecutionException.class)
                                .hasCauseInstanceOf(EOFException.class);
                    } else {
                        assertRange(r, data);
                    }
                }
                assertThat(in.getPos()).isEqualTo(before);
                long want = 0;
                for (FileRange r : all) {
                    want += r == pastEof ? 0 : r.getLength();
                }
                IOStatistics s = ((IOStatisticsSource) in.getWrappedStream()).getIOStatistics();
                assertThat(s.counters())
                        .containsEntry(StreamStatisticNames.STREAM_READ_BYTES, want)
                        .containsEntry(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS, 1L)
                        .containsEntry(
                                StreamStatisticNames.STREAM_READ_VECTORED_INCOMING_RANGES,
                                (long) all.size());
            }
            long gets = requests("GET", p, from);
            // S3A's rule (min seek 4 KiB, merged GETs up to 1 MiB): the 3 adjacent ranges at 0
            // share a GET; the 12 ranges ~9 KiB apart, the far one and the last one (960 KiB
            // after it) get one each: the gaps are not fetched
            assertThat(gets).as("GETs for %d ranges", all.size()).isEqualTo(15);
            try (FSDataInputStream in = fs.open(p)) {
                assertThat(in.minSeekForVectorReads()).isEqualTo(4096);
                assertThat(in.maxReadSizeForVectorReads()).isEqualTo(1 << 20);
            }
        }
    }

    @Test
    void readVectoredFillsTheAllocatorsOwnBuffersOncePerRange() throws Exception {
        byte[] data = bytes(3 << 20, 11);
        Path p = write("vectored-alloc.bin", data);
        for (boolean direct : new boolean[] {false, true}) {
            List<FileRange> ranges = new ArrayList<>();
            ranges.add(FileRange.createFileRange(2L << 20, 700_000)); // one GET of its own
            ranges.add(FileRange.createFileRange(10, 5000));
            ranges.add(FileRange.createFileRange(6000, 100)); // merged with the one before
            List<ByteBuffer> allocated = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            IntFunction<ByteBuffer> allocate =
                    n -> {
                        ByteBuffer b = direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
                        synchronized (allocated) {
                            allocated.add(b);
                            sizes.add(n);
                        }
                        return b;
                    };
            try (FSDataInputStream in = fs.open(p)) {
                in.readVectored(ranges, allocate);
                for (FileRange r : ranges) {
                    assertRange(r, data);
                }
            }
            // Each range is in a buffer the allocator made (no other buffer, one per range, of
            // the range's size), not a copy handed over afterwards.
            assertThat(sizes).containsExactly(5000, 100, 700_000);
            assertThat(allocated).hasSize(3);
            for (FileRange r : ranges) {
                ByteBuffer got = r.getData().get(TIMEOUT_S, TimeUnit.SECONDS);
                assertThat(allocated).anySatisfy(b -> assertThat(b).isSameAs(got));
                assertThat(got.isDirect()).isEqualTo(direct);
            }
        }
        // An allocator whose buffer cannot take the range fails every range, naming the cause.
        List<FileRange> two = new ArrayList<>();
        two.add(FileRange.createFileRange(0, 100));
        two.add(FileRange.createFileRange(1 << 20, 100));
        try (FSDataInputStream in = fs.open(p)) {
            for (boolean direct : new boolean[] {false, true}) {
                in.readVectored(
                        two,
                        n ->
                                (direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n))
                                        .asReadOnlyBuffer());
                for (FileRange r : two) {
                    assertThatThrownBy(() -> r.getData().get(TIMEOUT_S, TimeUnit.SECONDS))
                            .isInstanceOf(ExecutionException.class)
                            .hasCauseInstanceOf(IllegalArgumentException.class)
                            .hasStackTraceContaining("read-only");
                }
            }
            in.readVectored(two, n -> ByteBuffer.allocate(n / 2));
            for (FileRange r : two) {
                assertThatThrownBy(() -> r.getData().get(TIMEOUT_S, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(IllegalArgumentException.class)
                        .hasStackTraceContaining("50 bytes remaining for a range of 100");
            }
        }
    }

    @Test
    void vectoredMergeRuleComesFromTheConfiguration() throws Exception {
        byte[] data = bytes(4 << 20, 5);
        Path p = write("vectored-conf.bin", data);
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "streams", "s3a://" + BUCKET + "/t/", null);
        c.set(VendedFileSystem.VECTORED_MIN_SEEK_KEY, "16k");
        c.set(VendedFileSystem.VECTORED_MAX_MERGED_KEY, "100k");
        try (FileSystem wide = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            List<FileRange> ranges = new ArrayList<>();
            // 20 ranges of 1,000 bytes 10,000 bytes apart (gaps 9,000 < 16 KiB): 100 KiB hold 10
            for (int i = 0; i < 20; i++) {
                ranges.add(FileRange.createFileRange(i * 11_000L, 1_000));
            }
            ranges.add(FileRange.createFileRange(2L << 20, 1_500_000)); // longer than 100 KiB
            int from = logged();
            try (FSDataInputStream in = wide.open(p)) {
                assertThat(in.minSeekForVectorReads()).isEqualTo(16 << 10);
                assertThat(in.maxReadSizeForVectorReads()).isEqualTo(100 << 10);
                in.readVectored(ranges, ByteBuffer::allocate);
                for (FileRange r : ranges) {
                    assertRange(r, data);
                }
            }
            // 2 merged GETs of 10 ranges each (~100 KiB), and the long range whole
            assertThat(requests("GET", p, from)).isEqualTo(3);
        }
    }

    @Test
    void readVectoredValidatesRangesAsHadoopDoes() throws Exception {
        Path p = write("validate.bin", bytes(10_000, 5));
        try (FSDataInputStream in = fs.open(p)) {
            List<FileRange> overlapping =
                    List.of(
                            FileRange.createFileRange(100, 500),
                            FileRange.createFileRange(400, 500));
            assertThatThrownBy(() -> in.readVectored(overlapping, ByteBuffer::allocate))
                    .isInstanceOf(IllegalArgumentException.class);
            List<FileRange> negativeLength = List.of(FileRange.createFileRange(0, -50));
            assertThatThrownBy(() -> in.readVectored(negativeLength, ByteBuffer::allocate))
                    .isInstanceOf(IllegalArgumentException.class);
            List<FileRange> negativeOffset = List.of(FileRange.createFileRange(-1, 50));
            assertThatThrownBy(() -> in.readVectored(negativeOffset, ByteBuffer::allocate))
                    .isInstanceOf(EOFException.class);
            List<FileRange> withNull = new ArrayList<>();
            withNull.add(FileRange.createFileRange(0, 10));
            withNull.add(null);
            assertThatThrownBy(() -> in.readVectored(withNull, ByteBuffer::allocate))
                    .isInstanceOf(NullPointerException.class);
        }
    }

    @Test
    void openFileWithALengthSendsNoHead() throws Exception {
        byte[] data = bytes(100_000, 9);
        Path p = write("openfile.bin", data);
        long headsBefore =
                ((IOStatisticsSource) fs).getIOStatistics().counters().get(
                        StoreStatisticNames.ACTION_HTTP_HEAD_REQUEST);
        int from = logged();
        byte[] back = new byte[data.length];
        try (FSDataInputStream in =
                FutureIO.awaitFuture(
                        fs.openFile(p)
                                .opt(FS_OPTION_OPENFILE_LENGTH, data.length)
                                .opt(FS_OPTION_OPENFILE_READ_POLICY, "unknown, parquet")
                                .build())) {
            in.readFully(0, back);
        }
        assertThat(back).isEqualTo(data);
        assertThat(requests("HEAD", p, from)).isZero();
        try (FSDataInputStream in =
                FutureIO.awaitFuture(fs.openFile(p).withFileStatus(fs.getFileStatus(p)).build())) {
            assertThat(in.read()).isEqualTo(data[0] & 0xff);
        }
        assertThat(requests("HEAD", p, from))
                .as("getFileStatus's own HEAD only")
                .isLessThanOrEqualTo(1);
        int mid = logged();
        try (FSDataInputStream in = fs.open(p)) {
            assertThat(in.read()).isEqualTo(data[0] & 0xff);
        }
        assertThat(requests("HEAD", p, mid)).as("open() sends its HEAD").isEqualTo(1);
        // the native count: every HEAD the endpoint saw (getFileStatus's and open()'s)
        assertThat(((IOStatisticsSource) fs).getIOStatistics().counters())
                .containsEntry(
                        StoreStatisticNames.ACTION_HTTP_HEAD_REQUEST,
                        headsBefore + requests("HEAD", p, from));
    }

    @Test
    void openFileRejectsUnknownMandatoryKeysAndMapsPolicies() throws Exception {
        Path p = write("mandatory.bin", bytes(10, 1));
        assertThatThrownBy(() -> fs.openFile(p).must("fs.vended.no-such-option", "x").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fs.vended.no-such-option");
        // a standard key may be mandatory
        try (FSDataInputStream in =
                FutureIO.awaitFuture(
                        fs.openFile(p)
                                .must(FS_OPTION_OPENFILE_READ_POLICY, "random")
                                .build())) {
            assertThat(in.read()).isEqualTo(bytes(10, 1)[0] & 0xff);
        }
        assertThat(OpenFileOptions.policy("random")).isEqualTo(ReadPolicy.RANDOM);
        assertThat(OpenFileOptions.policy("vector")).isEqualTo(ReadPolicy.RANDOM);
        assertThat(OpenFileOptions.policy("parquet", "sequential")).isEqualTo(ReadPolicy.RANDOM);
        assertThat(OpenFileOptions.policy("orc")).isEqualTo(ReadPolicy.RANDOM);
        assertThat(OpenFileOptions.policy("columnar")).isEqualTo(ReadPolicy.RANDOM);
        assertThat(OpenFileOptions.policy("whole-file")).isEqualTo(ReadPolicy.SEQUENTIAL);
        assertThat(OpenFileOptions.policy("bogus", "Sequential")).isEqualTo(ReadPolicy.SEQUENTIAL);
        assertThat(OpenFileOptions.policy("adaptive")).isEqualTo(ReadPolicy.ADAPTIVE);
        assertThat(OpenFileOptions.policy("default")).isEqualTo(ReadPolicy.ADAPTIVE);
        assertThat(OpenFileOptions.policy("bogus")).isNull();
        assertThat(OpenFileOptions.policy()).isNull();
    }

    /** GETs of a whole sequential read of {@code p} opened with the read policy {@code policy}. */
    private static long getsOfAScan(Path p, byte[] data, String policy) throws Exception {
        int from = logged();
        byte[] back = new byte[data.length];
        try (FSDataInputStream in =
                FutureIO.awaitFuture(
                        fs.openFile(p)
                                .opt(FS_OPTION_OPENFILE_LENGTH, data.length)
                                .opt(FS_OPTION_OPENFILE_READ_POLICY, policy)
                                .build())) {
            int done = 0;
            while (done < back.length) {
                int n = in.read(back, done, Math.min(64 * 1024, back.length - done));
                assertThat(n).isPositive();
                done += n;
            }
            assertThat(in.read()).isEqualTo(-1);
        }
        assertThat(back).isEqualTo(data);
        return requests("GET", p, from);
    }

    @Test
    void readPolicyDecidesTheRequestsOfAScan() throws Exception {
        byte[] data = bytes((4 << 20) + 1, 13);
        Path p = write("policy.bin", data);
        // sequential: one streaming GET to the end; random: one ranged GET per 1 MiB block
        assertThat(getsOfAScan(p, data, "whole-file")).isEqualTo(1);
        assertThat(getsOfAScan(p, data, "bogus, sequential, random")).isEqualTo(1);
        assertThat(getsOfAScan(p, data, "adaptive")).isEqualTo(1);
        assertThat(getsOfAScan(p, data, "parquet")).isEqualTo(5);
        assertThat(getsOfAScan(p, data, "vector, sequential")).isEqualTo(5);
    }

    @Test
    void capabilitiesSayWhatIsSupported() throws Exception {
        Path p = new Path("s3a://" + BUCKET + "/t/x");
        assertThat(fs.hasPathCapability(p, StreamCapabilities.VECTOREDIO)).isTrue();
        assertThat(fs.hasPathCapability(p, StreamCapabilities.IOSTATISTICS)).isTrue();
        assertThat(fs.hasPathCapability(p, FS_OPTION_OPENFILE_LENGTH)).isTrue();
        assertThat(fs.hasPathCapability(p, FS_OPTION_OPENFILE_READ_POLICY)).isTrue();
        assertThat(fs.hasPathCapability(p, CommonPathCapabilities.FS_APPEND)).isFalse();
        assertThat(fs.hasPathCapability(p, CommonPathCapabilities.FS_PERMISSIONS)).isFalse();
        assertThat(fs.hasPathCapability(p, CommonPathCapabilities.FS_SYMLINKS)).isFalse();
        assertThat(fs.hasPathCapability(p, CommonPathCapabilities.FS_CONCAT)).isFalse();
        assertThat(fs.hasPathCapability(p, "fs.vended.no-such-capability")).isFalse();
        Path f = write("caps.bin", bytes(10, 2));
        try (FSDataInputStream in = fs.open(f)) {
            assertThat(in.hasCapability(StreamCapabilities.IOSTATISTICS)).isTrue();
            assertThat(in.hasCapability(StreamCapabilities.READBYTEBUFFER)).isTrue();
            assertThat(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER)).isFalse();
            assertThat(in.hasCapability(StreamCapabilities.UNBUFFER)).isFalse();
        }
    }

    @Test
    void ioStatisticsCountTheBytesRead() throws Exception {
        byte[] data = bytes(3 << 20, 11);
        Path p = write("stats.bin", data);
        IOStatistics fsStats = ((IOStatisticsSource) fs).getIOStatistics();
        long fsBytesBefore = fsStats.counters().get(StreamStatisticNames.STREAM_READ_BYTES);
        long opensBefore = fsStats.counters().get(StoreStatisticNames.OP_OPEN);
        long read = 0;
        try (FSDataInputStream in = fs.open(p)) {
            IOStatistics s = ((IOStatisticsSource) in.getWrappedStream()).getIOStatistics();
            assertThat(in.read()).isEqualTo(data[0] & 0xff);
            read += 1;
            byte[] b = new byte[100_000];
            in.readFully(b);
            read += b.length;
            in.seek(2 << 20);
            ByteBuffer direct = ByteBuffer.allocateDirect(4096);
            read += in.read(direct);
            in.readFully(10, b, 0, 5000);
            read += 5000;
            assertThat(s.counters())
                    .containsEntry(StreamStatisticNames.STREAM_READ_BYTES, read)
                    .containsEntry(StreamStatisticNames.STREAM_READ_SEEK_OPERATIONS, 1L);
            assertThat(s.counters().get(StreamStatisticNames.STREAM_READ_OPERATIONS)).isPositive();
        }
        assertThat(fsStats.counters())
                .containsEntry(StreamStatisticNames.STREAM_READ_BYTES, fsBytesBefore + read)
                .containsEntry(StoreStatisticNames.OP_OPEN, opensBefore + 1);
    }

    @Test
    void racingCreatesWithoutOverwriteHaveExactlyOneWinner() throws Exception {
        // Rounds 0-2: one PUT each; rounds 3-4: multipart uploads of 2 parts (6 MiB), whose
        // completions carry the condition.
        for (int round = 0; round < 5; round++) {
            Path p = new Path("s3a://" + BUCKET + "/t/race-" + round + ".bin");
            int writers = 4;
            int size = round < 3 ? 200_000 : 6 << 20;
            List<byte[]> contents = new ArrayList<>();
            List<FSDataOutputStream> outs = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                contents.add(bytes(size + i, 40 + i));
                // every writer passes the existence check: the race is decided at close
                outs.add(fs.create(p, false));
            }
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> results = new ArrayList<>();
            try {
                for (int i = 0; i < writers; i++) {
                    FSDataOutputStream out = outs.get(i);
                    byte[] c = contents.get(i);
                    Callable<Boolean> task =
                            () -> {
                                out.write(c);
                                go.await(TIMEOUT_S, TimeUnit.SECONDS);
                                try {
                                    out.close();
                                    return true;
                                } catch (FileAlreadyExistsException e) {
                                    return false;
                                }
                            };
                    results.add(pool.submit(task));
                }
                go.countDown();
                int winner = -1;
                for (int i = 0; i < writers; i++) {
                    if (results.get(i).get(TIMEOUT_S, TimeUnit.SECONDS)) {
                        assertThat(winner).as("a second winner: %d", i).isEqualTo(-1);
                        winner = i;
                    }
                }
                assertThat(winner).as("one winner").isNotNegative();
                byte[] back = new byte[contents.get(winner).length];
                try (FSDataInputStream in = fs.open(p)) {
                    in.readFully(0, back);
                }
                assertThat(back).isEqualTo(contents.get(winner));
                assertThat(fs.getFileStatus(p).getLen()).isEqualTo(back.length);
                assertThat(server.incompleteUploads(BUCKET)).as("no upload left").isEmpty();
            } finally {
                pool.shutdownNow();
            }
            assertThatThrownBy(() -> fs.create(p, false))
                    .isInstanceOf(FileAlreadyExistsException.class);
        }
    }

    @Test
    void createsWithoutOverwriteOfSeveralPartsLetTheFirstToCloseWin() throws Exception {
        // 11 MiB: a multipart upload of 3 parts (5 MiB each, the last 1 MiB). Both streams have
        // uploaded their parts before either closes; the store refuses the second completion.
        Path p = new Path("s3a://" + BUCKET + "/t/multipart-race.bin");
        byte[] first = bytes(11 << 20, 7);
        byte[] second = bytes(11 << 20, 8);
        FSDataOutputStream a = fs.create(p, false);
        FSDataOutputStream b = fs.create(p, false);
        a.write(first);
        b.write(second);
        a.close();
        assertThatThrownBy(b::close)
                .isInstanceOf(FileAlreadyExistsException.class)
                .hasMessageContaining("created by another writer");
        byte[] back = new byte[first.length];
        try (FSDataInputStream in = fs.open(p)) {
            in.readFully(0, back);
        }
        assertThat(back).isEqualTo(first);
        assertThat(fs.getFileStatus(p).getLen()).isEqualTo(first.length);
        assertThat(server.incompleteUploads(BUCKET)).as("the loser's upload is aborted").isEmpty();
    }

    @Test
    void createWithOverwriteStillReplaces() throws Exception {
        Path p = write("replace.bin", bytes(1000, 1));
        byte[] second = bytes(2000, 2);
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(second);
        }
        byte[] back = new byte[second.length];
        try (FSDataInputStream in = fs.open(p)) {
            in.readFully(0, back);
        }
        assertThat(back).isEqualTo(second);
    }
}
