package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.delta.storage.CloseableIterator;
import io.delta.storage.LogStore;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * Delta's {@link LogStore} contract for {@link VendedLogStore} on one cloud: what Delta relies on
 * (read returns the lines written; {@code write(overwrite=false)} refuses an existing file with
 * {@link FileAlreadyExistsException}; {@code listFrom} lists the directory's files from a name
 * on, sorted), and a two-writer race through two separate stores with a barrier before every
 * version: each version written exactly once, by the writer that was told it won.
 */
abstract class LogStoreContract {

    /** The table root of test {@code name}, e.g. {@code s3a://bucket/contract-read/}. */
    abstract Path table(String name) throws IOException;

    /** The configuration serving {@link #table} (one table per writer {@code 0} or {@code 1}). */
    abstract Configuration conf(String name, int writer) throws IOException;

    static Path version(Path table, long v) {
        return new Path(new Path(table, "_delta_log"), String.format("%020d.json", v));
    }

    static List<String> lines(LogStore store, Path p, Configuration c) throws IOException {
        List<String> out = new ArrayList<>();
        try (CloseableIterator<String> it = store.read(p, c)) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    static List<String> names(Iterator<FileStatus> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(s -> out.add(s.getPath().getName()));
        return out;
    }

    @Test
    void readReturnsTheLinesWrittenAndListFromSortsFromAName() throws Exception {
        Path t = table("contract-list");
        Configuration c = conf("contract-list", 0);
        LogStore store = new VendedLogStore(c);
        for (long v : new long[] {2, 0, 11, 1, 10}) {
            store.write(version(t, v), List.of("{\"v\":" + v + "}", "{\"add\":{}}").iterator(), false, c);
        }
        Path log = new Path(t, "_delta_log");
        store.write(new Path(log, String.format("%020d.checkpoint.parquet", 10)), List.of("x").iterator(), false, c);
        store.write(new Path(log, "_last_checkpoint"), List.of("{\"version\":10}").iterator(), true, c);

        assertThat(lines(store, version(t, 11), c)).containsExactly("{\"v\":11}", "{\"add\":{}}");
        assertThat(names(store.listFrom(version(t, 2), c)))
                .containsExactly(
                        "00000000000000000002.json",
                        "00000000000000000010.checkpoint.parquet",
                        "00000000000000000010.json",
                        "00000000000000000011.json",
                        "_last_checkpoint");
        Iterator<FileStatus> all = store.listFrom(version(t, 0), c);
        FileStatus first = all.next();
        assertThat(first.getPath().toString()).isEqualTo(version(t, 0).toString());
        assertThat(first.getLen()).isEqualTo("{\"v\":0}\n{\"add\":{}}\n".length());
        assertThat(first.isDirectory()).isFalse();
        assertThat(store.isPartialWriteVisible(version(t, 0), c)).isFalse();
        assertThat(store.resolvePathOnPhysicalStorage(version(t, 0), c)).isEqualTo(version(t, 0));
    }

    @Test
    void aSecondCommitOfAVersionIsFileAlreadyExistsAndChangesNothing() throws Exception {
        Path t = table("contract-exists");
        Configuration c = conf("contract-exists", 0);
        LogStore store = new VendedLogStore(c);
        store.write(version(t, 0), List.of("first").iterator(), false, c);

        assertThatThrownBy(() -> store.write(version(t, 0), List.of("second").iterator(), false, c))
                .isInstanceOf(FileAlreadyExistsException.class)
                .hasMessageContaining(version(t, 0).toString());
        assertThat(lines(store, version(t, 0), c)).containsExactly("first");

        Path last = new Path(new Path(t, "_delta_log"), "_last_checkpoint");
        store.write(last, List.of("a").iterator(), true, c);
        store.write(last, List.of("b").iterator(), true, c);
        assertThat(lines(store, last, c)).containsExactly("b");
    }

    @Test
    void missingFilesAndDirectoriesAreFileNotFound() throws Exception {
        Path t = table("contract-missing");
        Configuration c = conf("contract-missing", 0);
        LogStore store = new VendedLogStore(c);
        assertThatThrownBy(() -> store.read(version(t, 0), c)).isInstanceOf(FileNotFoundException.class);
        assertThatThrownBy(() -> store.listFrom(version(t, 0), c))
                .isInstanceOf(FileNotFoundException.class);
        store.write(version(t, 0), List.of("x").iterator(), false, c);
        assertThat(names(store.listFrom(version(t, 1), c))).isEmpty();
    }

    /**
     * Two writers with separate stores (two table configurations, two providers) commit versions
     * 0..{@code VERSIONS - 1} of one log; a barrier lets both reach each version's request
     * together. Every version is written exactly once and holds the content of the writer that
     * was told it won; the other was told {@link FileAlreadyExistsException}.
     */
    @Test
    void twoWritersRacingForEveryVersionEachVersionWrittenOnceByTheWinner() throws Exception {
        int versions = 12;
        Path t = table("contract-race");
        Configuration[] confs = {conf("contract-race", 0), conf("contract-race", 1)};
        CyclicBarrier barrier = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<boolean[]>> results = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int writer = w;
                Callable<boolean[]> task =
                        () -> {
                            LogStore store = new VendedLogStore(confs[writer]);
                            boolean[] won = new boolean[versions];
                            for (int v = 0; v < versions; v++) {
                                barrier.await(60, TimeUnit.SECONDS);
                                try {
                                    store.write(
                                            version(t, v),
                                            List.of("writer " + writer + " version " + v).iterator(),
                                            false,
                                            confs[writer]);
                                    won[v] = true;
                                } catch (FileAlreadyExistsException e) {
                                    won[v] = false;
                                }
                            }
                            return won;
                        };
                results.add(pool.submit(task));
            }
            boolean[] a = results.get(0).get(120, TimeUnit.SECONDS);
            boolean[] b = results.get(1).get(120, TimeUnit.SECONDS);
            LogStore reader = new VendedLogStore(confs[0]);
            List<String> listed = names(reader.listFrom(version(t, 0), confs[0]));
            assertThat(listed).hasSize(versions);
            for (int v = 0; v < versions; v++) {
                assertThat(a[v] ^ b[v]).as("version %d: exactly one writer told it won", v).isTrue();
                int winner = a[v] ? 0 : 1;
                assertThat(lines(reader, version(t, v), confs[0]))
                        .as("version %d holds its winner's commit", v)
                        .containsExactly("writer " + winner + " version " + v);
                assertThat(listed.get(v)).isEqualTo(version(t, v).getName());
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
