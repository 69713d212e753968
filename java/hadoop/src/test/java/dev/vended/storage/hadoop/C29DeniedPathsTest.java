package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.CredentialsException;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.IOException;
import java.net.URI;
import java.util.List;

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
 * Case C29 through {@link VendedFileSystem}: a table whose location is wider than its key's scope
 * (the catalog scoped the key to {@code c29/t1/}, the table is configured at {@code c29/}). Checks
 * of paths outside the scope are refused with a {@link CredentialsException} saying {@code AccessDenied}, one request each
 * (and one probe per key), with no provider call; the key keeps serving its own prefix.
 */
@Timeout(120)
class C29DeniedPathsTest {

    private static final String BUCKET = "c29-bucket";
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

    private static long count(String method, String key) throws IOException {
        return server.requests().stream()
                .filter((RequestRecord r) -> r.method().equals(method) && key.equals(r.key()))
                .count();
    }

    @Test
    void c29_deniedChecksOutsideTheKeysScopeCostOneRequestAndNoProviderCall() throws Exception {
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "c29wide", "s3a://" + BUCKET + "/c29/", BUCKET + "/c29/t1/");
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            Path mine = new Path("s3a://" + BUCKET + "/c29/t1/part-0.parquet");
            try (FSDataOutputStream out = fs.create(mine, true)) {
                out.write(new byte[] {1, 2, 3});
            }
            int calls = TestTableProvider.calls("c29wide");
            String denied = "c29/t2/_spark_metadata";
            Path neighbour = new Path("s3a://" + BUCKET + "/" + denied);
            long heads = count("HEAD", denied);
            long gets = count("GET", denied);
            for (int i = 0; i < 500; i++) {
                assertThatThrownBy(() -> fs.getFileStatus(neighbour))
                        .isInstanceOf(CredentialsException.class)
                        .hasMessageContaining("AccessDenied")
                        .hasMessageContaining(denied);
                if (i % 100 == 0) {
                    try (FSDataInputStream in = fs.open(mine)) {
                        assertThat(in.readAllBytes()).containsExactly(1, 2, 3);
                    }
                }
            }
            assertThat(count("HEAD", denied) - heads).as("one HEAD per check").isEqualTo(500);
            assertThat(count("GET", denied) - gets).as("one probe for the key").isEqualTo(1);
            assertThat(TestTableProvider.calls("c29wide")).as("provider calls").isEqualTo(calls);
            List<String> keys = TestTableProvider.keys("c29wide");
            assertThat(keys).hasSize(1);
            KeyStats s = server.stats(keys.get(0));
            assertThat(s.rejected() - s.denied()).as("requests refused for the key itself").isZero();
            assertThat(s.accepted()).isPositive();
        }
    }
}
