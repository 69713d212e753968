package dev.vended.storage.hadoop.adversarial;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.hadoop.TestTableProvider;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.LocalS3Server;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.net.URI;

/**
 * Finding (adversarial review of feeafa9/e7034e4, reported, not fixed: java/hadoop is not this
 * helper's): a catalog that accepts connections and never answers (not refusing, not 503) delays
 * operations on OTHER tables. Every path operation first tries to locate the unlocated catalog
 * tables of its bucket, and while a describe is in flight it waits for it, up to {@code
 * lance.timeout}; so the first operation on the configured table {@code st} (and the first after
 * each backoff step) takes about the catalog timeout. CatalogOutageTest covers a 503 and a closed
 * port, where the describe fails at once. This test passes: it pins the current behaviour (first
 * static operation at least 1.5 s with a 2 s catalog timeout).
 */
class HangingCatalogDelaysOtherTablesTest {

    private static final String BUCKET = "hanging";
    private static LocalS3Server s3;
    private static ServerSocket blackHole;
    private static final List<Socket> HELD = new ArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        s3 = LocalS3Server.start(BUCKET);
        TestTableProvider.server = s3;
        blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t =
                new Thread(
                        () -> {
                            while (true) {
                                try {
                                    Socket s = blackHole.accept();
                                    synchronized (HELD) {
                                        HELD.add(s);
                                    }
                                } catch (IOException e) {
                                    return;
                                }
                            }
                        },
                        "black-hole-catalog");
        t.setDaemon(true);
        t.start();
    }

    @AfterAll
    static void stop() throws IOException {
        blackHole.close();
        synchronized (HELD) {
            for (Socket s : HELD) {
                s.close();
            }
        }
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    @Timeout(120)
    void theFirstOperationOnAConfiguredTableWaitsForTheCatalogTimeout() throws Exception {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        String w = "vended.storage.table.st.";
        c.set(w + "location", "s3a://" + BUCKET + "/static/");
        c.set(w + "provider.class", TestTableProvider.class.getName());
        c.set(w + "options.aws_endpoint", s3.endpoint());
        c.set(w + "options.aws_region", "us-east-1");
        c.set(w + "options.aws_allow_http", "true");
        c.set("test.vended.st.scope", BUCKET + "/static/");
        String p = "vended.storage.table.lt.";
        c.set(p + "lance.endpoint", "http://127.0.0.1:" + blackHole.getLocalPort());
        c.set(p + "lance.table-id", "db$t");
        c.set(p + "lance.token-env", "VENDED_TEST_LANCE_TOKEN");
        c.set(p + "lance.timeout", "2s");
        c.set(p + "options.aws_endpoint", s3.endpoint());
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            Path f = new Path("s3a://" + BUCKET + "/static/f");
            long t0 = System.nanoTime();
            try (FSDataOutputStream out = fs.create(f, true)) {
                out.write(new byte[] {1});
            }
            long firstMillis = (System.nanoTime() - t0) / 1_000_000;
            long t1 = System.nanoTime();
            assertThat(fs.getFileStatus(f).getLen()).isEqualTo(1);
            long nextMillis = (System.nanoTime() - t1) / 1_000_000;
            System.out.println(
                    "static table with a hanging catalog: first op "
                            + firstMillis
                            + " ms, next "
                            + nextMillis
                            + " ms");
            assertThat(firstMillis).isGreaterThanOrEqualTo(1_500);
        }
    }
}
