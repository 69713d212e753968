package dev.vended.storage.delta.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.delta.kernel.KernelTables.ScanResult;
import dev.vended.storage.testkit.KeyAccess;
import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;

import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StorageStatistics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.LongStream;

/**
 * A Delta table written and read by Kernel alone (no Spark, no Hadoop file system) on the
 * enforcing local S3 endpoint, through {@link VendedKernelFileIO} with short-lived vended keys: a
 * writer appends a file per commit while a reader with read-only keys loads the latest snapshot
 * and reads every row, across several rotations of both credentials.
 */
@Timeout(60)
class KernelTableRotationTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("delta");

    private static final long WRITER_TTL_MS = 4_000;
    private static final long WRITER_LEAD_MS = 1_000;
    private static final long READER_TTL_MS = 3_000;
    private static final int ROWS = 50;
    private static final long RUN_MS = 12_000;
    private static final int MAX_COMMITS = 60;

    @Test
    void writesAndScansATableAcrossCredentialRotationsWithNoRejection() throws Exception {
        String table = S3.uri("kernel/rot/t");
        RecordingProvider writerKeys = S3.provider(Duration.ofMillis(WRITER_TTL_MS), "kernel/rot/");
        RecordingProvider readerKeys =
                S3.provider(Duration.ofMillis(READER_TTL_MS), "kernel/rot/", KeyAccess.READ_ONLY);
        Map<String, Long> hadoopCountersBefore = hadoopFileSystemCounters();
        long start = System.currentTimeMillis();
        int commits = 0;
        try (ObjectStore writerStore =
                        ObjectStore.open(
                                table,
                                writerKeys.fetchStorageOptions(),
                                writerKeys,
                                Duration.ofMillis(WRITER_LEAD_MS));
                VendedKernelFileIO writerIo = VendedKernelFileIO.of(writerStore, Map.of());
                VendedKernelFileIO readerIo =
                        VendedKernelFileIO.open(
                                table, readerKeys.fetchStorageOptions(), readerKeys)) {
            Engine writer = DefaultEngine.create(writerIo);
            Engine reader = DefaultEngine.create(readerIo);

            assertThat(KernelTables.create(writer, table, 0, ROWS)).isZero();
            commits = 1;
            long deadline = start + RUN_MS;
            while (System.currentTimeMillis() < deadline && commits < MAX_COMMITS) {
                assertThat(KernelTables.append(writer, table, commits * 1_000L, ROWS))
                        .isEqualTo(commits);
                commits++;
                ScanResult scan = KernelTables.scanLatest(reader, table);
                assertThat(scan.version()).isEqualTo(commits - 1);
                assertThat(scan.files()).isEqualTo(commits);
                assertThat(scan.ids()).hasSize(commits * ROWS);
                assertThat(new HashSet<>(scan.ids())).isEqualTo(expectedIds(commits));
                for (int i = 0; i < scan.ids().size(); i++) {
                    assertThat(scan.names().get(i)).isEqualTo("row-" + scan.ids().get(i));
                }
            }
            assertThat(writerStore.refreshStats().toString()).doesNotContain("secret");
        }
        long elapsed = System.currentTimeMillis() - start;

        List<String> keys = new ArrayList<>(writerKeys.vendedKeyIds());
        keys.addAll(readerKeys.vendedKeyIds());
        long accepted = 0;
        Set<String> used = new HashSet<>();
        for (String key : keys) {
            KeyStats stats = S3.stats(key);
            assertThat(stats.rejected()).as("key %s: %s", key, stats).isZero();
            accepted += stats.accepted();
            if (stats.accepted() > 0) {
                used.add(key);
            }
        }
        System.out.printf(
                "Kernel rotation: %d commits in %d ms; writer %d provider calls (%d ms keys, %d ms"
                        + " lead), reader %d (%d ms keys); %d requests accepted with %d keys,"
                        + " 0 rejected%n",
                commits,
                elapsed,
                writerKeys.calls(),
                WRITER_TTL_MS,
                WRITER_LEAD_MS,
                readerKeys.calls(),
                READER_TTL_MS,
                accepted,
                used.size());

        assertThat(commits).as("commits in %d ms", elapsed).isGreaterThanOrEqualTo(4);
        // Both credentials rotated several times and every rotated key served requests.
        assertThat(elapsed).isGreaterThan(2 * WRITER_TTL_MS);
        assertThat(used.size()).isGreaterThanOrEqualTo(5);
        // About one call per credential lifetime: at least one per lifetime (or requests would
        // have been refused), at most one per (lifetime - lead - jitter), never one per request.
        assertThat(writerKeys.calls())
                .isBetween(
                        (int) (elapsed / WRITER_TTL_MS),
                        (int) (elapsed / (WRITER_TTL_MS - WRITER_LEAD_MS - WRITER_LEAD_MS / 2))
                                + 2);
        // The reader's store uses the default lead time, capped at half the lifetime.
        long readerLead = READER_TTL_MS / 2;
        assertThat(readerKeys.calls())
                .isBetween(
                        (int) (elapsed / READER_TTL_MS),
                        (int) (elapsed / (READER_TTL_MS - readerLead - readerLead / 2)) + 2);
        assertThat(accepted).isGreaterThan(10L * (writerKeys.calls() + readerKeys.calls()));
        // Kernel loaded Hadoop classes (for Parquet) but used no Hadoop FileSystem: every byte
        // went through the FileIO. (Other test classes in this JVM may have made FileSystems.)
        assertThat(hadoopFileSystemCounters()).isEqualTo(hadoopCountersBefore);
    }

    /** Every Hadoop FileSystem statistics set of this JVM by name: the sum of its counters. */
    private static Map<String, Long> hadoopFileSystemCounters() {
        Map<String, Long> counters = new TreeMap<>();
        Iterator<StorageStatistics> all = FileSystem.getGlobalStorageStatistics().iterator();
        while (all.hasNext()) {
            StorageStatistics stats = all.next();
            long sum = 0;
            Iterator<StorageStatistics.LongStatistic> longs = stats.getLongStatistics();
            while (longs.hasNext()) {
                sum += longs.next().getValue();
            }
            counters.put(stats.getName(), sum);
        }
        return counters;
    }

    private static Set<Long> expectedIds(int commits) {
        Set<Long> ids = new HashSet<>();
        for (int c = 0; c < commits; c++) {
            LongStream.range(c * 1_000L, c * 1_000L + ROWS).forEach(ids::add);
        }
        return ids;
    }
}
