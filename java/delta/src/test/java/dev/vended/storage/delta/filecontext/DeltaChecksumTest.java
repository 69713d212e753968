package dev.vended.storage.delta.filecontext;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.hadoop.VendedAbstractFileSystem;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Delta Lake on Spark ({@code delta-spark_4.1_2.13}, {@code local[2]}) writing a table on an
 * {@code s3a://} path served by {@link VendedFileSystem} with 4 s vended credentials: Delta
 * commits through the FileSystem API, but writes its {@code _delta_log/<version>.crc} checksum
 * files through Hadoop's {@code FileContext} (Spark's {@code CheckpointFileManager}), so they
 * appear only when {@code fs.AbstractFileSystem.s3a.impl} names {@link VendedAbstractFileSystem};
 * with Hadoop's default (S3A's class, absent) Delta logs "Failed to write the checksum" and goes
 * on without them.
 */
@Timeout(180)
class DeltaChecksumTest {

    private static final String BUCKET = "deltacrc";
    private static final String TABLE = "crc";
    private static final long TTL_MS = 4_000;
    private static final long LEAD_MS = 1_000;
    private static final int ROWS = 100;
    private static final String AFS_KEY = "fs.AbstractFileSystem.s3a.impl";

    private static LocalS3Server server;
    private static SparkSession spark;

    /**
     * Vends keys scoped to the table's prefix from {@link #server}, {@code TTL_MS} long; built by
     * the FileSystem from {@code vended.storage.table.crc.provider.class}.
     */
    public static final class Provider implements StorageOptionsProvider {
        static final AtomicInteger CALLS = new AtomicInteger();

        /**
         * The constructor the FileSystem prefers.
         *
         * @param conf the Hadoop configuration (unused)
         * @param table the table's name in the configuration
         */
        public Provider(Configuration conf, String table) {}

        @Override
        public Map<String, String> fetchStorageOptions() throws IOException {
            CALLS.incrementAndGet();
            VendedCredentials c = server.issueCredentials(TTL_MS, BUCKET + "/t/");
            return server.options(c);
        }
    }

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        String t = "spark.hadoop.vended.storage.table." + TABLE + ".";
        spark =
                SparkSession.builder()
                        .appName("vended-storage-delta-checksum-test")
                        .master("local[2]")
                        .config("spark.ui.enabled", "false")
                        .config("spark.sql.shuffle.partitions", "2")
                        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
                        .config(
                                "spark.sql.catalog.spark_catalog",
                                "org.apache.spark.sql.delta.catalog.DeltaCatalog")
                        // The FileSystem and, for FileContext, its AbstractFileSystem.
                        .config("spark.hadoop.fs.s3a.impl", VendedFileSystem.class.getName())
                        .config(
                                "spark.hadoop." + AFS_KEY,
                                VendedAbstractFileSystem.class.getName())
                        .config(t + "location", "s3a://" + BUCKET + "/t/")
                        .config(t + "provider.class", Provider.class.getName())
                        .config(t + "options.aws_endpoint", server.endpoint())
                        .config(t + "options.aws_region", "us-east-1")
                        .config(t + "options.aws_allow_http", "true")
                        .config(t + "lead-time", LEAD_MS + "ms")
                        .getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        if (server != null) {
            server.close();
        }
    }

    private static String logFile(String table, long version, String suffix) {
        return String.format("%s/_delta_log/%020d.%s", table, version, suffix);
    }

    /** Writes rows [v * ROWS, (v + 1) * ROWS) as one file: version v of the table. */
    private static void write(String table, int v) {
        spark.range((long) v * ROWS, (long) (v + 1) * ROWS)
                .coalesce(1)
                .write()
                .format("delta")
                .mode(v == 0 ? "overwrite" : "append")
                .save(table);
    }

    @Test
    void everyCommitHasItsChecksumAcrossCredentialRotations() throws Exception {
        String table = "s3a://" + BUCKET + "/t/events";
        URI bucket = URI.create("s3a://" + BUCKET + "/");
        int callsBefore = Provider.CALLS.get(); // the other test may have run first
        FileSystem fs = new Path(table).getFileSystem(spark.sparkContext().hadoopConfiguration());
        assertThat(fs).isInstanceOf(VendedFileSystem.class);
        int fileContextWrites = FileContext.getStatistics(bucket).getWriteOps();
        long start = System.currentTimeMillis();
        // The first commit warms Spark and Delta up (seconds); later ones take well under one.
        write(table, 0);
        int versions = 1;
        int callsAfterFirst = Provider.CALLS.get();
        // Commits until two more credentials have served (two rotations while committing),
        // bounded.
        while (versions < 3
                || (Provider.CALLS.get() < callsAfterFirst + 2
                        && versions < 40
                        && System.currentTimeMillis() - start < 60_000)) {
            write(table, versions++);
        }
        long elapsed = System.currentTimeMillis() - start;
        int callsAtEnd = Provider.CALLS.get();
        int calls = callsAtEnd - callsBefore;
        System.out.printf(
                "delta checksums: %d commits in %d ms, %d provider calls (%d after the first"
                        + " commit; %d ms credentials)%n",
                versions, elapsed, calls, callsAtEnd - callsAfterFirst, TTL_MS);

        for (int v = 0; v < versions; v++) {
            assertThat(fs.exists(new Path(logFile(table, v, "json")))).as("commit %d", v).isTrue();
            assertThat(fs.exists(new Path(logFile(table, v, "crc"))))
                    .as("checksum of version %d", v)
                    .isTrue();
        }
        // The last checksum describes the table: its data files, counted and summed here.
        long dataFiles = 0;
        long dataBytes = 0;
        for (FileStatus s : fs.listStatus(new Path(table))) {
            if (s.getPath().getName().endsWith(".parquet")) {
                dataFiles++;
                dataBytes += s.getLen();
            }
        }
        assertThat(dataFiles).isEqualTo(versions);
        JsonNode crc;
        try (InputStream in = fs.open(new Path(logFile(table, versions - 1, "crc")))) {
            crc = new ObjectMapper().readTree(in);
        }
        assertThat(crc.path("numFiles").asLong(-1)).isEqualTo(dataFiles);
        assertThat(crc.path("tableSizeBytes").asLong(-1)).isEqualTo(dataBytes);
        assertThat(FileContext.getStatistics(bucket).getWriteOps() - fileContextWrites)
                .as("checksums written through the AbstractFileSystem")
                .isGreaterThanOrEqualTo(versions);

        long n = (long) versions * ROWS;
        Row read =
                spark.read().format("delta").load(table).selectExpr("count(*)", "sum(id)").first();
        assertThat(read.getLong(0)).isEqualTo(n);
        assertThat(read.getLong(1)).isEqualTo(n * (n - 1) / 2);

        assertThat(callsAtEnd - callsAfterFirst)
                .as("two rotations while committing")
                .isGreaterThanOrEqualTo(2);
        assertThat(calls)
                .as("about one call per credential lifetime over %d ms", elapsed)
                .isLessThanOrEqualTo((int) (elapsed / (TTL_MS - LEAD_MS - LEAD_MS / 2)) + 2);
        for (Map.Entry<String, KeyStats> e : server.stats().entrySet()) {
            assertThat(e.getValue().rejected()).as("key %s: %s", e.getKey(), e.getValue()).isZero();
        }
    }

    /**
     * The control: with Hadoop's default binding of the scheme (S3A's AbstractFileSystem, not on
     * the class path) the commits still land, through the FileSystem, and the checksums do not.
     */
    @Test
    void withoutTheBindingDeltaCommitsWithoutChecksums() throws Exception {
        String table = "s3a://" + BUCKET + "/t/unbound";
        FileSystem fs = new Path(table).getFileSystem(spark.sparkContext().hadoopConfiguration());
        spark.conf().set(AFS_KEY, "org.apache.hadoop.fs.s3a.S3A");
        try {
            write(table, 0);
            write(table, 1);
        } finally {
            spark.conf().unset(AFS_KEY);
        }
        for (int v = 0; v < 2; v++) {
            assertThat(fs.exists(new Path(logFile(table, v, "json")))).as("commit %d", v).isTrue();
            assertThat(fs.exists(new Path(logFile(table, v, "crc"))))
                    .as("checksum of version %d", v)
                    .isFalse();
        }
        assertThat(spark.read().format("delta").load(table).count()).isEqualTo(2L * ROWS);
    }
}
