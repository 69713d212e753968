package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;

/**
 * The {@code vended.storage.table.<name>.unity.*} keys: what is accepted, and each configuration
 * error, reported when the FileSystem is initialized, naming the key and never quoting a token.
 * The Delta module's {@code dev.vended.storage.delta.unity} tests open such tables, on a scripted
 * catalog and on the real server; here a catalog is only down.
 */
class UnityTableKeysTest {

    private static final String SECRET = "UNITY-FILE-TOKEN-SECRET-42";

    private static Configuration unityTable(String name) {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        String p = "vended.storage.table." + name + ".";
        c.set(p + "unity.uri", "http://127.0.0.1:9");
        c.set(p + "unity.table", "main.sales.orders");
        c.set(p + "options.aws_region", "us-east-1");
        return c;
    }

    private static IOException initFails(Configuration c) {
        Throwable t =
                catchThrowable(() -> FileSystem.newInstance(URI.create("s3a://bucket/"), c).close());
        assertThat(t).as("initialize fails").isInstanceOf(IOException.class);
        assertThat(t.getMessage()).doesNotContain(SECRET);
        return (IOException) t;
    }

    @Test
    void aUnityTableNeedsNoLocationAndItsReadAccessAsksForReadCredentials() throws Exception {
        Configuration c = unityTable("orders");
        c.set("vended.storage.table.orders.unity.timeout", "2s");
        c.set("vended.storage.table.orders.access", "read");
        TableConfig t = TableConfig.all(c).get("orders");
        assertThat(t.location).isNull();
        assertThat(t.catalog).isEqualTo(CatalogTables.Catalog.UNITY);
        assertThat(t.staticOptions()).containsEntry("access_mode", "read");
        // Initializing calls no catalog (the URI is a closed port).
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://bucket/"), c)) {
            assertThat(fs).isInstanceOf(VendedFileSystem.class);
        }
    }

    /**
     * A Unity table without a location whose catalog answers 503: every path operation fails at
     * once naming the table and the catalog's message, and {@code getTable} is asked about once a
     * second, not once per operation.
     */
    @Test
    void aUnityTableWhoseCatalogIsDownIsAskedAgainAtMostOnceASecond() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        HttpServer down = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        down.createContext(
                "/",
                ex -> {
                    try (ex) {
                        calls.incrementAndGet();
                        byte[] b =
                                "{\"error_code\":\"TEMPORARILY_UNAVAILABLE\",\"message\":\"catalog down\"}"
                                        .getBytes(StandardCharsets.UTF_8);
                        ex.getResponseHeaders().set("Content-Type", "application/json");
                        ex.sendResponseHeaders(503, b.length);
                        ex.getResponseBody().write(b);
                    }
                });
        down.start();
        try {
            Configuration c = unityTable("down");
            c.set("vended.storage.table.down.unity.uri", "http://127.0.0.1:" + down.getAddress().getPort());
            c.set("vended.storage.table.down.unity.timeout", "5s");
            int operations = 0;
            long start = System.nanoTime();
            try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://bucket/"), c)) {
                assertThat(calls.get()).as("initialize calls no catalog").isZero();
                // Path operations as fast as they fail, for 2.5 s.
                while (System.nanoTime() - start < 2_500_000_000L) {
                    operations++;
                    assertThatThrownBy(
                                    () -> fs.getFileStatus(new org.apache.hadoop.fs.Path("s3a://bucket/x")))
                            .isInstanceOf(IOException.class)
                            .hasMessageContaining("'down'")
                            .hasMessageContaining("catalog down");
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(operations).isGreaterThan(10);
            assertThat(calls.get())
                    .as("getTable calls for %d operations in %.1f s", operations, seconds)
                    .isBetween(2, (int) seconds + 2);
        } finally {
            down.stop(0);
        }
    }

    @Test
    void unityConfigurationErrorsNameTheKeyNeverTheToken() throws Exception {
        Path tokenFile = Files.createTempFile("unity-token", ".txt");
        Files.writeString(tokenFile, SECRET + "\n");
        try {
            Configuration both = unityTable("both");
            both.set("vended.storage.table.both.unity.token-env", "VENDED_TEST_LANCE_TOKEN");
            both.set("vended.storage.table.both.unity.token-file", tokenFile.toString());
            assertThat(initFails(both))
                    .hasMessageContaining("table 'both' sets both unity.token-env and unity.token-file");

            Configuration twoCatalogs = unityTable("two");
            twoCatalogs.set("vended.storage.table.two.lance.endpoint", "http://127.0.0.1:9");
            twoCatalogs.set("vended.storage.table.two.lance.table-id", "db$orders");
            assertThat(initFails(twoCatalogs))
                    .hasMessageContaining("sets both lance.endpoint and unity.uri: choose one");

            Configuration withProvider = unityTable("prov");
            withProvider.set(
                    "vended.storage.table.prov.provider.class", TestTableProvider.class.getName());
            assertThat(initFails(withProvider))
                    .hasMessageContaining("sets both provider.class and unity.uri");
        } finally {
            Files.delete(tokenFile);
        }

        Configuration noTable = unityTable("notable");
        noTable.unset("vended.storage.table.notable.unity.table");
        assertThat(initFails(noTable))
                .hasMessageContaining("vended.storage.table.notable.unity.table is required with unity.uri");

        Configuration noUri = unityTable("nouri");
        noUri.unset("vended.storage.table.nouri.unity.uri");
        noUri.set("vended.storage.table.nouri.location", "s3a://bucket/orders/");
        assertThat(initFails(noUri))
                .hasMessageContaining(
                        "vended.storage.table.nouri.unity.table needs vended.storage.table.nouri.unity.uri");

        Configuration unset = unityTable("unset");
        unset.set("vended.storage.table.unset.unity.token-env", "VENDED_TEST_NO_SUCH_VARIABLE");
        assertThat(initFails(unset))
                .hasMessageContaining("vended.storage.table.unset.unity.token-env")
                .hasMessageContaining("VENDED_TEST_NO_SUCH_VARIABLE");

        Configuration noFile = unityTable("nofile");
        noFile.set("vended.storage.table.nofile.unity.token-file", tokenFile.toString());
        assertThat(initFails(noFile))
                .hasMessageContaining("vended.storage.table.nofile.unity.token-file: cannot read");

        Configuration badTimeout = unityTable("slow");
        badTimeout.set("vended.storage.table.slow.unity.timeout", "soon");
        assertThat(initFails(badTimeout))
                .hasMessageContaining("vended.storage.table.slow.unity.timeout is not a duration");

        Configuration badName = unityTable("badname");
        badName.set("vended.storage.table.badname.unity.table", "orders");
        assertThat(initFails(badName)).hasMessageContaining("table 'badname'");

        Configuration unknown = unityTable("typo");
        unknown.set("vended.storage.table.typo.unity.tabel", "main.sales.orders");
        assertThat(initFails(unknown))
                .hasMessageContaining("unknown table setting vended.storage.table.typo.unity.tabel");
    }
}
