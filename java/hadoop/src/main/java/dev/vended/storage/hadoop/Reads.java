package dev.vended.storage.hadoop;

import static dev.vended.storage.hadoop.Listings.hasChildren;
import static dev.vended.storage.hadoop.PathResolver.mayBeObject;
import static dev.vended.storage.hadoop.PathResolver.notFound;

import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FileNotFoundException;
import java.io.IOException;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;

/**
 * The open path of one {@link VendedFileSystem}: the checks before a file is opened and the input
 * stream that reads it ({@link VendedInputStream} over the core's seekable stream, with the
 * FileSystem's vectored-read merge rule). Thread-safe as the stores are.
 */
final class Reads {

    private final PathResolver paths;
    private final IOStatisticsStore ioStatistics;
    private final VectoredReads.Merge vectoredMerge;

    /**
     * The open path over {@code paths}, whose streams add their counters to {@code ioStatistics}
     * when closed and merge vectored ranges by {@code vectoredMerge}.
     */
    Reads(PathResolver paths, IOStatisticsStore ioStatistics, VectoredReads.Merge vectoredMerge) {
        this.paths = paths;
        this.ioStatistics = ioStatistics;
        this.vectoredMerge = vectoredMerge;
    }

    /**
     * Opens the file at a resolved path, which must belong to a table, with {@code options}
     * (a known length opens it without a HEAD).
     *
     * @throws FileNotFoundException at a table's root or a directory (a key with children), or
     *     when nothing is stored at the path
     */
    FSDataInputStream open(Target t, ReadOptions options, FileSystem.Statistics statistics)
            throws IOException {
        if (!mayBeObject(t.table(), t.key())) {
            throw new FileNotFoundException("cannot open a directory: " + t.path());
        }
        ObjectStore store = paths.store(t);
        try {
            return new FSDataInputStream(
                    new VendedInputStream(
                            store.openInput(t.key(), options),
                            store,
                            statistics,
                            t.path().toString(),
                            ioStatistics,
                            vectoredMerge));
        } catch (ObjectNotFoundException e) {
            if (hasChildren(store, t.key())) {
                FileNotFoundException d =
                        new FileNotFoundException("cannot open a directory: " + t.path());
                d.initCause(e);
                throw d;
            }
            throw notFound(t.path(), e);
        }
    }
}
