package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The {@code vended.storage.table.<name>.lance.*} keys the Spark tests do not use ({@code
 * lance.token-env}, {@code lance.delimiter}, {@code lance.timeout}) and their configuration
 * errors, against a minimal describe endpoint that records what the client sent (the real Lance
 * server runs in {@link SparkLanceTest}). The token comes from {@code VENDED_TEST_LANCE_TOKEN},
 * which the module's surefire configuration sets.
 */
class LanceTableKeysTest {

    private static final String BUCKET = "lance-keys";
    private static final String TOKEN_ENV = "VENDED_TEST_LANCE_TOKEN";

    private static LocalS3Server s3;
    private static HttpServer catalog;
    private static String catalogUrl;
    /** Method, path, Authorization header and body of every request the catalog received. */
    private static final List<String[]> REQUESTS = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        s3 = LocalS3Server.start(BUCKET);
        catalog = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        catalog.createContext("/", LanceTableKeysTest::describe);
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

    /** Answers a describe as a Lance catalog does: location and credentials only (C10). */
    private static void describe(HttpExchange ex) throws IOException {
        try (ex) {
            String body;
            try (InputStream in = ex.getRequestBody()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            String path = ex.getRequestURI().getRawPath();
            REQUESTS.add(
                    new String[] {
                        ex.getRequestMethod(),
                        path,
                        String.valueOf(ex.getRequestHeaders().getFirst("Authorization")),
                        body
                    });
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
            byte[] answer =
                    ("{\"location\":\"s3://" + BUCKET + "/cat/orders\",\"storage_options\":{"
                                    + options
                                    + "}}")
                            .getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, answer.length);
            ex.getResponseBody().write(answer);
        }
    }

    private static Configuration lanceTable(String name) {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        String p = "vended.storage.table." + name + ".";
        c.set(p + "lance.endpoint", catalogUrl);
        c.set(p + "lance.table-id", "db.orders");
        c.set(p + "lance.delimiter", ".");
        c.set(p + "lance.timeout", "5s");
        c.set(p + "options.aws_endpoint", s3.endpoint());
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        return c;
    }

    private static FileSystem fs(Configuration c) throws IOException {
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    @Test
    void tokenEnvDelimiterAndTimeoutReachTheCatalogAndTheCatalogLocatesTheTable() throws Exception {
        String token = System.getenv(TOKEN_ENV);
        Assumptions.assumeTrue(token != null, TOKEN_ENV + " is set by the module's surefire");
        Configuration c = lanceTable("envtok");
        c.set("vended.storage.table.envtok.lance.token-env", TOKEN_ENV);
        int before = REQUESTS.size();
        try (FileSystem fs = fs(c)) {
            assertEquals(before, REQUESTS.size(), "initialize calls no catalog");
            assertEquals(
                    "envtok",
                    ((VendedFileSystem) fs)
                            .tableOf(new org.apache.hadoop.fs.Path("s3a://" + BUCKET + "/cat/orders/x")));
            assertEquals(before + 1, REQUESTS.size(), "one describe locates and seeds the table");
            String[] r = REQUESTS.get(before);
            assertEquals("POST", r[0]);
            assertTrue(r[1].endsWith("/describe"), r[1]);
            assertTrue(r[1].replace("%2E", ".").contains("db.orders"), "delimiter '.': " + r[1]);
            assertEquals("Bearer " + token, r[2], "the token of " + TOKEN_ENV);
            assertTrue(r[3].replace(" ", "").contains("[\"db\",\"orders\"]"), r[3]);

            org.apache.hadoop.fs.Path file =
                    new org.apache.hadoop.fs.Path("s3a://" + BUCKET + "/cat/orders/part-0");
            byte[] data = "rows".getBytes(StandardCharsets.UTF_8);
            try (FSDataOutputStream out = fs.create(file, true)) {
                out.write(data);
            }
            byte[] back = new byte[data.length];
            try (FSDataInputStream in = fs.open(file)) {
                in.readFully(back);
            }
            assertArrayEquals(data, back);
            assertEquals("envtok", ((VendedFileSystem) fs).tableOf(file));
            // Outside the catalog's location: no table.
            assertThrows(
                    java.io.FileNotFoundException.class,
                    () ->
                            fs.getFileStatus(
                                    new org.apache.hadoop.fs.Path("s3a://" + BUCKET + "/x")));
        }
        assertEquals(before + 1, REQUESTS.size(), "valid seeded credentials: no further describe");
    }

    @Test
    void lanceConfigurationErrorsNameTheKeyNeverTheToken() throws Exception {
        Configuration unset = lanceTable("unset");
        unset.set("vended.storage.table.unset.lance.token-env", "VENDED_TEST_NO_SUCH_VARIABLE");
        IOException e = assertThrows(IOException.class, () -> fs(unset));
        assertTrue(
                e.getMessage().contains("vended.storage.table.unset.lance.token-env")
                        && e.getMessage().contains("VENDED_TEST_NO_SUCH_VARIABLE"),
                e.getMessage());

        Path tokenFile = Files.createTempFile("lance-token", ".txt");
        Files.writeString(tokenFile, "FILE-TOKEN-SECRET-123\n");
        try {
            Configuration both = lanceTable("both");
            both.set("vended.storage.table.both.lance.token-env", TOKEN_ENV);
            both.set("vended.storage.table.both.lance.token-file", tokenFile.toString());
            e = assertThrows(IOException.class, () -> fs(both));
            assertTrue(
                    e.getMessage().contains("lance.token-env and lance.token-file"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("FILE-TOKEN-SECRET-123"), e.getMessage());
        } finally {
            Files.delete(tokenFile);
        }

        Configuration noFile = lanceTable("nofile");
        noFile.set("vended.storage.table.nofile.lance.token-file", tokenFile.toString());
        e = assertThrows(IOException.class, () -> fs(noFile));
        assertTrue(
                e.getMessage().contains("vended.storage.table.nofile.lance.token-file"),
                e.getMessage());

        Configuration noId = lanceTable("noid");
        noId.unset("vended.storage.table.noid.lance.table-id");
        e = assertThrows(IOException.class, () -> fs(noId));
        assertTrue(
                e.getMessage().contains("vended.storage.table.noid.lance.table-id"),
                e.getMessage());

        Configuration twoSources = lanceTable("two");
        twoSources.set(
                "vended.storage.table.two.provider.class", TestTableProvider.class.getName());
        e = assertThrows(IOException.class, () -> fs(twoSources));
        assertTrue(e.getMessage().contains("provider.class and lance.endpoint"), e.getMessage());

        for (String[] r : REQUESTS) {
            assertFalse(r[2].contains("FILE-TOKEN-SECRET-123"), "no describe for a bad table");
        }
    }
}
