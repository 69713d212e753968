package dev.vended.storage.delta.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.delta.kernel.KernelTables.ScanResult;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.RecordingProvider;

import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.defaults.engine.fileio.InputFile;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.exceptions.CheckpointAlreadyExistsException;
import io.delta.kernel.exceptions.ProtocolChangedException;
import io.delta.kernel.exceptions.TableNotFoundException;

import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * What Kernel decides from {@link VendedKernelFileIO}'s answers: "no table" from a missing log,
 * a commit conflict from a create-only write that found its version taken, a checkpoint written
 * once and read back. Each table on the local S3 endpoint, through a vending provider.
 */
@Timeout(60)
class KernelCommitsTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().bucket("delta");

    private static VendedKernelFileIO io(String table, RecordingProvider provider)
            throws Exception {
        return VendedKernelFileIO.open(table, provider.fetchStorageOptions(), provider);
    }

    @Test
    void aMissingTableIsTableNotFound() throws Exception {
        String table = S3.uri("commits/none");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/none/");
        try (VendedKernelFileIO io = io(table, provider)) {
            Engine engine = DefaultEngine.create(io);
            assertThatThrownBy(() -> TableManager.loadSnapshot(table).build(engine))
                    .isInstanceOf(TableNotFoundException.class)
                    .hasMessageContaining(table);
        }
    }

    @Test
    void theDocsExampleOpensTheLatestSnapshot() throws Exception {
        String table = S3.uri("commits/docs");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/docs/");
        try (VendedKernelFileIO io = io(table, provider)) {
            Engine engine = DefaultEngine.create(io);
            KernelTables.create(engine, table, 0, 10);
            KernelTables.append(engine, table, 1_000, 10);
        }
        assertThat(KernelDocsExample.latestVersion(table, provider.fetchStorageOptions(), provider))
                .isEqualTo(1);
    }

    /**
     * Two appends prepared from the same snapshot: the second one's create-only write of version
     * 1 finds it taken ({@code FileAlreadyExistsException}), Kernel checks that the two appends do
     * not conflict and commits it as version 2. Both files are in the table once.
     */
    @Test
    void concurrentAppendsLandAtConsecutiveVersions() throws Exception {
        String table = S3.uri("commits/race");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/race/");
        try (VendedKernelFileIO io = io(table, provider)) {
            Engine engine = DefaultEngine.create(io);
            KernelTables.create(engine, table, 0, 10);
            Transaction first = KernelTables.appendTransaction(engine, table);
            Transaction second = KernelTables.appendTransaction(engine, table);
            assertThat(KernelTables.commit(engine, first, 1_000, 10)).isEqualTo(1);
            assertThat(KernelTables.commit(engine, second, 2_000, 10)).isEqualTo(2);

            ScanResult scan = KernelTables.scanLatest(engine, table);
            assertThat(scan.version()).isEqualTo(2);
            assertThat(scan.files()).isEqualTo(3);
            assertThat(scan.ids()).hasSize(30);
            assertThat(new HashSet<>(scan.ids()))
                    .contains(0L, 9L, 1_000L, 1_009L, 2_000L, 2_009L)
                    .hasSize(30);
            assertThatThrownBy(
                            () -> io.getFileStatus(table + "/_delta_log/00000000000000000003.json"))
                    .as("the retry wrote version 2 only")
                    .isInstanceOf(FileNotFoundException.class);
        }
    }

    /**
     * Two creators racing: both build their create transaction before either commits; the store
     * lets one write version 0 and refuses the other's ({@code FileAlreadyExistsException}), which
     * Kernel reports as its conflict for writers racing on an empty directory: one table, the
     * winner's.
     */
    @Test
    void racingCreatorsLeaveOneTable() throws Exception {
        String table = S3.uri("commits/create");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/create/");
        try (VendedKernelFileIO io = io(table, provider)) {
            Engine engine = DefaultEngine.create(io);
            Transaction winner = KernelTables.createTransaction(engine, table);
            Transaction loser = KernelTables.createTransaction(engine, table);
            assertThat(KernelTables.commit(engine, winner, 0, 10)).isZero();
            // Kernel's answer when its create-only write of version 0 finds it taken.
            assertThatThrownBy(() -> KernelTables.commit(engine, loser, 5_000, 10))
                    .isInstanceOf(ProtocolChangedException.class)
                    .hasMessageContaining("multiple writers are writing to an empty directory");
            ScanResult scan = KernelTables.scanLatest(engine, table);
            assertThat(scan.version()).isZero();
            assertThat(scan.ids()).hasSize(10).allMatch(id -> id < 10);
        }
    }

    @Test
    void aCheckpointIsWrittenOnceAndSnapshotsLoadFromIt() throws Exception {
        String table = S3.uri("commits/checkpoint");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/checkpoint/");
        try (VendedKernelFileIO io = io(table, provider)) {
            Engine engine = DefaultEngine.create(io);
            KernelTables.create(engine, table, 0, 10);
            for (int v = 1; v <= 3; v++) {
                KernelTables.append(engine, table, v * 1_000L, 10);
            }
            Snapshot at3 = TableManager.loadSnapshot(table).build(engine);
            at3.writeCheckpoint(engine);
            String log = table + "/_delta_log/";
            assertThat(io.getFileStatus(log + "00000000000000000003.checkpoint.parquet").getSize())
                    .isPositive();
            assertThat(io.getFileStatus(log + "_last_checkpoint").getSize()).isPositive();
            assertThatThrownBy(() -> at3.writeCheckpoint(engine))
                    .isInstanceOf(CheckpointAlreadyExistsException.class);

            KernelTables.append(engine, table, 4_000, 10);
            Snapshot latest = TableManager.loadSnapshot(table).build(engine);
            assertThat(latest.getVersion()).isEqualTo(4);
            assertThat(latest.getLogSegment().getCheckpointVersionOpt()).contains(3L);
            ScanResult scan = KernelTables.scanLatest(engine, table);
            assertThat(scan.files()).isEqualTo(5);
            assertThat(new HashSet<>(scan.ids())).hasSize(50).contains(0L, 3_009L, 4_009L);
        }
    }

    /**
     * Kernel reads Parquet writer settings through {@link VendedKernelFileIO#getConf}: the
     * {@code parquet.compression} given at open reaches the files it writes.
     */
    @Test
    void parquetSettingsComeFromTheKernelConfiguration() throws Exception {
        String table = S3.uri("commits/snappy");
        RecordingProvider provider = S3.provider(Duration.ofMinutes(5), "commits/snappy/");
        try (VendedKernelFileIO io =
                VendedKernelFileIO.open(
                        table,
                        provider.fetchStorageOptions(),
                        provider,
                        Map.of("parquet.compression", "SNAPPY"))) {
            Engine engine = DefaultEngine.create(io);
            KernelTables.create(engine, table, 0, 100);
            List<String> dataFiles = new ArrayList<>();
            for (ObjectMeta meta : io.store().list(null)) {
                if (meta.path().endsWith(".parquet")) {
                    dataFiles.add(table + "/" + meta.path());
                }
            }
            assertThat(dataFiles).hasSize(1);
            InputFile file = io.newInputFile(dataFiles.get(0), -1);
            try (ParquetFileReader footer = ParquetFileReader.open(parquetFile(file))) {
                assertThat(footer.getFooter().getBlocks().get(0).getColumns())
                        .extracting(ColumnChunkMetaData::getCodec)
                        .containsOnly(CompressionCodecName.SNAPPY);
            }
            assertThat(KernelTables.scanLatest(engine, table).ids()).hasSize(100);
        }
    }

    /** Parquet's input file on Kernel's, for reading a footer in the test. */
    private static org.apache.parquet.io.InputFile parquetFile(InputFile file) {
        return new org.apache.parquet.io.InputFile() {
            @Override
            public long getLength() throws IOException {
                return file.length();
            }

            @Override
            public SeekableInputStream newStream() throws IOException {
                io.delta.kernel.defaults.engine.fileio.SeekableInputStream in = file.newStream();
                return new DelegatingSeekableInputStream(in) {
                    @Override
                    public long getPos() throws IOException {
                        return in.getPos();
                    }

                    @Override
                    public void seek(long newPos) throws IOException {
                        in.seek(newPos);
                    }
                };
            }
        };
    }
}
