package dev.vended.storage.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RequestRecord;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.StorageCredential;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Several tables in one bucket, each with a key scoped to its own prefix (as Polaris vends them),
 * through {@link VendedFileIO}: cases C28 (config-only credentials with per-table refresh
 * answers), C29 (a denied path costs one request, no catalog call, no valid key), C30 (a catalog
 * {@code uri} that is not HTTP beside an absolute refresh endpoint), and both table paths for a
 * minute across rotations.
 */
@Timeout(180)
class ScopedTablesTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("scoped");

    @BeforeAll
    static void loadNative() {
        Map<String, String> props = new HashMap<>();
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        S3.storageOptions().forEach((k, v) -> props.put(VendedFileIO.OPTION_PREFIX + k, v));
        try (VendedFileIO io = new VendedFileIO()) {
            io.initialize(props);
            assertThat(io.newInputFile(S3.uri("warm")).exists()).isFalse();
        }
    }

    /**
     * A table's FileIO as Iceberg's REST catalog builds it: the catalog's properties merged with
     * the table's config (the catalog {@code uri}, the refresh endpoint and, for a config-only
     * catalog, the first key), then {@link VendedFileIO#setCredentials} when the answer has
     * {@code storage-credentials}.
     */
    private static VendedFileIO tableIo(
            String uri, String endpoint, VendedCredentials configKey, List<StorageCredential> credentials) {
        Map<String, String> props = new HashMap<>();
        props.put("uri", uri);
        props.put("client.refresh-credentials-endpoint", endpoint);
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        if (configKey != null) {
            props.putAll(RefreshEndpoint.config(configKey));
        }
        VendedFileIO io = new VendedFileIO();
        io.initialize(props);
        if (credentials != null) {
            io.setCredentials(credentials);
        }
        return io;
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(VendedFileIO io, String location, byte[] data) throws IOException {
        try (PositionOutputStream out = io.newOutputFile(location).createOrOverwrite()) {
            out.write(data);
        }
    }

    private static byte[] read(VendedFileIO io, String location) throws IOException {
        try (SeekableInputStream in = io.newInputFile(location).newStream()) {
            return in.readAllBytes();
        }
    }

    /** Requests refused for the credential itself (expired, unknown, revoked, bad token). */
    private static long credentialRejections(List<VendedCredentials> keys) {
        long n = 0;
        for (VendedCredentials c : keys) {
            KeyStats s = S3.stats(c.accessKeyId());
            n += s.rejected() - s.denied();
        }
        return n;
    }

    private static long denied(List<VendedCredentials> keys) {
        long n = 0;
        for (VendedCredentials c : keys) {
            n += S3.stats(c.accessKeyId()).denied();
        }
        return n;
    }

    /**
     * C28: the first key comes in the table's config only (Iceberg never calls setCredentials)
     * and the refresh endpoint answers one entry per table prefix. Reads and writes go on across
     * at least three expiries of 2 s keys with no rejection.
     */
    @Test
    void c28_configOnlyCredentialsRefreshThroughPerTableAnswers() throws Exception {
        try (RefreshEndpoint catalog = new RefreshEndpoint(S3, Duration.ofSeconds(2), "c28/wh/t1")) {
            String endpoint = "v1/namespaces/db/tables/t/credentials";
            try (VendedFileIO io = tableIo(catalog.catalogUri(), endpoint, catalog.mint(), null)) {
                int files = 0;
                long deadline = System.currentTimeMillis() + 20_000;
                while ((catalog.vended.size() < 4 || files < 10) && System.currentTimeMillis() < deadline) {
                    String location = S3.uri("c28/wh/t1/" + (files % 2 == 0 ? "data/" : "metadata/") + files);
                    write(io, location, bytes(512, files));
                    assertThat(read(io, location)).isEqualTo(bytes(512, files));
                    files++;
                }
                assertThat(catalog.vended).as("refreshed past three expiries").hasSizeGreaterThanOrEqualTo(4);
                assertThat(io.listPrefix(S3.uri("c28/wh/t1/data"))).hasSize((files + 1) / 2);
                assertThat(credentialRejections(catalog.vended)).isZero();
                assertThat(denied(catalog.vended)).isZero();
            }
        }
    }

    /**
     * C30: a JDBC catalog's {@code uri} beside an absolute refresh endpoint serves and refreshes;
     * a relative endpoint beside it is refused naming {@code uri}.
     */
    @Test
    void c30_aNonHttpCatalogUriServesBesideAnAbsoluteEndpoint() throws Exception {
        try (RefreshEndpoint catalog = new RefreshEndpoint(S3, Duration.ofSeconds(2), "c30/wh/t1")) {
            String absolute = catalog.catalogUri().replace("/catalog", "") + RefreshEndpoint.PATH;
            String jdbc = "jdbc:sqlite:file:/tmp/catalog.db";
            try (VendedFileIO io = tableIo(jdbc, absolute, catalog.mint(), null)) {
                int files = 0;
                long deadline = System.currentTimeMillis() + 20_000;
                while ((catalog.vended.size() < 3 || files < 5) && System.currentTimeMillis() < deadline) {
                    String location = S3.uri("c30/wh/t1/data/" + files);
                    write(io, location, bytes(100, files));
                    assertThat(read(io, location)).isEqualTo(bytes(100, files));
                    files++;
                }
                assertThat(catalog.vended).as("refreshed past two expiries").hasSizeGreaterThanOrEqualTo(3);
                assertThat(credentialRejections(catalog.vended)).isZero();
            }
            VendedCredentials key = catalog.mint();
            try (VendedFileIO io = tableIo(jdbc, "v1/namespaces/db/tables/t/credentials", key, null)) {
                assertThatThrownBy(() -> io.newInputFile(S3.uri("c30/wh/t1/data/0")).exists())
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("uri")
                        .hasMessageContaining(S3.uri("c30/wh/t1/data/0"))
                        .hasMessageNotContaining(key.secretAccessKey());
            }
        }
    }

    /**
     * C29: 1,000 {@code exists()} of a neighbour table's file from a table's config-only FileIO
     * are refused (1,000 HEADs and one probe GET), cost no catalog call, and the table's own
     * reads and key keep working. A FileIO given storage credentials refuses the neighbour
     * without a request: no credential covers it.
     */
    @Test
    void c29_aThousandDeniedChecksCostOneRequestEachAndNoValidKey() throws Exception {
        try (RefreshEndpoint t1 = new RefreshEndpoint(S3, Duration.ofMinutes(5), "c29/wh/t1")) {
            String endpoint = "v1/namespaces/db/tables/t/credentials";
            String neighbour = "c29/wh/t2/metadata/v1.json";
            String mine = S3.uri("c29/wh/t1/data/0.parquet");
            try (VendedFileIO io = tableIo(t1.catalogUri(), endpoint, t1.mint(), null)) {
                write(io, mine, bytes(64, 1));
                int callsBefore = t1.vended.size();
                long headsBefore = count("HEAD", neighbour);
                long getsBefore = count("GET", neighbour);
                for (int i = 0; i < 1_000; i++) {
                    assertThatThrownBy(() -> io.newInputFile(S3.uri(neighbour)).exists())
                            .isInstanceOf(UncheckedIOException.class)
                            .hasMessageContaining("AccessDenied")
                            .hasMessageContaining(S3.uri(neighbour));
                    if (i % 100 == 0) {
                        assertThat(read(io, mine)).isEqualTo(bytes(64, 1));
                    }
                }
                assertThat(count("HEAD", neighbour) - headsBefore).isEqualTo(1_000);
                assertThat(count("GET", neighbour) - getsBefore).as("one probe").isEqualTo(1);
                assertThat(t1.vended.size() - callsBefore).as("catalog calls").isZero();
                assertThat(credentialRejections(t1.vended)).isZero();
            }
            List<StorageCredential> vended =
                    List.of(StorageCredential.create(S3.uri("c29/wh/t1"), RefreshEndpoint.config(t1.mint())));
            try (VendedFileIO io = tableIo(t1.catalogUri(), endpoint, null, vended)) {
                long before = count("HEAD", neighbour) + count("GET", neighbour);
                int callsBefore = t1.vended.size();
                assertThatThrownBy(() -> io.newInputFile(S3.uri(neighbour)).exists())
                        .isInstanceOf(UncheckedIOException.class)
                        .hasMessageContaining("no storage credential's prefix matches")
                        .hasMessageContaining(S3.uri("c29/wh/t2"));
                assertThat(count("HEAD", neighbour) + count("GET", neighbour)).isEqualTo(before);
                assertThat(t1.vended.size()).isEqualTo(callsBefore);
                assertThat(read(io, mine)).isEqualTo(bytes(64, 1));
            }
        }
    }

    private static long count(String method, String key) {
        return S3.requests().stream()
                .filter((RequestRecord r) -> r.method().equals(method) && key.equals(r.key()))
                .count();
    }

    /**
     * Two tables in one bucket, each with a key scoped to its prefix living 3 s, each served for a
     * minute by two FileIOs at once: one given its credentials by setCredentials, one by its
     * config only. Every write is read back by the table's other FileIO, and every 50th round each
     * FileIO checks the other table's file (refused). 0 requests refused for a credential, 0 reads
     * failed.
     */
    @Test
    void scopedKeysForTwoTablesServeBothPathsForAMinute() throws Exception {
        String endpoint = "v1/namespaces/db/tables/t/credentials";
        try (RefreshEndpoint t1 = new RefreshEndpoint(S3, Duration.ofSeconds(3), "minute/wh/t1");
                RefreshEndpoint t2 = new RefreshEndpoint(S3, Duration.ofSeconds(3), "minute/wh/t2")) {
            List<RefreshEndpoint> tables = List.of(t1, t2);
            List<VendedFileIO[]> ios = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                RefreshEndpoint c = tables.get(t);
                String prefix = S3.uri("minute/wh/t" + (t + 1));
                VendedFileIO viaCredentials = tableIo(c.catalogUri(), endpoint, null,
                        List.of(StorageCredential.create(prefix, RefreshEndpoint.config(c.mint()))));
                VendedFileIO viaConfig = tableIo(c.catalogUri(), endpoint, c.mint(), null);
                ios.add(new VendedFileIO[] {viaCredentials, viaConfig});
            }
            AtomicLong rounds = new AtomicLong();
            AtomicLong deniedChecks = new AtomicLong();
            long deadline = System.currentTimeMillis() + 60_000;
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    for (int w = 0; w < 2; w++) {
                        int table = t + 1;
                        int way = w;
                        VendedFileIO writer = ios.get(t)[way];
                        VendedFileIO reader = ios.get(t)[1 - way];
                        String other = S3.uri("minute/wh/t" + (3 - table) + "/data/w0-0.parquet");
                        workers.add(pool.submit(() -> {
                            for (int i = 0; System.currentTimeMillis() < deadline && i < 1_000_000; i++) {
                                String location = S3.uri("minute/wh/t" + table + "/data/w" + way + "-" + i + ".parquet");
                                byte[] data = bytes(1024, i);
                                write(writer, location, data);
                                assertThat(read(reader, location)).isEqualTo(data);
                                rounds.incrementAndGet();
                                if (i % 50 == 49) {
                                    // Given credentials: none covers the other table (no
                                    // request). Config only: the config's key is refused
                                    // (AccessDenied) until it expires; then this table's
                                    // refresh answer is never used for the other (fails closed).
                                    String refused = "no storage credential's prefix matches";
                                    assertThatThrownBy(() -> writer.newInputFile(other).exists())
                                            .satisfies(e -> assertThat(e.getMessage())
                                                    .containsAnyOf(refused, way == 0 ? refused : "AccessDenied"));
                                    deniedChecks.incrementAndGet();
                                }
                            }
                            return null;
                        }));
                    }
                }
                for (Future<?> w : workers) {
                    w.get();
                }
            } finally {
                pool.shutdownNow();
            }
            for (VendedFileIO[] pair : ios) {
                pair[0].close();
                pair[1].close();
            }
            List<VendedCredentials> keys = new ArrayList<>(t1.vended);
            keys.addAll(t2.vended);
            System.out.printf("scoped tables: %d rounds, %d denied checks, %d keys vended (t1 %d, t2 %d), "
                            + "%d credential rejections, %d denied requests%n",
                    rounds.get(), deniedChecks.get(), keys.size(), t1.vended.size(), t2.vended.size(),
                    credentialRejections(keys), denied(keys));
            assertThat(credentialRejections(keys)).isZero();
            assertThat(rounds.get()).isGreaterThan(100);
            // Two stores per table refreshing at about half of 3 s for a minute, and the stores
            // the denied checks opened: about 40 calls per store.
            assertThat(t1.vended.size()).isBetween(30, 250);
            assertThat(t2.vended.size()).isBetween(30, 250);
        }
    }
}
