package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options.CreateOpts;
import org.apache.hadoop.fs.Options.Rename;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hadoop's {@link FileContext} API (what Spark's streaming checkpoints and Delta's log store use)
 * over {@link VendedAbstractFileSystem}, against the local endpoint: every operation across
 * credential rotations, the rename semantics Spark's checkpoint manager relies on, and the
 * errors of a wrong binding.
 */
class FileContextTest {

    private static final String BUCKET = "fctx";
    /** Credentials of 4 s refreshed 1 s before expiry: a rotation every 2.5 to 3 s. */
    private static final long TTL_MS = 4_000;
    private static final long LEAD_MS = 1_000;
    private static final FsPermission DIR = FsPermission.getDirDefault();
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

    /**
     * A user's configuration: the FileContext binding of {@code scheme} and, except for {@code
     * vended} (registered by the service file), its FileSystem; a default file system with a
     * port, which bucket URIs must not inherit; one table at {@code bucket/<table>/}.
     */
    private static Configuration conf(String scheme, String table) {
        Configuration c = new Configuration(false);
        if (!scheme.equals(VendedFileSystem.SCHEME)) {
            c.set("fs." + scheme + ".impl", VendedFileSystem.class.getName());
        }
        c.set(
                "fs.AbstractFileSystem." + scheme + ".impl",
                VendedAbstractFileSystem.class.getName());
        c.set("fs.defaultFS", "hdfs://namenode:8020");
        String location = scheme + "://" + BUCKET + "/" + table + "/";
        VendedFileSystemTest.table(c, server, table, location, BUCKET + "/" + table + "/");
        c.set("vended.storage.table." + table + ".lead-time", LEAD_MS + "ms");
        c.setLong("test.vended." + table + ".ttl-ms", TTL_MS);
        return c;
    }

    private static void write(FileContext fc, Path p, String text, CreateFlag... flags)
            throws IOException {
        EnumSet<CreateFlag> f = EnumSet.of(CreateFlag.CREATE);
        f.addAll(List.of(flags));
        try (FSDataOutputStream out = fc.create(p, f)) {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    private static String read(FileContext fc, Path p) throws IOException {
        try (FSDataInputStream in = fc.open(p)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static List<String> names(FileContext fc, Path dir) throws IOException {
        List<String> out = new ArrayList<>();
        RemoteIterator<FileStatus> it = fc.listStatus(dir);
        while (it.hasNext()) {
            FileStatus s = it.next();
            out.add(s.getPath().getName() + (s.isDirectory() ? "/" : ""));
        }
        out.sort(null);
        return out;
    }

    private static void assertNoKeyRejected(String table) throws IOException {
        List<String> keys = TestTableProvider.keys(table);
        assertThat(keys).isNotEmpty();
        for (String k : keys) {
            KeyStats s = server.stats(k);
            assertThat(s.rejected()).as("key %s of %s: %s", k, table, s).isZero();
        }
    }

    @Test
    void everyOperationAcrossCredentialRotationsWithOneProvider() throws Exception {
        String table = "fcrot";
        Configuration conf = conf(VendedFileSystem.SCHEME, table);
        URI bucket = URI.create("vended://" + BUCKET + "/");
        Path base = new Path("vended://" + BUCKET + "/" + table + "/fc");
        int instances = TestTableProvider.instances();
        int writeOps = FileContext.getStatistics(bucket).getWriteOps();
        long start = System.currentTimeMillis();
        int rounds = 0;
        // Until the third credential has served (two rotations), bounded in rounds and time.
        while (rounds < 2
                || (TestTableProvider.calls(table) < 3
                        && rounds < 1_000
                        && System.currentTimeMillis() - start < 40_000)) {
            // A new context each round, as Delta's log store and Spark's checkpoint manager make
            // them: a new AbstractFileSystem, never a new provider.
            FileContext fc = FileContext.getFileContext(bucket, conf);
            if (rounds == 0) {
                assertThat(fc.getDefaultFileSystem()).isInstanceOf(VendedAbstractFileSystem.class);
                assertThat(fc.getDefaultFileSystem().getUri()).isEqualTo(bucket);
                fc.mkdir(base, DIR, true);
            }
            Path dir = new Path(base, "r" + rounds);
            Path data = new Path(dir, "data");
            fc.mkdir(dir, DIR, false);
            write(fc, new Path(dir, ".data.tmp"), "v1 " + rounds, CreateFlag.OVERWRITE);
            fc.rename(new Path(dir, ".data.tmp"), data, Rename.NONE);
            write(fc, new Path(dir, ".data.tmp2"), "v2 of round " + rounds);
            fc.rename(new Path(dir, ".data.tmp2"), data, Rename.OVERWRITE);
            assertThat(read(fc, data)).isEqualTo("v2 of round " + rounds);
            FileStatus st = fc.getFileStatus(data);
            assertThat(st.isFile()).isTrue();
            assertThat(st.getLen()).isEqualTo(("v2 of round " + rounds).length());
            assertThat(st.getPath()).isEqualTo(data);
            assertThat(names(fc, dir)).containsExactly("data");
            assertThat(fc.util().exists(new Path(dir, ".data.tmp"))).isFalse();
            assertThat(fc.delete(data, false)).isTrue();
            assertThat(fc.util().exists(data)).isFalse();
            assertThat(fc.getFileStatus(dir).isDirectory()).as("emptied, it stays").isTrue();
            assertThat(fc.delete(dir, true)).isTrue();
            rounds++;
        }
        long elapsed = System.currentTimeMillis() - start;
        int calls = TestTableProvider.calls(table);
        System.out.printf(
                "FileContext: %d rounds in %d ms, %d provider calls (%d ms credentials)%n",
                rounds, elapsed, calls, TTL_MS);
        assertThat(calls).as("two rotations within %d ms", elapsed).isGreaterThanOrEqualTo(3);
        // One call per credential lifetime less the lead (and its jitter): 2.5 to 3 s here.
        assertThat(calls).as("%d rounds in %d ms", rounds, elapsed)
                .isLessThanOrEqualTo((int) (elapsed / (TTL_MS - LEAD_MS - LEAD_MS / 2)) + 2);
        assertThat(TestTableProvider.instances())
                .as("one provider for %d FileContexts", rounds)
                .isEqualTo(instances + 1);
        assertThat(FileContext.getStatistics(bucket).getWriteOps())
                .as("operations counted by the AbstractFileSystem's statistics")
                .isGreaterThan(writeOps);
        assertNoKeyRejected(table);
        assertThat(names(FileContext.getFileContext(bucket, conf), base)).isEmpty();
        try (FileSystem fs = FileSystem.newInstance(bucket, conf)) {
            assertThat(fs.listStatus(base)).isEmpty();
        }
        assertThat(TestTableProvider.instances())
                .as("the FileSystem API shares it too")
                .isEqualTo(instances + 1);
    }

    @Test
    void renamesAndCreatesFollowFileContextSemantics() throws Exception {
        String table = "fcsem";
        FileContext fc =
                FileContext.getFileContext(URI.create("s3a://" + BUCKET + "/"), conf("s3a", table));
        assertThat(fc.getDefaultFileSystem().getUri()).hasToString("s3a://" + BUCKET + "/");
        Path dir = new Path("s3a://" + BUCKET + "/" + table + "/d");
        fc.mkdir(dir, DIR, true);
        Path a = new Path(dir, "a");
        Path b = new Path(dir, "b");
        write(fc, a, "aaa");
        write(fc, b, "bb");

        // Spark's FileContextBasedCheckpointFileManager: a temp file renamed over the target.
        assertThatThrownBy(() -> fc.rename(a, b, Rename.NONE))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(read(fc, a)).isEqualTo("aaa");
        assertThat(read(fc, b)).isEqualTo("bb");
        fc.rename(a, b, Rename.OVERWRITE);
        assertThat(read(fc, b)).isEqualTo("aaa");
        assertThat(fc.util().exists(a)).isFalse();
        assertThat(names(fc, dir)).containsExactly("b");

        assertThatThrownBy(() -> fc.rename(a, b, Rename.OVERWRITE))
                .isInstanceOf(FileNotFoundException.class);
        assertThatThrownBy(() -> fc.rename(b, b, Rename.OVERWRITE))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> fc.rename(b, new Path(dir, "missing/b"), Rename.NONE))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining("parent");
        assertThatThrownBy(() -> fc.rename(b, new Path(b, "under"), Rename.NONE))
                .isInstanceOf(IOException.class);

        // Directories: a file never replaces one; an empty one is replaced, a non-empty one not.
        Path sub = new Path(dir, "sub");
        Path empty = new Path(dir, "empty");
        fc.mkdir(empty, DIR, false);
        fc.mkdir(sub, DIR, false);
        write(fc, new Path(sub, "x"), "x", CreateFlag.OVERWRITE);
        assertThatThrownBy(() -> fc.rename(b, empty, Rename.OVERWRITE))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("both");
        assertThatThrownBy(() -> fc.rename(empty, sub, Rename.OVERWRITE))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("non-empty");
        fc.rename(sub, empty, Rename.OVERWRITE);
        assertThat(read(fc, new Path(empty, "x"))).isEqualTo("x");
        assertThat(fc.util().exists(sub)).isFalse();

        // Creates: CREATE alone does not replace; the parent must exist unless asked for.
        assertThatThrownBy(() -> write(fc, b, "again"))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(read(fc, b)).isEqualTo("aaa");
        Path deep = new Path(dir, "p/q/f");
        assertThatThrownBy(() -> write(fc, deep, "f")).isInstanceOf(FileNotFoundException.class);
        assertThatThrownBy(() -> fc.mkdir(new Path(dir, "m/n"), DIR, false))
                .isInstanceOf(FileNotFoundException.class);
        try (FSDataOutputStream out =
                fc.create(deep, EnumSet.of(CreateFlag.CREATE), CreateOpts.createParent())) {
            out.write('f');
        }
        assertThat(fc.getFileStatus(deep).getLen()).isEqualTo(1);
        assertThat(fc.delete(dir, true)).isTrue();
        assertThat(fc.util().exists(dir)).isFalse();
        assertNoKeyRejected(table);
    }

    @Test
    void wrongBindingsFailNamingTheKeyToSet() {
        // The reported failure: FileSystem bound, FileContext left to Hadoop's default (S3A's).
        Configuration fsOnly = new Configuration();
        fsOnly.set("fs.s3a.impl", VendedFileSystem.class.getName());
        URI s3a = URI.create("s3a://" + BUCKET + "/");
        assertThatThrownBy(() -> FileContext.getFileContext(s3a, fsOnly))
                .hasMessageContaining("org.apache.hadoop.fs.s3a.S3A");
        // ... which the FileSystem warns about, naming the key to set.
        String afs = VendedAbstractFileSystem.class.getName();
        assertThat(VendedAbstractFileSystem.unboundWarning("s3a", fsOnly))
                .contains("fs.AbstractFileSystem.s3a.impl=org.apache.hadoop.fs.s3a.S3A")
                .contains("set fs.AbstractFileSystem.s3a.impl=" + afs);
        assertThat(VendedAbstractFileSystem.unboundWarning("vended", new Configuration(false)))
                .contains("fs.AbstractFileSystem.vended.impl is not set");
        assertThat(VendedAbstractFileSystem.unboundWarning("s3a", conf("s3a", "fcbind"))).isNull();
        assertThat(VendedAbstractFileSystem.unboundWarning("hdfs", fsOnly)).isNull();
        Configuration other = new Configuration(false);
        other.set("fs.AbstractFileSystem.s3n.impl", "com.example.OtherFs");
        assertThat(VendedAbstractFileSystem.warnIfUnbound("s3n", other)).as("logged").isTrue();
        assertThat(VendedAbstractFileSystem.warnIfUnbound("s3n", other)).as("once").isFalse();

        // The AbstractFileSystem without its FileSystem: unset, missing class, another class.
        Configuration afsOnly = new Configuration(false);
        afsOnly.set("fs.AbstractFileSystem.s3a.impl", VendedAbstractFileSystem.class.getName());
        assertThat(findUnsupported(catchThrown(() -> FileContext.getFileContext(s3a, afsOnly))))
                .hasMessageContaining("fs.AbstractFileSystem.s3a.impl names")
                .hasMessageContaining("fs.s3a.impl is not set")
                .hasMessageContaining("set fs.s3a.impl=" + VendedFileSystem.class.getName());
        afsOnly.set("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem");
        assertThat(findUnsupported(catchThrown(() -> FileContext.getFileContext(s3a, afsOnly))))
                .hasMessageContaining("fs.s3a.impl=org.apache.hadoop.fs.s3a.S3AFileSystem")
                .hasMessageContaining("set fs.s3a.impl=" + VendedFileSystem.class.getName());
        afsOnly.set("fs.s3a.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
        assertThat(findUnsupported(catchThrown(() -> FileContext.getFileContext(s3a, afsOnly))))
                .hasMessageContaining("fs.s3a.impl=org.apache.hadoop.fs.RawLocalFileSystem");

        // A scheme it does not serve, and a URI without a bucket.
        Configuration wasb = new Configuration(false);
        wasb.set("fs.AbstractFileSystem.wasb.impl", VendedAbstractFileSystem.class.getName());
        assertThat(findUnsupported(catchThrown(
                        () -> FileContext.getFileContext(URI.create("wasb://c@account/"), wasb))))
                .hasMessageContaining("serves the schemes abfs, abfss, gs, s3, s3a, s3n, vended")
                .hasMessageContaining("remove fs.AbstractFileSystem.wasb.impl");
        Configuration bound = conf("s3a", "fcbind");
        assertThat(findUnsupported(catchThrown(
                        () -> FileContext.getFileContext(URI.create("s3a:///x"), bound))))
                .hasMessageContaining("names a bucket");
    }

    private interface Call {
        void run() throws Exception;
    }

    private static Throwable catchThrown(Call call) {
        try {
            call.run();
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("expected an exception");
    }

    /** The {@link UnsupportedFileSystemException} in {@code t}'s causes (Hadoop wraps it). */
    private static Throwable findUnsupported(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof UnsupportedFileSystemException) {
                return c;
            }
        }
        throw new AssertionError("no UnsupportedFileSystemException in", t);
    }
}
