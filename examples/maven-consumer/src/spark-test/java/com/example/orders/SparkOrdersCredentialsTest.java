package com.example.orders;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Extension;
import java.io.IOException;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The README's Spark provider, created as VendedFileSystem creates it, against a fake catalog. */
class SparkOrdersCredentialsTest {
    @RegisterExtension
    static LocalS3Extension s3 = LocalS3Extension.create().bucket("bucket");

    private static final String TOKEN = "catalog-token-for-the-test";
    /** Where the provider of table "orders" finds its settings (provider.conf.<key>). */
    private static final String PROVIDER_CONF = "vended.storage.table.orders.provider.conf.";

    private final List<String> paths = new CopyOnWriteArrayList<>();
    private HttpServer catalog;

    @BeforeEach
    void startCatalog() throws IOException {
        // The stand-in catalog of CatalogClient.http: key=value credentials for a bearer token.
        catalog = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        catalog.createContext(
                "/v1/",
                exchange -> {
                    paths.add(exchange.getRequestURI().getPath());
                    String auth = exchange.getRequestHeaders().getFirst("Authorization");
                    byte[] body = new byte[0];
                    int status = 401;
                    if (("Bearer " + TOKEN).equals(auth)) {
                        Properties answer = new Properties();
                        answer.putAll(s3.mintCredentials(Duration.ofMinutes(15)).toOptions());
                        StringWriter text = new StringWriter();
                        answer.store(text, null);
                        body = text.toString().getBytes(StandardCharsets.UTF_8);
                        status = 200;
                    }
                    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        catalog.start();
    }

    @AfterEach
    void stopCatalog() {
        catalog.stop(0);
    }

    private Configuration conf(Path tokenFile) {
        Configuration conf = new Configuration(false);
        conf.set(PROVIDER_CONF + "catalog-url", "http://127.0.0.1:" + catalog.getAddress().getPort() + "/v1");
        conf.set(PROVIDER_CONF + "token-file", tokenFile.toString());
        return conf;
    }

    @Test
    @Timeout(60)
    void theFileSystemsConstructorReadsTheTokenFileAndAsksTheCatalog(@TempDir Path dir)
            throws Exception {
        Path tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "\n");
        var provider = new SparkOrdersCredentials(conf(tokenFile), "orders");
        assertEquals("my-catalog:db.orders", provider.providerId());

        Map<String, String> options = new HashMap<>(s3.endpointOptions());
        options.putAll(provider.fetchStorageOptions());
        assertEquals(List.of("/v1/tables/db.orders/credentials"), paths);
        try (ObjectStore store = ObjectStore.open(s3.uri("warehouse/orders/"), options, provider)) {
            store.put("part-0", new byte[] {7});
            assertArrayEquals(new byte[] {7}, store.get("part-0"));
        }
        assertEquals(1, paths.size(), "15-minute credentials: no second catalog call");
    }

    @Test
    void aWrongTokenOrAMissingKeyIsAClearError(@TempDir Path dir) throws Exception {
        Path wrong = Files.writeString(dir.resolve("token"), "not-the-token");
        var provider = new SparkOrdersCredentials(conf(wrong), "orders");
        IOException refused = assertThrows(IOException.class, provider::fetchStorageOptions);
        assertTrue(refused.getMessage().endsWith("answered HTTP 401"), refused.getMessage());
        assertTrue(!refused.getMessage().contains("not-the-token"), "no secret in the message");

        Configuration noUrl = conf(wrong);
        noUrl.unset(PROVIDER_CONF + "catalog-url");
        IOException missing =
                assertThrows(IOException.class, () -> new SparkOrdersCredentials(noUrl, "orders"));
        assertEquals(
                "set spark.hadoop.vended.storage.table.orders.provider.conf.catalog-url (Hadoop key"
                        + " vended.storage.table.orders.provider.conf.catalog-url)",
                missing.getMessage());
    }
}
