package dev.vended.storage.delta.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import io.delta.kernel.defaults.engine.fileio.InputFile;
import io.delta.kernel.defaults.engine.fileio.PositionOutputStream;
import io.delta.kernel.defaults.engine.fileio.SeekableInputStream;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** {@link VendedKernelFileIO}'s contract with Kernel, call by call, on the local S3 endpoint. */
@Timeout(60)
class VendedKernelFileIOTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("delta");

    /** A FileIO at {@code prefix} on a key of its own, so that its requests can be counted. */
    private static VendedKernelFileIO io(String prefix, VendedCredentials key) throws IOException {
        return VendedKernelFileIO.open(
                S3.uri(prefix), S3.storageOptions(key), null, Map.of("k", "v"));
    }

    private static long requests(VendedCredentials key) {
        return S3.stats(key.accessKeyId()).accepted() + S3.stats(key.accessKeyId()).rejected();
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] read(InputFile file) throws IOException {
        try (SeekableInputStream in = file.newStream()) {
            return in.readAllBytes();
        }
    }

    private static List<String> paths(CloseableIterator<FileStatus> files) throws IOException {
        List<String> out = new ArrayList<>();
        try (files) {
            while (files.hasNext()) {
                out.add(files.next().getPath());
            }
        }
        return out;
    }

    private static CloseableIterator<String> lines(String... lines) {
        Iterator<String> it = Arrays.asList(lines).iterator();
        return new CloseableIterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public String next() {
                return it.next();
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void listFromListsTheDirectoryOnceSortedByUtf8NameFromTheGivenName() throws IOException {
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5));
        try (VendedKernelFileIO io = io("list/t", key)) {
            ObjectStore store = io.store();
            String log = "_delta_log/";
            for (String name :
                    List.of(
                            "00000000000000000002.json",
                            "00000000000000000000.json",
                            "_last_checkpoint",
                            "00000000000000000001.json",
                            "00000000000000000001.checkpoint.parquet",
                            "_staged_commits/00000000000000000003.uuid.json")) {
                store.put(log + name, name.getBytes(StandardCharsets.UTF_8));
            }
            String root = S3.uri("list/t");
            long before = requests(key);
            List<FileStatus> listed = new ArrayList<>();
            try (CloseableIterator<FileStatus> it =
                    io.listFrom(root + "/" + log + "00000000000000000001.")) {
                it.forEachRemaining(listed::add);
            }
            assertThat(requests(key) - before).as("one LIST request").isEqualTo(1);
            assertThat(listed)
                    .extracting(FileStatus::getPath)
                    .containsExactly(
                            root + "/" + log + "00000000000000000001.checkpoint.parquet",
                            root + "/" + log + "00000000000000000001.json",
                            root + "/" + log + "00000000000000000002.json",
                            root + "/" + log + "_last_checkpoint");
            assertThat(listed.get(1).getSize()).isEqualTo("00000000000000000001.json".length());
            assertThat(listed.get(1).getModificationTime()).isPositive();

            // Code point (UTF-8 byte) order, not Java's UTF-16 order: U+FFFD sorts before U+1F600.
            store.put("utf/x-\uD83D\uDE00", new byte[1]);
            store.put("utf/x-\uFFFD", new byte[1]);
            store.put("utf/w", new byte[1]);
            assertThat(paths(io.listFrom(root + "/utf/x-")))
                    .containsExactly(root + "/utf/x-\uFFFD", root + "/utf/x-\uD83D\uDE00");
            assertThat(paths(io.listFrom(root + "/utf/y"))).isEmpty();
            // The table root itself is a directory like any other.
            assertThat(paths(io.listFrom(root + "/"))).isEmpty();
        }
    }

    @Test
    void missingDirectoriesAndFilesAreFileNotFoundNamingThePath() throws IOException {
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5));
        try (VendedKernelFileIO io = io("missing/t", key)) {
            String root = S3.uri("missing/t");
            assertThatThrownBy(() -> io.listFrom(root + "/_delta_log/00000000000000000000."))
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(root + "/_delta_log");
            String file = root + "/_delta_log/_last_checkpoint";
            assertThatThrownBy(() -> io.getFileStatus(file))
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(file);
            assertThatThrownBy(() -> io.newInputFile(file, -1).length())
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(file);
            // Kernel's placeholder size 0: not "an empty file", a HEAD that finds nothing.
            assertThatThrownBy(() -> io.newInputFile(file, 0).newStream())
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(file);
            // A size given by the log: no HEAD; the first read finds the object missing.
            try (SeekableInputStream in = io.newInputFile(file, 10).newStream()) {
                assertThatThrownBy(in::read)
                        .isInstanceOf(FileNotFoundException.class)
                        .hasMessageContaining(file);
            }
            assertThatThrownBy(() -> io.copyFileAtomically(file, root + "/copy", false))
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(file);
            assertThatThrownBy(() -> io.copyFileAtomically(file, root + "/copy", true))
                    .isInstanceOf(FileNotFoundException.class)
                    .hasMessageContaining(file);
            assertThat(io.delete(file)).isTrue(); // S3 does not say whether it existed
            assertThat(S3.stats(key.accessKeyId()).rejected()).isZero();
        }
    }

    @Test
    void createOnlyWritesRefuseAnExistingFileAndLeaveItUnchanged() throws IOException {
        try (VendedKernelFileIO io = io("create/t", S3.mintCredentials(Duration.ofMinutes(5)))) {
            String commit = S3.uri("create/t") + "/_delta_log/00000000000000000000.json";
            io.newOutputFile(commit).writeAtomically(lines("{\"a\":1}", "{\"b\":2}"), false);
            assertThatThrownBy(
                            () ->
                                    io.newOutputFile(commit)
                                            .writeAtomically(lines("{\"c\":3}"), false))
                    .isInstanceOf(FileAlreadyExistsException.class)
                    .hasMessageContaining(commit);
            String first = "{\"a\":1}\n{\"b\":2}\n";
            assertThat(read(io.newInputFile(commit, -1))).asString().isEqualTo(first);
            assertThat(io.getFileStatus(commit).getSize()).isEqualTo(first.length());

            io.newOutputFile(commit).writeAtomically(lines("{\"c\":3}"), true);
            assertThat(read(io.newInputFile(commit, -1))).asString().isEqualTo("{\"c\":3}\n");

            // create(true) is how Kernel writes a checkpoint: create only, too.
            String checkpoint =
                    S3.uri("create/t") + "/_delta_log/00000000000000000000.checkpoint.parquet";
            try (PositionOutputStream out = io.newOutputFile(checkpoint).create(true)) {
                out.write(bytes(100, 1));
                assertThat(out.getPos()).isEqualTo(100);
            }
            PositionOutputStream again = io.newOutputFile(checkpoint).create(true);
            again.write(bytes(50, 2));
            assertThatThrownBy(again::close)
                    .isInstanceOf(FileAlreadyExistsException.class)
                    .hasMessageContaining(checkpoint);
            assertThat(read(io.newInputFile(checkpoint, 100))).isEqualTo(bytes(100, 1));
            // create(false) (data files) replaces.
            try (PositionOutputStream out = io.newOutputFile(checkpoint).create(false)) {
                out.write(bytes(70, 3));
            }
            assertThat(read(io.newInputFile(checkpoint, 70))).isEqualTo(bytes(70, 3));
        }
    }

    @Test
    void aFailingWriteLeavesNoFile() throws IOException {
        try (VendedKernelFileIO io = io("fail/t", S3.mintCredentials(Duration.ofMinutes(5)))) {
            String commit = S3.uri("fail/t") + "/_delta_log/00000000000000000000.json";
            CloseableIterator<String> failing =
                    new CloseableIterator<>() {
                        private int n;

                        @Override
                        public boolean hasNext() {
                            return true;
                        }

                        @Override
                        public String next() {
                            if (n++ == 3) {
                                throw new UncheckedIOException(new IOException("source broke"));
                            }
                            return "{\"n\":" + n + "}";
                        }

                        @Override
                        public void close() {}
                    };
            assertThatThrownBy(() -> io.newOutputFile(commit).writeAtomically(failing, false))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining("source broke");
            assertThatThrownBy(() -> io.getFileStatus(commit))
                    .isInstanceOf(FileNotFoundException.class);
            assertThat(S3.incompleteUploads()).isEmpty();
        }
    }

    @Test
    void copiesAppearWholeAndRespectOverwrite() throws IOException {
        try (VendedKernelFileIO io = io("copy/t", S3.mintCredentials(Duration.ofMinutes(5)))) {
            String root = S3.uri("copy/t");
            String staged = root + "/_delta_log/_staged_commits/00000000000000000001.u1.json";
            String published = root + "/_delta_log/00000000000000000001.json";
            io.newOutputFile(staged).writeAtomically(lines("{\"v\":1}"), false);
            io.copyFileAtomically(staged, published, false);
            assertThat(read(io.newInputFile(published, -1))).asString().isEqualTo("{\"v\":1}\n");

            String other = root + "/_delta_log/_staged_commits/00000000000000000001.u2.json";
            io.newOutputFile(other).writeAtomically(lines("{\"v\":2}"), false);
            assertThatThrownBy(() -> io.copyFileAtomically(other, published, false))
                    .isInstanceOf(FileAlreadyExistsException.class)
                    .hasMessageContaining(published);
            assertThat(read(io.newInputFile(published, -1))).asString().isEqualTo("{\"v\":1}\n");
            io.copyFileAtomically(other, published, true);
            assertThat(read(io.newInputFile(published, -1))).asString().isEqualTo("{\"v\":2}\n");
        }
    }

    @Test
    void streamsSeekReadFullyAndStopAtTheEnd() throws IOException {
        try (VendedKernelFileIO io = io("read/t", S3.mintCredentials(Duration.ofMinutes(5)))) {
            String file = S3.uri("read/t") + "/part-0.parquet";
            byte[] data = bytes(3 << 20, 4);
            io.store().put("part-0.parquet", data);
            InputFile in = io.newInputFile(file, data.length);
            assertThat(in.length()).isEqualTo(data.length);
            assertThat(in.path()).isEqualTo(file);
            assertThat(io.newInputFile(file, -1).length()).isEqualTo(data.length);
            try (SeekableInputStream s = in.newStream()) {
                s.seek(data.length - 8);
                byte[] tail = new byte[8];
                s.readFully(tail, 0, 8);
                assertThat(tail).isEqualTo(Arrays.copyOfRange(data, data.length - 8, data.length));
                assertThat(s.getPos()).isEqualTo(data.length);
                s.seek(1_000_000);
                byte[] middle = new byte[2_000_000];
                s.readFully(middle, 0, middle.length);
                assertThat(middle).isEqualTo(Arrays.copyOfRange(data, 1_000_000, 3_000_000));
                assertThat(s.read()).isEqualTo(data[3_000_000] & 0xff);
                s.seek(data.length - 4);
                assertThatThrownBy(() -> s.readFully(new byte[8], 0, 8))
                        .isInstanceOf(EOFException.class)
                        .hasMessageContaining(file)
                        .hasMessageContaining(Integer.toString(data.length));
            }
            assertThat(read(in)).isEqualTo(data);
        }
    }

    @Test
    void pathsOutsideTheRootAreRefusedNamingPathAndRoot() throws IOException {
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5));
        try (VendedKernelFileIO io = io("paths/t", key)) {
            String root = S3.uri("paths/t");
            for (String outside :
                    List.of(
                            S3.uri("paths/t2/_delta_log/0.json"),
                            "s3://other-bucket/paths/t/_delta_log/0.json",
                            "gs://delta/paths/t/_delta_log/0.json",
                            "paths/t/_delta_log/0.json")) {
                assertThatThrownBy(() -> io.getFileStatus(outside))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining(outside)
                        .hasMessageContaining(root + "/");
            }
            assertThatThrownBy(() -> io.newOutputFile(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("null path");
            long before = requests(key);
            assertThat(io.resolvePath(root)).isEqualTo(root);
            assertThat(io.resolvePath(root + "/")).isEqualTo(root);
            assertThat(io.resolvePath(root.replace("s3://", "s3a://") + "/_delta_log/"))
                    .isEqualTo(root + "/_delta_log");
            assertThat(io.mkdirs(root + "/_delta_log")).isTrue();
            assertThat(requests(key)).as("resolvePath and mkdirs send nothing").isEqualTo(before);
            assertThat(io.getConf("k")).contains("v");
            assertThat(io.getConf("delta.kernel.default.json.reader.batch-size")).isEmpty();
            assertThat(io.toString())
                    .contains(root)
                    .doesNotContain(key.secretAccessKey())
                    .doesNotContain(key.sessionToken());
        }
        assertThat(TableRoot.of("file:///tmp/t").keyOf("file:/tmp/t/_delta_log/0.json"))
                .isEqualTo("_delta_log/0.json");
        assertThat(TableRoot.of("file:///tmp/t").keyOf("file:///tmp/t")).isEmpty();
        for (String bad : List.of("no-scheme/t", "s3://", "s3:///")) {
            assertThatThrownBy(() -> VendedKernelFileIO.open(bad, Map.of(), null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(bad);
        }
    }

    @Test
    void closingTheFileIoClosesTheStoreItOpenedOnly() throws IOException {
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5));
        VendedKernelFileIO opened = io("close/t", key);
        opened.close();
        assertThat(opened.store().isClosed()).isTrue();
        try (ObjectStore store = ObjectStore.open(S3.uri("close/t"), S3.storageOptions(key))) {
            VendedKernelFileIO wrapped = VendedKernelFileIO.of(store, Map.of());
            wrapped.close();
            assertThat(store.isClosed()).isFalse();
            assertThatThrownBy(() -> wrapped.getFileStatus(S3.uri("close/t") + "/x"))
                    .isInstanceOf(FileNotFoundException.class);
        }
    }
}
