package dev.vended.storage.delta.kernel;

import io.delta.kernel.DataWriteContext;
import io.delta.kernel.Operation;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.Transaction;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.Row;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructType;
import io.delta.kernel.utils.CloseableIterable;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.DataFileStatus;
import io.delta.kernel.utils.FileStatus;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * A Delta table written and read with Kernel's own API only (no Spark): rows {@code (id BIGINT,
 * name STRING)}, each commit adding one Parquet file of {@code rows} rows with ids {@code
 * firstId..firstId+rows-1} and names {@code "row-<id>"}.
 */
final class KernelTables {

    static final StructType SCHEMA =
            new StructType().add("id", LongType.LONG).add("name", StringType.STRING);

    private static final String ENGINE_INFO = "vended-storage-kernel-test";

    /**
     * What a scan of the latest snapshot found.
     *
     * @param version the snapshot's version
     * @param files the data files scanned
     * @param ids every row's id, in scan order
     * @param names every row's name, in scan order
     */
    record ScanResult(long version, int files, List<Long> ids, List<String> names) {}

    private KernelTables() {}

    /** Creates the table with its first file; returns the committed version (0). */
    static long create(Engine engine, String path, long firstId, int rows) throws IOException {
        return commit(engine, createTransaction(engine, path), firstId, rows);
    }

    /** Appends one file to the latest snapshot; returns the committed version. */
    static long append(Engine engine, String path, long firstId, int rows) throws IOException {
        return commit(engine, appendTransaction(engine, path), firstId, rows);
    }

    /** A transaction creating the table (nothing written until {@link #commit}). */
    static Transaction createTransaction(Engine engine, String path) {
        return TableManager.buildCreateTableTransaction(path, SCHEMA, ENGINE_INFO).build(engine);
    }

    /** A transaction appending to the latest snapshot (nothing written until {@link #commit}). */
    static Transaction appendTransaction(Engine engine, String path) {
        Snapshot latest = TableManager.loadSnapshot(path).build(engine);
        return latest.buildUpdateTableTransaction(ENGINE_INFO, Operation.WRITE).build(engine);
    }

    /** Writes one Parquet file of rows and commits it with {@code txn}; returns the version. */
    static long commit(Engine engine, Transaction txn, long firstId, int rows)
            throws IOException {
        Row state = txn.getTransactionState(engine);
        CloseableIterator<FilteredColumnarBatch> logical =
                single(new FilteredColumnarBatch(new Batch(firstId, rows), Optional.empty()));
        CloseableIterator<FilteredColumnarBatch> physical =
                Transaction.transformLogicalData(engine, state, logical, Map.of());
        DataWriteContext context = Transaction.getWriteContext(engine, state, Map.of());
        CloseableIterator<DataFileStatus> written =
                engine.getParquetHandler()
                        .writeParquetFiles(
                                context.getTargetDirectory(),
                                physical,
                                context.getStatisticsColumns());
        CloseableIterator<Row> actions =
                Transaction.generateAppendActions(engine, state, written, context);
        return txn.commit(engine, CloseableIterable.inMemoryIterable(actions)).getVersion();
    }

    /** Loads the latest snapshot, lists its files and reads every row of every file. */
    static ScanResult scanLatest(Engine engine, String path) throws IOException {
        Snapshot snapshot = TableManager.loadSnapshot(path).build(engine);
        Scan scan = snapshot.getScanBuilder().build();
        Row scanState = scan.getScanState(engine);
        StructType physicalSchema = ScanStateRow.getPhysicalDataReadSchema(scanState);
        List<Long> ids = new ArrayList<>();
        List<String> names = new ArrayList<>();
        int files = 0;
        try (CloseableIterator<FilteredColumnarBatch> scanFiles = scan.getScanFiles(engine)) {
            while (scanFiles.hasNext()) {
                try (CloseableIterator<Row> fileRows = scanFiles.next().getRows()) {
                    while (fileRows.hasNext()) {
                        Row scanFile = fileRows.next();
                        files++;
                        readFile(engine, scanState, scanFile, physicalSchema, ids, names);
                    }
                }
            }
        }
        return new ScanResult(snapshot.getVersion(), files, ids, names);
    }

    private static void readFile(
            Engine engine,
            Row scanState,
            Row scanFile,
            StructType physicalSchema,
            List<Long> ids,
            List<String> names)
            throws IOException {
        FileStatus file = InternalScanFileUtils.getAddFileStatus(scanFile);
        CloseableIterator<ColumnarBatch> physical =
                engine.getParquetHandler()
                        .readParquetFiles(single(file), physicalSchema, Optional.empty())
                        .map(FileReadResult::getData);
        try (CloseableIterator<FilteredColumnarBatch> data =
                Scan.transformPhysicalData(engine, scanState, scanFile, physical)) {
            while (data.hasNext()) {
                try (CloseableIterator<Row> rows = data.next().getRows()) {
                    while (rows.hasNext()) {
                        Row row = rows.next();
                        ids.add(row.getLong(0));
                        names.add(row.getString(1));
                    }
                }
            }
        }
    }

    static <T> CloseableIterator<T> single(T element) {
        return new CloseableIterator<>() {
            private boolean done;

            @Override
            public boolean hasNext() {
                return !done;
            }

            @Override
            public T next() {
                if (done) {
                    throw new NoSuchElementException();
                }
                done = true;
                return element;
            }

            @Override
            public void close() {}
        };
    }

    /** {@code rows} rows of {@link #SCHEMA} starting at id {@code firstId}. */
    private record Batch(long firstId, int rows) implements ColumnarBatch {
        @Override
        public StructType getSchema() {
            return SCHEMA;
        }

        @Override
        public ColumnVector getColumnVector(int ordinal) {
            return new Column(ordinal, firstId, rows);
        }

        @Override
        public int getSize() {
            return rows;
        }
    }

    /** Column 0 ({@code id}) or 1 ({@code name}) of a {@link Batch}. */
    private record Column(int ordinal, long firstId, int rows) implements ColumnVector {
        @Override
        public DataType getDataType() {
            return SCHEMA.at(ordinal).getDataType();
        }

        @Override
        public int getSize() {
            return rows;
        }

        @Override
        public void close() {}

        @Override
        public boolean isNullAt(int rowId) {
            return false;
        }

        @Override
        public long getLong(int rowId) {
            return firstId + rowId;
        }

        @Override
        public String getString(int rowId) {
            return "row-" + (firstId + rowId);
        }
    }
}
