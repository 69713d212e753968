package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.KeyAccess;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 24, read versus write, per table: {@code vended.storage.table.<name>.access=read} opens
 * the table's store for reading (storage option {@code access_mode}): it reads, and refuses a
 * write itself, naming the read open, with no provider call for it; a bad value names the key.
 */
@Timeout(120)
class TableAccessTest {

    private static final String BUCKET = "table-access";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws Exception {
        server = LocalS3Server.start(BUCKET);
        try (ObjectStore root = ObjectStore.open(server.uri("ra/"), server.rootOptions())) {
            root.put("f.bin", new byte[] {1, 2, 3});
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** Vends read-only keys of the table's prefix; counts its calls. */
    public static final class ReadOnlyProvider implements StorageOptionsProvider {
        static final AtomicInteger CALLS = new AtomicInteger();

        @Override
        public Map<String, String> fetchStorageOptions() throws Exception {
            CALLS.incrementAndGet();
            VendedCredentials c = server.assumeRole(3600, BUCKET + "/ra/", KeyAccess.READ_ONLY);
            return server.options(c);
        }
    }

    private static Configuration conf(String access) {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        c.set("vended.storage.options.aws_endpoint", server.endpoint());
        c.set("vended.storage.options.aws_region", "us-east-1");
        c.set("vended.storage.options.aws_allow_http", "true");
        String p = "vended.storage.table.ra.";
        c.set(p + "location", "s3a://" + BUCKET + "/ra/");
        c.set(p + "provider.class", ReadOnlyProvider.class.getName());
        c.set(p + "access", access);
        return c;
    }

    private static FileSystem fs(Configuration c) throws IOException {
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    @Test
    void aTableOpenedForReadingReadsAndRefusesWritesItself() throws Exception {
        Configuration c = conf("read");
        assertThat(TableConfig.all(c).get("ra").staticOptions())
                .containsEntry("access_mode", "read");
        assertThat(TableConfig.all(c).get("ra").identity())
                .isNotEqualTo(TableConfig.all(conf("read-write")).get("ra").identity());
        try (FileSystem fs = fs(c)) {
            byte[] back = new byte[3];
            try (FSDataInputStream in = fs.open(new Path("s3a://" + BUCKET + "/ra/f.bin"))) {
                in.readFully(back);
            }
            assertThat(back).containsExactly(1, 2, 3);
            int calls = ReadOnlyProvider.CALLS.get();
            assertThatThrownBy(
                            () -> {
                                try (FSDataOutputStream out =
                                        fs.create(
                                                new Path("s3a://" + BUCKET + "/ra/new.bin"),
                                                true)) {
                                    out.write(new byte[] {4});
                                }
                            })
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("s3://" + BUCKET + "/ra/new.bin refused")
                    .hasMessageContaining("the table was opened for reading");
            assertThatThrownBy(() -> fs.delete(new Path("s3a://" + BUCKET + "/ra/f.bin"), false))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("opened for reading");
            assertThat(ReadOnlyProvider.CALLS.get()).isEqualTo(calls);
        }
    }

    @Test
    void aBadAccessValueNamesTheKey() {
        assertThatThrownBy(() -> fs(conf("write")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("vended.storage.table.ra.access must be read or read-write");
    }
}
