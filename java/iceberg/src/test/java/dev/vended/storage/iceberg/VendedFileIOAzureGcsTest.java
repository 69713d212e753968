package dev.vended.storage.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProcess;
import dev.vended.storage.testkit.EmulatorProxy;
import dev.vended.storage.testkit.FakeGcsServer;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.StorageCredential;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One VendedFileIO on Azure (Azurite, {@code abfss://} with Iceberg's {@code adls.sas-token.*}
 * keys), GCS (fake-gcs-server behind the testkit's token-checking proxy, {@code gcs.oauth2.*}
 * keys) and S3 (the local S3 endpoint) at once: write, read back, list, bulk delete; and
 * short-lived SAS tokens and OAuth2 tokens rotated through a catalog refresh endpoint with no
 * rejection. A missing emulator fails the class unless {@code VENDED_STORAGE_SKIP_EMULATORS=1},
 * which skips it (as in java/tests).
 */
@Timeout(120)
class VendedFileIOAzureGcsTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("tables");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONTAINER = "vended";
    private static final String BUCKET = "vended";
    /** The account host Iceberg's ADLS locations name (keys {@code adls.sas-token.<host>}). */
    private static final String ACCOUNT_HOST = AzuriteServer.ACCOUNT + ".dfs.core.windows.net";

    private static AzuriteServer azurite;
    private static EmulatorProxy azureProxy;
    private static FakeGcsServer gcs;

    private static void requireInstalled(String relative) {
        Path path = EmulatorProcess.toolsDirectory().resolve(relative);
        if (Files.exists(path)) {
            return;
        }
        boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
        if (skip) {
            System.out.println(path + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
        }
        Assumptions.assumeFalse(skip, path + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
        throw new AssertionError(path + " not found: run bin/install-emulators.sh (or set -D"
                + EmulatorProcess.TOOLS_PROPERTY + ", or VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
    }

    @BeforeAll
    static void start() throws Exception {
        requireInstalled(AzuriteServer.TOOL);
        requireInstalled(FakeGcsServer.TOOL);
        azurite = AzuriteServer.start();
        azurite.createContainer(CONTAINER);
        azureProxy = new EmulatorProxy(azurite.url(), null); // counts Azurite's rejections
        gcs = FakeGcsServer.start();
        gcs.createBucket(BUCKET);
    }

    @AfterAll
    static void stop() {
        if (azureProxy != null) {
            azureProxy.close();
        }
        if (azurite != null) {
            azurite.close();
        }
        if (gcs != null) {
            gcs.close();
        }
    }

    private static String abfss(String path) {
        return "abfss://" + CONTAINER + "@" + ACCOUNT_HOST + "/" + path;
    }

    private static String gs(String path) {
        return "gs://" + BUCKET + "/" + path;
    }

    /** Catalog properties locating the emulators (the endpoint options every store gets). */
    private static Map<String, String> emulatorProperties() {
        Map<String, String> props = new HashMap<>();
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        props.put(VendedFileIO.OPTION_PREFIX + "azure_storage_use_emulator", "true");
        props.put(VendedFileIO.OPTION_PREFIX + "azure_storage_endpoint", azureProxy.url);
        props.put(VendedFileIO.OPTION_PREFIX + "google_base_url", gcs.url());
        return props;
    }

    /** Iceberg's ADLS storage-credential config: a SAS of the dev account living {@code ttl}. */
    private static Map<String, String> azureConfig(Duration ttl) {
        long expires = AzuriteServer.sasExpiry(ttl);
        return Map.of(
                "adls.sas-token." + ACCOUNT_HOST, AzuriteServer.accountSas(expires, false),
                "adls.sas-token-expires-at-ms." + ACCOUNT_HOST, Long.toString(expires));
    }

    /** Iceberg's GCS storage-credential config: a proxy token living {@code ttl}. */
    private static Map<String, String> gcsConfig(Duration ttl) {
        long expires = System.currentTimeMillis() + ttl.toMillis();
        return Map.of(
                "gcs.oauth2.token", gcs.tokens().issue(expires),
                "gcs.oauth2.token-expires-at", Long.toString(expires));
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(VendedFileIO io, String location, byte[] data) throws IOException {
        try (PositionOutputStream out = io.newOutputFile(location).createOrOverwrite()) {
            out.write(data);
            assertThat(out.getPos()).isEqualTo(data.length);
        }
    }

    private static byte[] read(InputFile file) throws IOException {
        try (SeekableInputStream in = file.newStream()) {
            return in.readAllBytes();
        }
    }

    @Test
    void oneFileIoWritesReadsListsAndDeletesOnAzureGcsAndS3() throws IOException {
        int azureRejectedBefore = azureProxy.rejections();
        int gcsRejectedBefore = gcs.proxy().rejections();
        VendedCredentials s3Key = S3.mintCredentials(Duration.ofMinutes(5), "once/");
        try (VendedFileIO io = new VendedFileIO()) {
            io.initialize(emulatorProperties());
            io.setCredentials(List.of(
                    StorageCredential.create(abfss("once"), azureConfig(Duration.ofMinutes(5))),
                    StorageCredential.create(gs("once"), gcsConfig(Duration.ofMinutes(5))),
                    StorageCredential.create(S3.uri("once"), RefreshEndpoint.config(s3Key))));
            List<String> roots = List.of(abfss("once/t"), gs("once/t"), S3.uri("once/t"));
            for (int r = 0; r < roots.size(); r++) {
                String root = roots.get(r);
                List<String> locations = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    String location = root + "/data/f" + i + ".parquet";
                    byte[] data = bytes(1000 + i, 10L * r + i);
                    write(io, location, data);
                    locations.add(location);
                }
                for (int i = 0; i < 3; i++) {
                    byte[] data = bytes(1000 + i, 10L * r + i);
                    InputFile in = io.newInputFile(locations.get(i));
                    assertThat(in.getLength()).as(locations.get(i)).isEqualTo(data.length);
                    assertThat(read(in)).as(locations.get(i)).isEqualTo(data);
                }
                Map<String, Long> listed = new HashMap<>();
                for (FileInfo f : io.listPrefix(root)) {
                    listed.put(f.location(), f.size());
                }
                assertThat(listed).as(root).hasSize(3).containsEntry(locations.get(2), 1002L);
                io.deleteFiles(locations);
                assertThat(io.listPrefix(root)).as(root).isEmpty();
                assertThat(io.newInputFile(locations.get(0)).exists()).isFalse();
            }

            // A known length sends nothing before the read (counted at the GCS proxy).
            String location = gs("once/t/known.parquet");
            byte[] data = bytes(5000, 99);
            write(io, location, data);
            int before = gcs.proxy().requests.get();
            InputFile known = io.newInputFile(location, data.length);
            assertThat(known.getLength()).isEqualTo(data.length);
            assertThat(gcs.proxy().requests.get()).isEqualTo(before);
            assertThat(read(known)).isEqualTo(data);
            io.deleteFile(location);

            assertThat(io.toString()).doesNotContain("sig=");
        }
        assertThat(azureProxy.rejections() - azureRejectedBefore).isZero();
        assertThat(gcs.proxy().rejections() - gcsRejectedBefore).isZero();
        assertThat(S3.stats(s3Key.accessKeyId()).rejected()).isZero();
    }

    @Test
    void azureSasAndGcsTokensRotateThroughTheRefreshEndpointWithNoRejection() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        AtomicInteger refreshes = new AtomicInteger();
        HttpServer catalog = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        catalog.createContext(RefreshEndpoint.PATH, ex -> {
            refreshes.incrementAndGet();
            byte[] out = JSON.writeValueAsBytes(Map.of("storage-credentials", List.of(
                    Map.of("prefix", abfss("rot"), "config", azureConfig(ttl)),
                    Map.of("prefix", gs("rot"), "config", gcsConfig(ttl)))));
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            ex.close();
        });
        catalog.start();
        int azureRejectedBefore = azureProxy.rejections();
        int gcsRejectedBefore = gcs.proxy().rejections();
        try {
            Map<String, String> props = emulatorProperties();
            props.put("uri", "http://127.0.0.1:" + catalog.getAddress().getPort() + "/catalog");
            // Iceberg's per-cloud keys: ADLS and GCS locations do not read client.*'s endpoint.
            props.put("adls.refresh-credentials-endpoint", "v1/namespaces/db/tables/t/credentials");
            props.put("gcs.oauth2.refresh-credentials-endpoint", "v1/namespaces/db/tables/t/credentials");
            VendedFileIO io = new VendedFileIO();
            io.initialize(props);
            io.setCredentials(List.of(
                    StorageCredential.create(abfss("rot"), azureConfig(ttl)),
                    StorageCredential.create(gs("rot"), gcsConfig(ttl))));
            long deadline = System.currentTimeMillis() + 9_000; // three 3 s lifetimes
            int files = 0;
            while (System.currentTimeMillis() < deadline && files < 100_000) {
                byte[] data = bytes(512, files);
                for (String location : List.of(abfss("rot/data/" + files), gs("rot/data/" + files))) {
                    write(io, location, data);
                    assertThat(read(io.newInputFile(location, data.length))).as(location).isEqualTo(data);
                }
                files++;
            }
            assertThat(io.listPrefix(abfss("rot/data"))).hasSize(files);
            assertThat(io.listPrefix(gs("rot/data"))).hasSize(files);
            List<String> all = new ArrayList<>();
            for (int i = 0; i < files; i++) {
                all.add(abfss("rot/data/" + i));
                all.add(gs("rot/data/" + i));
            }
            io.deleteFiles(all);
            assertThat(io.listPrefix(abfss("rot"))).isEmpty();
            assertThat(io.listPrefix(gs("rot"))).isEmpty();
            io.close();
            System.out.printf("VendedFileIO Azure+GCS rotation: %d files per store, %d catalog calls%n",
                    files, refreshes.get());
            assertThat(files).isGreaterThan(10);
            // 9 s of 3 s credentials, two stores refreshing: at least one refresh per store per
            // lifetime past the first, bounded.
            assertThat(refreshes.get()).isBetween(4, 40);
        } finally {
            catalog.stop(0);
        }
        assertThat(azureProxy.rejections() - azureRejectedBefore).isZero();
        assertThat(gcs.proxy().rejections() - gcsRejectedBefore).isZero();
    }
}
