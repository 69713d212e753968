package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
 * Configuration a Spark user gives once: storage options shared by every table ({@code
 * vended.storage.options.<key>}, a table's own {@code options.<key>} overriding), and a provider's
 * own settings under its table ({@code provider.conf.<key>}, read with {@link
 * VendedFileSystem#providerConf}).
 */
@Timeout(120)
class SharedOptionsTest {

    private static final String BUCKET = "shared-opts";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * A provider configured only through its table's {@code provider.conf.*}: {@code scope} and
     * {@code ttl-ms}. Records the settings it was given, per table.
     */
    public static final class ConfProvider implements StorageOptionsProvider {
        static final Map<String, Map<String, String>> SEEN = new ConcurrentHashMap<>();
        private final Map<String, String> settings;

        public ConfProvider(Configuration conf, String table) {
            this.settings = VendedFileSystem.providerConf(conf, table);
            SEEN.put(table, settings);
        }

        @Override
        public Map<String, String> fetchStorageOptions() throws Exception {
            VendedCredentials c =
                    server.issueCredentials(
                            Long.parseLong(settings.get("ttl-ms")), settings.get("scope"));
            return server.options(c);
        }
    }

    private static Configuration conf() {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        // given once, for every table
        c.set("vended.storage.options.aws_endpoint", server.endpoint());
        c.set("vended.storage.options.aws_region", "us-east-1");
        c.set("vended.storage.options.aws_allow_http", "true");
        return c;
    }

    private static void table(Configuration c, String name) {
        String p = "vended.storage.table." + name + ".";
        c.set(p + "location", "s3a://" + BUCKET + "/" + name + "/");
        c.set(p + "provider.class", ConfProvider.class.getName());
        c.set(p + "provider.conf.scope", BUCKET + "/" + name + "/");
        c.set(p + "provider.conf.ttl-ms", "3600000");
    }

    private static FileSystem fs(Configuration c) throws IOException {
        return FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c);
    }

    private static void roundTrip(FileSystem fs, String table) throws IOException {
        Path p = new Path("s3a://" + BUCKET + "/" + table + "/f.bin");
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(new byte[] {1, 2, 3, (byte) table.length()});
        }
        byte[] back = new byte[4];
        try (FSDataInputStream in = fs.open(p)) {
            in.readFully(back);
        }
        assertThat(back).containsExactly(1, 2, 3, table.length());
    }

    @Test
    void sharedOptionsReachEveryTableAndATableOverridesThem() throws Exception {
        Configuration c = conf();
        table(c, "soa");
        table(c, "sob");
        table(c, "soc");
        // a table's own option wins: soc's shared endpoint would be unreachable
        c.set("vended.storage.options.aws_endpoint", "http://127.0.0.1:9");
        c.set("vended.storage.table.soa.options.aws_endpoint", server.endpoint());
        c.set("vended.storage.table.sob.options.aws_endpoint", server.endpoint());
        c.set("vended.storage.table.sob.options.aws_region", "eu-west-1");

        Map<String, TableConfig> tables = TableConfig.all(c);
        assertThat(tables.get("soa").staticOptions())
                .containsEntry("aws_endpoint", server.endpoint())
                .containsEntry("aws_region", "us-east-1")
                .containsEntry("aws_allow_http", "true");
        assertThat(tables.get("sob").staticOptions())
                .containsEntry("aws_endpoint", server.endpoint())
                .containsEntry("aws_region", "eu-west-1")
                .containsEntry("aws_allow_http", "true");
        assertThat(tables.get("soc").staticOptions())
                .containsEntry("aws_endpoint", "http://127.0.0.1:9")
                .containsEntry("aws_region", "us-east-1");
        // the shared options are part of a table's identity (its JVM-wide store)
        Configuration other = conf();
        other.set("vended.storage.options.aws_region", "eu-central-1");
        table(other, "soa");
        other.set("vended.storage.table.soa.options.aws_endpoint", server.endpoint());
        assertThat(TableConfig.all(other).get("soa").identity())
                .isNotEqualTo(tables.get("soa").identity());

        c.set("vended.storage.options.aws_endpoint", server.endpoint());
        c.unset("vended.storage.table.sob.options.aws_region");
        try (FileSystem fs = fs(c)) {
            for (String t : new String[] {"soa", "sob", "soc"}) {
                roundTrip(fs, t);
            }
        }
    }

    @Test
    void aSecretSharedOptionIsRefusedNamingTheKeyNotTheValue() {
        Configuration c = conf();
        table(c, "sos");
        c.set("vended.storage.options.aws_secret_access_key", "SECRET-VALUE-456");
        assertThatThrownBy(() -> fs(c))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("vended.storage.options.aws_secret_access_key")
                .hasMessageContaining("not a known non-secret storage option")
                .hasMessageNotContaining("SECRET-VALUE-456");
        Configuration token = conf();
        table(token, "sot");
        token.set("vended.storage.options.aws_session_token", "TOKEN-VALUE-789");
        assertThatThrownBy(() -> fs(token))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("vended.storage.options.aws_session_token")
                .hasMessageNotContaining("TOKEN-VALUE-789");
    }

    @Test
    void providerConfReachesTheProviderClass() throws Exception {
        Configuration c = conf();
        table(c, "sop");
        c.set("vended.storage.table.sop.provider.conf.catalog-url", " https://catalog.example/api ");
        c.set("vended.storage.table.sop.provider.conf.token-file", "/run/secrets/catalog");
        // another table's settings are not this one's
        table(c, "sopx");
        c.set("vended.storage.table.sopx.provider.conf.other", "x");
        try (FileSystem fs = fs(c)) {
            roundTrip(fs, "sop");
        }
        assertThat(ConfProvider.SEEN.get("sop"))
                .containsExactly(
                        Map.entry("catalog-url", "https://catalog.example/api"),
                        Map.entry("scope", BUCKET + "/sop/"),
                        Map.entry("token-file", "/run/secrets/catalog"),
                        Map.entry("ttl-ms", "3600000"));
        assertThat(VendedFileSystem.providerConf(c, "nosuch")).isEmpty();
    }

    @Test
    void aProviderSettingThatNamesASecretIsRefused() {
        for (String key : new String[] {"token", "client-secret", "password", "access.key"}) {
            Configuration c = conf();
            table(c, "sox");
            c.set("vended.storage.table.sox.provider.conf." + key, "VALUE-321");
            assertThatThrownBy(() -> fs(c))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("vended.storage.table.sox.provider.conf." + key)
                    .hasMessageContaining("names a secret")
                    .hasMessageNotContaining("VALUE-321");
        }
        Configuration empty = conf();
        table(empty, "soy");
        empty.set("vended.storage.table.soy.provider.conf.", "x");
        assertThatThrownBy(() -> fs(empty))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("expected provider.conf.<key>");
    }
}
