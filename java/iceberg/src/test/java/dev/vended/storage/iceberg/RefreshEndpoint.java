package dev.vended.storage.iceberg;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A catalog's {@code loadCredentials} endpoint on 127.0.0.1 for one table: every call mints a key
 * of the local S3 endpoint living {@code ttl}, confined to the table's prefix, and answers it as
 * one {@code storage-credentials} entry. Records the keys it vended.
 */
final class RefreshEndpoint implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    static final String PATH = "/catalog/v1/namespaces/db/tables/t/credentials";

    private final HttpServer server;
    private final LocalS3Extension s3;
    private final Duration ttl;
    private final String tablePrefix;
    final List<VendedCredentials> vended = new CopyOnWriteArrayList<>();

    RefreshEndpoint(LocalS3Extension s3, Duration ttl, String tablePrefix) throws IOException {
        this.s3 = s3;
        this.ttl = ttl;
        this.tablePrefix = tablePrefix;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext(
                PATH,
                ex -> {
                    VendedCredentials c = mint();
                    byte[] out =
                            JSON.writeValueAsBytes(
                                    Map.of(
                                            "storage-credentials",
                                            List.of(Map.of("prefix", s3.uri(tablePrefix), "config", config(c)))));
                    ex.getResponseHeaders().add("Content-Type", "application/json");
                    ex.sendResponseHeaders(200, out.length);
                    ex.getResponseBody().write(out);
                    ex.close();
                });
        server.start();
    }

    /** The catalog URI (Iceberg's {@code uri} property). */
    String catalogUri() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/catalog";
    }

    /** A key for the table prefix, recorded. */
    VendedCredentials mint() {
        VendedCredentials c = s3.mintCredentials(ttl, tablePrefix + "/");
        vended.add(c);
        return c;
    }

    /** The Iceberg storage-credential config of a key. */
    static Map<String, String> config(VendedCredentials c) {
        return Map.of(
                "s3.access-key-id", c.accessKeyId(),
                "s3.secret-access-key", c.secretAccessKey(),
                "s3.session-token", c.sessionToken(),
                "s3.session-token-expires-at-ms", Long.toString(c.expiresAtMillis()));
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
