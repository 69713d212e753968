package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.RemoteIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link VendedFileSystem} operations against the local endpoint, without Spark. */
class VendedFileSystemTest {

    private static final String BUCKET = "fs-test";
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

    static Configuration conf(LocalS3Server s) {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        return c;
    }

    static void table(Configuration c, LocalS3Server s, String name, String location, String scope) {
        String p = "vended.storage.table." + name + ".";
        c.set(p + "location", location);
        c.set(p + "provider.class", TestTableProvider.class.getName());
        c.set(p + "options.aws_endpoint", s.endpoint());
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        if (scope != null) {
            c.set("test.vended." + name + ".scope", scope);
        }
    }

    private static FileSystem fs(Configuration c) throws IOException {
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    private static Configuration twoTables() {
        Configuration c = conf(server);
        table(c, server, "fsmain", "s3a://" + BUCKET + "/main/", BUCKET + "/main/");
        table(c, server, "fsnested", "s3a://" + BUCKET + "/main/nested/", BUCKET + "/main/nested/");
        return c;
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private static void write(FileSystem fs, Path p, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(p, true)) {
            // one-byte writes then a bulk write, as Parquet does
            for (int i = 0; i < Math.min(16, data.length); i++) {
                out.write(data[i]);
            }
            out.write(data, Math.min(16, data.length), data.length - Math.min(16, data.length));
            assertFalse(fs.exists(p) && fs.getFileStatus(p).getLen() == data.length,
                    "a file is visible only once closed");
        }
    }

    private static List<String> names(FileStatus[] statuses) {
        List<String> out = new ArrayList<>();
        for (FileStatus s : statuses) {
            out.add(s.getPath().getName() + (s.isDirectory() ? "/" : ""));
        }
        out.sort(null);
        return out;
    }

    @Test
    void filesDirectoriesRenameAndDelete() throws Exception {
        try (FileSystem fs = fs(twoTables())) {
            Path dir = new Path("s3a://" + BUCKET + "/main/t1");
            Path file = new Path(dir, "part-0.bin");
            byte[] data = bytes(3 * 1024 * 1024 + 17);
            write(fs, file, data);

            FileStatus st = fs.getFileStatus(file);
            assertTrue(st.isFile());
            assertEquals(data.length, st.getLen());
            assertTrue(fs.getFileStatus(dir).isDirectory());
            assertThrows(FileAlreadyExistsException.class, () -> fs.create(file, false));
            assertThrows(FileAlreadyExistsException.class, () -> fs.create(dir, true));

            try (FSDataInputStream in = fs.open(file)) {
                byte[] back = new byte[data.length];
                in.readFully(0, back);
                assertArrayEquals(data, back);
                assertEquals(0, in.getPos(), "positioned reads do not move the position");
                in.seek(data.length - 10);
                assertEquals(data[data.length - 10] & 0xff, in.read());
                ByteBuffer direct = ByteBuffer.allocateDirect(9);
                assertEquals(9, in.read(direct));
                direct.flip();
                byte[] tail = new byte[9];
                direct.get(tail);
                assertArrayEquals(Arrays.copyOfRange(data, data.length - 9, data.length), tail);
                assertEquals(-1, in.read());
                assertThrows(java.io.EOFException.class, () -> in.seek(data.length + 1));
            }
            assertThrows(FileNotFoundException.class, () -> fs.open(dir));
            assertThrows(FileNotFoundException.class, () -> fs.open(new Path(dir, "missing")));

            // Directories: markers for empty ones, never listed.
            Path empty = new Path(dir, "empty");
            assertTrue(fs.mkdirs(empty));
            assertTrue(fs.getFileStatus(empty).isDirectory());
            assertEquals(List.of(), names(fs.listStatus(empty)));
            assertEquals(List.of("empty/", "part-0.bin"), names(fs.listStatus(dir)));
            assertThrows(FileAlreadyExistsException.class, () -> fs.mkdirs(file));

            write(fs, new Path(dir, "sub/a/x.bin"), bytes(10));
            write(fs, new Path(dir, "sub/b.bin"), bytes(20));
            TreeSet<String> all = new TreeSet<>();
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(dir, true);
            while (it.hasNext()) {
                all.add(it.next().getPath().toUri().getPath());
            }
            assertEquals(
                    new TreeSet<>(List.of("/main/t1/part-0.bin", "/main/t1/sub/a/x.bin", "/main/t1/sub/b.bin")),
                    all);

            // Rename a directory (copy + delete), into an existing directory, and a file.
            Path moved = new Path("s3a://" + BUCKET + "/main/t2");
            assertTrue(fs.rename(new Path(dir, "sub"), moved));
            assertFalse(fs.exists(new Path(dir, "sub")));
            assertEquals(10, fs.getFileStatus(new Path(moved, "a/x.bin")).getLen());
            assertTrue(fs.rename(file, new Path(moved, "renamed.bin")));
            assertFalse(fs.exists(file));
            assertFalse(fs.rename(new Path(dir, "nothing"), new Path(dir, "x")), "missing source");
            assertTrue(fs.rename(new Path(moved, "a"), empty), "into an existing directory");
            assertTrue(fs.getFileStatus(new Path(empty, "a/x.bin")).isFile());

            // Delete: not recursive on a non-empty directory fails; recursive works; parents stay.
            assertThrows(PathIsNotEmptyDirectoryException.class, () -> fs.delete(moved, false));
            assertTrue(fs.delete(new Path(moved, "b.bin"), false));
            assertTrue(fs.delete(moved, true));
            assertFalse(fs.exists(moved));
            assertFalse(fs.delete(moved, true), "deleting nothing returns false");
            assertTrue(fs.delete(new Path(empty, "a/x.bin"), false));
            assertTrue(fs.getFileStatus(new Path(empty, "a")).isDirectory(), "the parent stays");
        }
    }

    @Test
    void longestLocationWinsAndEachTableSignsItsOwnRequests() throws Exception {
        try (FileSystem fs = fs(twoTables())) {
            VendedFileSystem v = (VendedFileSystem) fs;
            assertEquals("fsmain", v.tableOf(new Path("s3a://" + BUCKET + "/main/x")));
            assertEquals("fsmain", v.tableOf(new Path("s3a://" + BUCKET + "/main")));
            assertEquals("fsnested", v.tableOf(new Path("s3a://" + BUCKET + "/main/nested/x")));
            assertEquals("fsmain", v.tableOf(new Path("s3a://" + BUCKET + "/main/nestedx")));
            assertNull(v.tableOf(new Path("s3a://" + BUCKET + "/other/x")));

            write(fs, new Path("s3a://" + BUCKET + "/main/nested/n.bin"), bytes(100));
            write(fs, new Path("s3a://" + BUCKET + "/main/m.bin"), bytes(50));
            assertEquals(100, fs.getFileStatus(new Path("s3a://" + BUCKET + "/main/nested/n.bin")).getLen());
            // Both keys are scoped to their own prefix: a request signed with the wrong one would
            // have been denied. Every vended key served requests and none was refused.
            for (String table : List.of("fsmain", "fsnested")) {
                List<String> keys = TestTableProvider.keys(table);
                assertFalse(keys.isEmpty(), table);
                long accepted = 0;
                for (String k : keys) {
                    KeyStats s = server.stats(k);
                    assertEquals(0, s.rejected(), table + " key " + k + ": " + s);
                    accepted += s.accepted();
                }
                assertTrue(accepted > 0, table);
            }
            // The directories leading to table locations exist, other paths do not.
            assertTrue(fs.getFileStatus(new Path("s3a://" + BUCKET + "/")).isDirectory());
            assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(new Path("s3a://" + BUCKET + "/other")));
            assertEquals(List.of("main/"), names(fs.listStatus(new Path("s3a://" + BUCKET + "/"))));
        }
    }

    @Test
    void oneProviderPerTablePerJvmAcrossFileSystemInstances() throws Exception {
        Configuration c = conf(server);
        table(c, server, "fsshared", "s3a://" + BUCKET + "/shared/", BUCKET + "/shared/");
        int before = TestTableProvider.instances();
        for (int i = 0; i < 3; i++) {
            try (FileSystem fs = fs(c)) {
                write(fs, new Path("s3a://" + BUCKET + "/shared/f" + i), bytes(10));
            }
        }
        assertEquals(before + 1, TestTableProvider.instances(), "one provider for three FileSystems");
        assertEquals(1, TestTableProvider.calls("fsshared"), "one-hour credentials: one call");
    }

    @Test
    void configurationErrorsNameTheKeyNeverTheSecret() {
        Configuration c = conf(server);
        table(c, server, "bad", "s3a://" + BUCKET + "/bad/", null);
        c.set("vended.storage.table.bad.options.aws_secret_access_key", "SECRET-VALUE-123");
        IOException e = assertThrows(IOException.class, () -> fs(c));
        assertTrue(e.getMessage().contains("vended.storage.table.bad.options.aws_secret_access_key"), e.getMessage());
        assertFalse(e.getMessage().contains("SECRET-VALUE-123"), e.getMessage());

        Configuration unknown = conf(server);
        table(unknown, server, "u", "s3a://" + BUCKET + "/u/", null);
        unknown.set("vended.storage.table.u.provider.klass", "x");
        e = assertThrows(IOException.class, () -> fs(unknown));
        assertTrue(e.getMessage().contains("vended.storage.table.u.provider.klass"), e.getMessage());

        Configuration noLocation = conf(server);
        noLocation.set("vended.storage.table.n.provider.class", TestTableProvider.class.getName());
        e = assertThrows(IOException.class, () -> fs(noLocation));
        assertTrue(e.getMessage().contains("vended.storage.table.n.location"), e.getMessage());

        Configuration missingClass = conf(server);
        table(missingClass, server, "mc", "s3a://" + BUCKET + "/mc/", null);
        missingClass.set("vended.storage.table.mc.provider.class", "com.example.NoSuchProvider");
        e =
                assertThrows(
                        IOException.class,
                        () -> {
                            try (FileSystem fs = fs(missingClass)) {
                                fs.getFileStatus(new Path("s3a://" + BUCKET + "/mc/x"));
                            }
                        });
        assertTrue(e.getMessage().contains("com.example.NoSuchProvider"), e.getMessage());
    }
}
