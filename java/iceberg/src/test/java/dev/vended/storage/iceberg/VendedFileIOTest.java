package dev.vended.storage.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.iceberg.io.StorageCredential;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** VendedFileIO against the local S3 endpoint: files, listings, deletes, errors, refresh. */
@Timeout(120)
class VendedFileIOTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("tables");

    /** A FileIO with the endpoint's root key passed through (no catalog). */
    private static VendedFileIO staticIo() {
        Map<String, String> props = new HashMap<>();
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        S3.storageOptions().forEach((k, v) -> props.put(VendedFileIO.OPTION_PREFIX + k, v));
        VendedFileIO io = new VendedFileIO();
        io.initialize(props);
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
            assertThat(out.getPos()).isEqualTo(data.length);
        }
    }

    private static byte[] read(InputFile file) throws IOException {
        try (SeekableInputStream in = file.newStream()) {
            return in.readAllBytes();
        }
    }

    private static long heads(String key) {
        return S3.requests().stream()
                .filter(r -> r.method().equals("HEAD") && key.equals(r.key()))
                .count();
    }

    @Test
    void writesAndReadsBackWithSeeksRangesAndTail() throws IOException {
        try (VendedFileIO io = staticIo()) {
            String location = S3.uri("rw/data/0.parquet");
            byte[] data = bytes(6 << 20, 1);
            try (PositionOutputStream out = io.newOutputFile(location).create()) {
                out.write(data, 0, 100);
                assertThat(out.getPos()).isEqualTo(100);
                out.write(data, 100, data.length - 100);
                assertThat(out.getPos()).isEqualTo(data.length);
            }
            InputFile in = io.newInputFile(location);
            assertThat(in.exists()).isTrue();
            assertThat(in.getLength()).isEqualTo(data.length);
            assertThat(read(in)).isEqualTo(data);
            try (SeekableInputStream s = in.newStream()) {
                s.seek(5_000_000);
                assertThat(s.getPos()).isEqualTo(5_000_000);
                assertThat(s.read()).isEqualTo(data[5_000_000] & 0xff);
                byte[] range = new byte[1000];
                ((RangeReadable) s).readFully(1234, range, 0, 1000);
                assertThat(range).isEqualTo(java.util.Arrays.copyOfRange(data, 1234, 2234));
                byte[] tail = new byte[8];
                assertThat(((RangeReadable) s).readTail(tail, 0, 8)).isEqualTo(8);
                assertThat(tail).isEqualTo(java.util.Arrays.copyOfRange(data, data.length - 8, data.length));
            }
        }
    }

    @Test
    void aKnownLengthSendsNoHead() throws IOException {
        try (VendedFileIO io = staticIo()) {
            String key = "known/data/1.parquet";
            byte[] data = bytes(10_000, 2);
            write(io, S3.uri(key), data);
            long before = heads(key);
            InputFile in = io.newInputFile(S3.uri(key), data.length);
            assertThat(in.getLength()).isEqualTo(data.length);
            assertThat(read(in)).isEqualTo(data);
            assertThat(heads(key)).isEqualTo(before);
            assertThat(io.newInputFile(S3.uri(key)).getLength()).isEqualTo(data.length);
            assertThat(heads(key)).isEqualTo(before + 1);
        }
    }

    @Test
    void createRefusesAnExistingFileAndCreateOrOverwriteReplacesIt() throws IOException {
        try (VendedFileIO io = staticIo()) {
            String location = S3.uri("exists/metadata/v1.json");
            write(io, location, bytes(10, 3));
            PositionOutputStream out = io.newOutputFile(location).create();
            out.write(bytes(20, 4));
            assertThatThrownBy(out::close)
                    .isInstanceOf(AlreadyExistsException.class)
                    .hasMessageContaining(location);
            assertThat(read(io.newInputFile(location))).isEqualTo(bytes(10, 3));
            write(io, location, bytes(30, 5));
            assertThat(read(io.newInputFile(location))).isEqualTo(bytes(30, 5));
        }
    }

    @Test
    void missingFilesAreNotFoundNamingTheLocation() {
        try (VendedFileIO io = staticIo()) {
            String location = S3.uri("missing/data/none.parquet");
            InputFile in = io.newInputFile(location);
            assertThat(in.exists()).isFalse();
            assertThatThrownBy(in::getLength).isInstanceOf(NotFoundException.class).hasMessageContaining(location);
            assertThatThrownBy(in::newStream).isInstanceOf(NotFoundException.class).hasMessageContaining(location);
            io.deleteFile(location); // deleting a missing file is done
        }
    }

    @Test
    void listsAndDeletesByPrefixAndInBulk() throws IOException {
        try (VendedFileIO io = staticIo()) {
            List<String> locations = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                String location = S3.uri("bulk/t/data/f" + i + ".parquet");
                write(io, location, bytes(100 + i, i));
                locations.add(location);
            }
            write(io, S3.uri("bulk/t10/data/other.parquet"), bytes(5, 9));
            Map<String, Long> listed = new HashMap<>();
            for (FileInfo f : io.listPrefix(S3.uri("bulk/t"))) {
                listed.put(f.location(), f.size());
                assertThat(f.createdAtMillis()).isPositive();
            }
            assertThat(listed).hasSize(7).containsEntry(locations.get(3), 103L);
            io.deleteFile(locations.get(0));
            io.deleteFiles(List.of(locations.get(1), locations.get(2), S3.uri("bulk/t/data/never.parquet")));
            assertThat(io.listPrefix(S3.uri("bulk/t/data/"))).hasSize(4);
            io.deletePrefix(S3.uri("bulk/t"));
            assertThat(io.listPrefix(S3.uri("bulk/t"))).isEmpty();
            assertThat(io.listPrefix(S3.uri("bulk/t10"))).hasSize(1);
        }
    }

    @Test
    void badLocationsAndConfigurationsAreNamed() {
        try (VendedFileIO io = staticIo()) {
            assertThatThrownBy(() -> io.newInputFile("no-scheme/file"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no-scheme/file");
            assertThatThrownBy(() -> io.newInputFile("s3:///key"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("no bucket");
        }
        VendedFileIO io = new VendedFileIO();
        io.initialize(Map.of("s3.endpoint", S3.endpoint(), "client.region", S3.region()));
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5));
        io.setCredentials(List.of(StorageCredential.create(S3.uri("x"), RefreshEndpoint.config(key))));
        // Vended without a refresh endpoint (and no catalog uri): served until it expires.
        assertThat(io.newInputFile(S3.uri("x/f")).exists()).isFalse();
        assertThat(S3.stats(key.accessKeyId()).accepted()).isPositive();
        // A relative refresh endpoint needs the catalog uri to resolve against: named.
        io.initialize(Map.of(
                "client.refresh-credentials-endpoint", "v1/namespaces/db/tables/t/credentials",
                "s3.endpoint", S3.endpoint(),
                "client.region", S3.region()));
        io.setCredentials(List.of(StorageCredential.create(S3.uri("x"), RefreshEndpoint.config(key))));
        assertThatThrownBy(() -> io.newInputFile(S3.uri("x/f")).exists())
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(S3.uri("x/f"))
                .hasMessageContaining("uri")
                .hasMessageContaining("client.refresh-credentials-endpoint")
                .hasMessageNotContaining(key.secretAccessKey())
                .hasMessageNotContaining(key.sessionToken());
        assertThat(io.toString()).doesNotContain(key.secretAccessKey()).doesNotContain(key.sessionToken());
        io.close();
        assertThatThrownBy(() -> io.newInputFile(S3.uri("x/f")).exists()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void storesAreRoutedByRootAndTheNativeCoveringPrefix() throws IOException {
        assertThat(StoreRoute.of("abfss://c@acct.dfs.core.windows.net/wh/t/f.parquet"))
                .isEqualTo(new StoreRoute("abfss://c@acct.dfs.core.windows.net/", "wh/t/f.parquet"));
        assertThat(StoreRoute.of("gs://b/wh//t")).isEqualTo(new StoreRoute("gs://b/", "wh//t"));
        // Two tables whose names share a prefix get their own credential and store each.
        try (VendedFileIO io = new VendedFileIO()) {
            io.initialize(Map.of("s3.endpoint", S3.endpoint(), "client.region", S3.region()));
            VendedCredentials t1 = S3.mintCredentials(Duration.ofMinutes(5), "cover/t1/");
            VendedCredentials t10 = S3.mintCredentials(Duration.ofMinutes(5), "cover/t10/");
            io.setCredentials(List.of(
                    StorageCredential.create(S3.uri("cover/t1"), RefreshEndpoint.config(t1)),
                    StorageCredential.create(S3.uri("cover/t10"), RefreshEndpoint.config(t10))));
            write(io, S3.uri("cover/t10/data/0.parquet"), bytes(10, 1));
            write(io, S3.uri("cover/t1/data/0.parquet").replace("s3://", "s3a://"), bytes(10, 2));
            assertThat(S3.stats(t10.accessKeyId()).accepted()).isPositive();
            assertThat(S3.stats(t1.accessKeyId()).accepted()).isPositive();
            assertThat(S3.stats(t1.accessKeyId()).rejected() + S3.stats(t10.accessKeyId()).rejected()).isZero();
        }
    }

    /**
     * A catalog that puts static keys in its config ({@code s3.access-key-id}, ...) and no refresh
     * endpoint: a static store on those keys, mapped natively.
     */
    @Test
    void staticKeysInTheConfigWithoutARefreshEndpointOpenAStaticStore() throws IOException {
        VendedCredentials key = S3.mintCredentials(Duration.ofMinutes(5), "static/");
        Map<String, String> props = new HashMap<>();
        props.put("uri", "jdbc:sqlite::memory:"); // a non-REST catalog's uri is not read
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        props.put("s3.access-key-id", key.accessKeyId());
        props.put("s3.secret-access-key", key.secretAccessKey());
        props.put("s3.session-token", key.sessionToken());
        try (VendedFileIO io = new VendedFileIO()) {
            io.initialize(props);
            write(io, S3.uri("static/data/0.parquet"), bytes(100, 7));
            assertThat(read(io.newInputFile(S3.uri("static/data/0.parquet")))).isEqualTo(bytes(100, 7));
            assertThat(S3.stats(key.accessKeyId()).accepted()).isPositive();
            assertThat(S3.stats(key.accessKeyId()).rejected()).isZero();
            assertThat(io.toString()).doesNotContain(key.secretAccessKey());
        }
    }

    /**
     * A table's storage credential that is about to expire when the store first opens (Spark's
     * table cache hands tasks credentials up to 30 s old, apache/iceberg#15678) is replaced by a
     * catalog call, not refused: the native first answer is skipped when the store would refuse
     * it (expired or within its minimum remaining lifetime, 500 ms).
     */
    @Test
    void aFirstAnswerAboutToExpireIsRefreshed() throws Exception {
        staticIo().newInputFile(S3.uri("warm")).exists(); // the native library is loaded
        try (RefreshEndpoint catalog = new RefreshEndpoint(S3, Duration.ofSeconds(30), "soon/t")) {
            Map<String, String> props = new HashMap<>();
            props.put("uri", catalog.catalogUri());
            props.put("client.refresh-credentials-endpoint", "v1/namespaces/db/tables/t/credentials");
            props.put("s3.endpoint", S3.endpoint());
            props.put("client.region", S3.region());
            VendedFileIO io = new VendedFileIO();
            io.initialize(props);
            VendedCredentials soon = S3.mintCredentials(Duration.ofMillis(400), "soon/t/");
            io.setCredentials(List.of(StorageCredential.create(S3.uri("soon/t"), RefreshEndpoint.config(soon))));
            write(io, S3.uri("soon/t/data/0.parquet"), bytes(10, 1));
            assertThat(catalog.vended).hasSize(1);
            assertThat(S3.stats(soon.accessKeyId()).rejected()).isZero();
            io.close();
        }
    }

    @Test
    void readsAndWritesAcrossRotationsWithTheCatalogsRefreshEndpointAndNoRejection() throws Exception {
        staticIo().newInputFile(S3.uri("warm")).exists(); // the native library is loaded
        try (RefreshEndpoint catalog = new RefreshEndpoint(S3, Duration.ofSeconds(3), "rot/t")) {
            Map<String, String> props = new HashMap<>();
            props.put("uri", catalog.catalogUri());
            props.put("client.refresh-credentials-endpoint", "v1/namespaces/db/tables/t/credentials");
            props.put("s3.endpoint", S3.endpoint());
            props.put("client.region", S3.region());
            VendedFileIO io = new VendedFileIO();
            io.initialize(props);
            io.setCredentials(List.of(StorageCredential.create(S3.uri("rot/t"), RefreshEndpoint.config(catalog.mint()))));

            // Serialized as Spark ships it: a copy in the same JVM shares the native store.
            ByteArrayOutputStream buffer = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(buffer)) {
                out.writeObject(io);
            }
            String serialized = buffer.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
            VendedFileIO copy;
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(buffer.toByteArray()))) {
                copy = (VendedFileIO) in.readObject();
            }
            assertThat(serialized).doesNotContain("ObjectStore@");

            long deadline = System.currentTimeMillis() + 10_000;
            int files = 0;
            while (System.currentTimeMillis() < deadline && files < 100_000) {
                String location = S3.uri("rot/t/data/" + files + ".parquet");
                byte[] data = bytes(2048, files);
                write(files % 2 == 0 ? io : copy, location, data);
                assertThat(read((files % 2 == 0 ? copy : io).newInputFile(location, data.length))).isEqualTo(data);
                files++;
            }
            assertThat(io.listPrefix(S3.uri("rot/t/data"))).hasSize(files);
            io.deletePrefix(S3.uri("rot/t"));
            assertThat(copy.listPrefix(S3.uri("rot/t"))).isEmpty();

            long rejected = 0;
            for (VendedCredentials c : catalog.vended) {
                rejected += S3.stats(c.accessKeyId()).rejected();
            }
            // 10 s with 3 s keys refreshed at half their lifetime: about 7 catalog calls, one per
            // lifetime of the JVM's one native store (the copy shares it), not one per FileIO.
            System.out.printf("VendedFileIO rotation: %d files, %d keys vended, %d rejected%n",
                    files, catalog.vended.size(), rejected);
            assertThat(rejected).isZero();
            assertThat(catalog.vended.size()).isBetween(3, 12);
            assertThat(files).isGreaterThan(10);
            io.close();
            copy.close();
        }
    }
}
