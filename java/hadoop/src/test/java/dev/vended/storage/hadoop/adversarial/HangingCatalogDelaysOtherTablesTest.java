package dev.vended.storage.hadoop.adversarial;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

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

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.net.URI;

/**
 * A catalog that accepts connections and never answers (not refusing, not 503) delays the other
 * tables only once per JVM: the first path operation waits for the unlocated table's first locate
 * attempt (bounded by its {@code lance.timeout}, 2 s here); later attempts run in the background
 * (after the native backoff), so operations on the configured table {@code st} never wait for the
 * catalog again, and operations on paths no known location covers fail at once naming the table.
 * The adversarial review of feeafa9/e7034e4 found every operation after each backoff step waiting
 * for the catalog timeout.
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
    void onlyTheFirstLocateAttemptDelaysOperationsOnAConfiguredTable() throws Exception {
        long timeoutMillis = 2_000;
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
        c.set(p + "lance.timeout", timeoutMillis + "ms");
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
            assertThat(firstMillis)
                    .as("the first attempt is waited for")
                    .isGreaterThanOrEqualTo(1_500);
            int afterFirst = connections();
            assertThat(afterFirst).as("the first describe").isBetween(1, 2);

            // 20 operations on the configured table spread over > 2 backoff steps (1 s, 2 s), so
            // that later attempts are made (in the background) while they run.
            long start = System.nanoTime();
            long maxMillis = 0;
            for (int i = 0; i < 20; i++) {
                long t = System.nanoTime();
                assertThat(fs.getFileStatus(f).getLen()).isEqualTo(1);
                maxMillis = Math.max(maxMillis, (System.nanoTime() - t) / 1_000_000);
                // An uncovered path fails at once naming the table (the path may be its).
                Path other = new Path("s3a://" + BUCKET + "/elsewhere/x");
                long u = System.nanoTime();
                IOException e =
                        catchThrowableOfType(() -> fs.getFileStatus(other), IOException.class);
                maxMillis = Math.max(maxMillis, (System.nanoTime() - u) / 1_000_000);
                assertThat(e).isNotInstanceOf(FileNotFoundException.class);
                assertThat(e.getMessage())
                        .contains("cannot tell which table covers " + other)
                        .contains("table 'lt' is unavailable");
                // Every operation needs lt and none waits: still one attempt in flight at most.
                assertThat(Thread.getAllStackTraces().keySet())
                        .filteredOn(th -> th.getName().equals("vended-storage-locate-lt"))
                        .hasSizeLessThanOrEqualTo(1);
                Thread.sleep(200); // spreads the operations over the backoff steps (no signal)
            }
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            int describes = connections() - afterFirst;
            System.out.println(
                    "static table with a hanging catalog: first op "
                            + firstMillis
                            + " ms, then 40 ops (20 on the table, 20 uncovered) in "
                            + elapsed
                            + " ms, max "
                            + maxMillis
                            + " ms, "
                            + describes
                            + " later describes");
            assertThat(maxMillis)
                    .as("no later attempt is waited for")
                    .isLessThan(timeoutMillis / 2);
            // At most one describe per backoff step (1 s doubling), one at a time, plus one.
            assertThat(describes)
                    .as("later attempts are made, in the background")
                    .isBetween(1, 4);
            assertThat(Thread.getAllStackTraces().keySet())
                    .filteredOn(t -> t.getName().equals("vended-storage-locate-lt"))
                    .allMatch(Thread::isDaemon);
        }
    }

    /** Connections the black-hole catalog accepted so far (each describe opens one). */
    private static int connections() {
        synchronized (HELD) {
            return HELD.size();
        }
    }
}
