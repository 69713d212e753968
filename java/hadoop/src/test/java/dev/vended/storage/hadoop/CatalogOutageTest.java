package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import dev.vended.storage.catalog.CatalogException;
import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * A catalog that is down for one table located by its catalog (no {@code location}) never breaks
 * the FileSystem or the other tables: the other table's operations all succeed, the located
 * table's fail with an error naming it and the catalog's failure, the describes made are bounded
 * by the backoff, and the same FileSystem serves the table once the catalog answers again.
 */
class CatalogOutageTest {

    private static final String BUCKET = "outage";

    private static LocalS3Server s3;
    private static HttpServer catalog;
    private static String catalogUrl;
    private static final AtomicBoolean UP = new AtomicBoolean();
    private static final AtomicInteger DESCRIBES = new AtomicInteger();

    @BeforeAll
    static void start() throws IOException {
        assertThat(System.getenv("VENDED_TEST_LANCE_TOKEN"))
                .as("set by the module's surefire configuration")
                .isNotBlank();
        s3 = LocalS3Server.start(BUCKET);
        TestTableProvider.server = s3;
        catalog = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        catalog.createContext("/", CatalogOutageTest::describe);
        catalog.setExecutor(Executors.newFixedThreadPool(4));
        catalog.start();
        catalogUrl = "http://127.0.0.1:" + catalog.getAddress().getPort();
    }

    @AfterAll
    static void stop() {
        if (catalog != null) {
            catalog.stop(0);
        }
        if (s3 != null) {
            s3.close();
        }
    }

    /** 503 while down; the table's location and one-hour credentials while up. */
    private static void describe(HttpExchange ex) throws IOException {
        try (ex) {
            try (InputStream in = ex.getRequestBody()) {
                in.readAllBytes();
            }
            DESCRIBES.incrementAndGet();
            byte[] answer;
            int status;
            if (UP.get()) {
                Map<String, String> issued = AdminClient.issue(s3.endpoint(), 3_600_000L, null);
                StringBuilder options = new StringBuilder();
                for (String k :
                        List.of(
                                "aws_access_key_id",
                                "aws_secret_access_key",
                                "aws_session_token",
                                "expires_at_millis")) {
                    if (issued.get(k) != null) {
                        options.append(options.length() == 0 ? "\"" : ",\"")
                                .append(k)
                                .append("\":\"")
                                .append(issued.get(k))
                                .append('"');
                    }
                }
                answer =
                        ("{\"location\":\"s3://" + BUCKET + "/lance/t\",\"storage_options\":{"
                                        + options
                                        + "}}")
                                .getBytes(StandardCharsets.UTF_8);
                status = 200;
            } else {
                answer =
                        "{\"error\":\"maintenance\",\"code\":18}".getBytes(StandardCharsets.UTF_8);
                status = 503;
            }
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, answer.length);
            ex.getResponseBody().write(answer);
        }
    }

    /** A static-provider table at {@code /static/} and a Lance table located by its catalog. */
    private static Configuration conf(String suffix, String endpoint) {
        Configuration c = VendedFileSystemTest.conf(s3);
        String st = "st" + suffix;
        VendedFileSystemTest.table(c, s3, st, "s3a://" + BUCKET + "/static/", BUCKET + "/static/");
        String p = "vended.storage.table.lt" + suffix + ".";
        c.set(p + "lance.endpoint", endpoint);
        c.set(p + "lance.table-id", "db$" + suffix);
        c.set(p + "lance.token-env", "VENDED_TEST_LANCE_TOKEN");
        c.set(p + "lance.timeout", "2s");
        c.set(p + "options.aws_endpoint", s3.endpoint());
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        return c;
    }

    private static FileSystem fs(Configuration c) throws IOException {
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    private static void roundTrip(FileSystem fs, Path p, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(data);
        }
        byte[] back = new byte[data.length];
        try (FSDataInputStream in = fs.open(p)) {
            in.readFully(back);
        }
        assertThat(back).isEqualTo(data);
        assertThat(fs.getFileStatus(p).getLen()).isEqualTo(data.length);
    }

    /** The error of an operation on the unlocated table: names it and the catalog's failure. */
    private static IOException lanceFailure(FileSystem fs, Path p, String table) {
        IOException e = catchThrowableOfType(() -> fs.getFileStatus(p), IOException.class);
        assertThat(e).isNotNull().isNotInstanceOf(FileNotFoundException.class);
        assertThat(e.getMessage())
                .contains("cannot tell which table covers " + p)
                .contains("table '" + table + "' is unavailable")
                .doesNotContain(System.getenv("VENDED_TEST_LANCE_TOKEN"));
        return e;
    }

    /**
     * Whether {@code e} was answered from the native memory of a recent failure (no catalog call):
     * its message says when the next attempt is.
     */
    private static boolean remembered(IOException e) {
        return e.getMessage().contains("a recent attempt failed; next attempt in");
    }

    /** Waits for the background locate attempts of {@code table} in flight, if any. */
    static void joinLocators(String table) throws InterruptedException {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("vended-storage-locate-" + table)) {
                t.join(TimeUnit.SECONDS.toMillis(30));
            }
        }
    }

    /** At most one describe per backoff step (1 s doubling) in {@code elapsedMillis}, plus one. */
    private static int backoffBound(long elapsedMillis) {
        int attempts = 1;
        for (long at = 1_000, step = 2_000; at <= elapsedMillis; at += step, step *= 2) {
            attempts++;
        }
        return attempts + 1;
    }

    @Test
    @Timeout(120)
    void catalogAnswering503BreaksOnlyItsTableAndItsTableWorksOnceItAnswers() throws Exception {
        UP.set(false);
        Configuration c = conf("a", catalogUrl);
        int before = DESCRIBES.get();
        long start = System.nanoTime();
        try (FileSystem fs = fs(c)) {
            assertThat(DESCRIBES.get()).as("initialize calls no catalog").isEqualTo(before);
            Path lance = new Path("s3a://" + BUCKET + "/lance/t/data/part-0");
            // Failures of this loop not answered from the remembered one (the attempts may as well
            // be made by the other operations, which locate the table before routing).
            // (A path operation reports the table's last failure: count each native one once.)
            Set<Throwable> fresh = Collections.newSetFromMap(new IdentityHashMap<>());
            for (int i = 0; i < 50; i++) {
                roundTrip(fs, new Path("s3a://" + BUCKET + "/static/f" + i), ("row " + i).getBytes());
                IOException e = lanceFailure(fs, lance, "lta");
                assertThat(e.getMessage()).contains("HTTP 503").contains("maintenance");
                assertThat(e.getCause().getCause()).isInstanceOf(CatalogException.class);
                if (!remembered(e)) {
                    fresh.add(e.getCause().getCause());
                }
            }
            // 8 threads at once on the unlocated table: no describe storm.
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    futures.add(
                            pool.submit(
                                    () -> {
                                        for (int i = 0; i < 20; i++) {
                                            lanceFailure(fs, lance, "lta");
                                        }
                                        return null;
                                    }));
                }
                for (Future<?> f : futures) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            int attempts = fresh.size();
            joinLocators("lta");
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            int during = DESCRIBES.get() - before;
            System.out.printf(
                    "catalog 503: 50 round trips + 210 failed operations in %d ms, %d describes,"
                            + " %d failures of the sequential loop not remembered%n",
                    elapsed, during, attempts);
            assertThat(during).isBetween(1, backoffBound(elapsed));
            assertThat(attempts).isBetween(0, during);
            assertThat(((VendedFileSystem) fs).tableOf(lance)).isNull();
            assertThat(TestTableProvider.calls("sta")).as("one-hour credentials").isEqualTo(1);

            // The catalog answers again: the same FileSystem serves the table after the backoff.
            UP.set(true);
            int tries = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true) {
                tries++;
                try {
                    roundTrip(fs, lance, "lance rows".getBytes());
                    break;
                } catch (IOException e) {
                    assertThat(e.getMessage()).contains("table 'lta' is unavailable");
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(50); // the backoff has no signal: poll within a bound
                }
            }
            int after = DESCRIBES.get() - before;
            assertThat(after).as("one describe located the table").isEqualTo(during + 1);
            assertThat(((VendedFileSystem) fs).tableOf(lance)).isEqualTo("lta");
            for (int i = 0; i < 20; i++) {
                roundTrip(fs, new Path("s3a://" + BUCKET + "/lance/t/data/p" + i), new byte[] {1});
            }
            assertThat(DESCRIBES.get() - before).as("seeded credentials: no more").isEqualTo(after);
            assertThat(fs.toString()).contains("lta=s3://" + BUCKET + "/lance/t/");
            System.out.printf("catalog back: served after %d tries%n", tries);
        }
        // Another FileSystem of the JVM knows the table without a describe.
        try (FileSystem fs = fs(c)) {
            roundTrip(fs, new Path("s3a://" + BUCKET + "/lance/t/data/again"), new byte[] {2});
            assertThat(((VendedFileSystem) fs).tableOf(new Path("s3a://" + BUCKET + "/lance/t/x")))
                    .isEqualTo("lta");
        }
        assertThat(TestTableProvider.calls("sta")).isEqualTo(1);
    }

    @Test
    @Timeout(120)
    void closedCatalogPortBreaksOnlyItsTableAndFailuresAreRemembered() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        Configuration c = conf("b", "http://127.0.0.1:" + port);
        long start = System.nanoTime();
        try (FileSystem fs = fs(c)) {
            Path lance = new Path("s3a://" + BUCKET + "/lance/t/part-0");
            // Failures of this loop not answered from the remembered one (the attempts may as well
            // be made by the other operations, which locate the table before routing).
            // (A path operation reports the table's last failure: count each native one once.)
            Set<Throwable> fresh = Collections.newSetFromMap(new IdentityHashMap<>());
            for (int i = 0; i < 50; i++) {
                roundTrip(fs, new Path("s3a://" + BUCKET + "/static/g" + i), ("row " + i).getBytes());
                // mkdirs and listStatus of the bucket root work too (a known table leads there)
                assertThat(fs.listStatus(new Path("s3a://" + BUCKET + "/"))).isNotEmpty();
                IOException e = lanceFailure(fs, lance, "ltb");
                assertThat(e.getMessage()).contains("127.0.0.1:" + port);
                assertThat(e.getCause().getCause()).isInstanceOf(CatalogException.class);
                if (!remembered(e)) {
                    fresh.add(e.getCause().getCause());
                }
            }
            int attempts = fresh.size();
            long elapsed = (System.nanoTime() - start) / 1_000_000;
            System.out.printf(
                    "catalog port closed: 50 round trips in %d ms, %d lance failures not"
                            + " remembered%n",
                    elapsed, attempts);
            assertThat(TestTableProvider.calls("stb")).as("one-hour credentials").isEqualTo(1);
            // Each failure not answered from memory is one attempt to reach the catalog (no
            // server to count them: at most one per backoff step); all others were remembered.
            assertThat(attempts).isBetween(0, backoffBound(elapsed));
            // Another bucket's FileSystem opens and answers despite the unreachable catalog.
            try (FileSystem other = FileSystem.newInstance(URI.create("s3a://elsewhere/"), c)) {
                IOException e =
                        catchThrowableOfType(
                                () -> other.getFileStatus(new Path("s3a://elsewhere/x")),
                                IOException.class);
                assertThat(e).isNotInstanceOf(FileNotFoundException.class);
                assertThat(e.getMessage()).contains("table 'ltb' is unavailable");
            }
        }
    }
}
