package dev.vended.storage.delta;

import dev.vended.storage.ListResult;
import dev.vended.storage.ObjectAlreadyExistsException;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.hadoop.StoreObject;
import dev.vended.storage.hadoop.VendedFileSystem;

import io.delta.storage.CloseableIterator;
import io.delta.storage.LineCloseableIterator;
import io.delta.storage.LogStore;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Delta's {@link LogStore} on {@link VendedFileSystem}, for S3 ({@code s3}, {@code s3a}), Azure
 * ({@code abfs}, {@code abfss}) and GCS ({@code gs}) paths: set it per scheme with {@code
 * spark.delta.logStore.<scheme>.impl=dev.vended.storage.delta.VendedLogStore}, with {@code
 * fs.<scheme>.impl} naming {@link VendedFileSystem} (see {@code docs/delta.md}). It works on the
 * same store, and so the same vended credentials, as the file system serves the path with ({@link
 * VendedFileSystem#storeObject}); it holds no state and no credential of its own.
 *
 * <p><b>Commits.</b> {@link #write} with {@code overwrite=false} writes the commit file with one
 * create-only request through the native core ({@link
 * dev.vended.storage.ObjectStore#putCommit}): {@code If-None-Match: *} on S3 and Azure, {@code
 * x-goog-if-generation-match: 0} on GCS. There is no existence check before it, no lock and no
 * rename: of writers racing for a version, in one JVM or many, exactly one succeeds and the others
 * get {@link FileAlreadyExistsException}, which Delta answers by checking for conflicts and
 * retrying at the next version. A retried request whose first attempt was stored (its answer lost)
 * is recognised as this writer's own by a per-write id in the object's metadata and succeeds once.
 * An endpoint that ignores the condition is detected before the first commit through a store and
 * every commit is refused with an {@link IOException} naming the endpoint and the alternatives.
 *
 * <p>Thread-safe; Delta creates one per scheme and configuration.
 */
public class VendedLogStore extends LogStore {

    /**
     * Creates the log store (Delta calls this with its Hadoop configuration).
     *
     * @param initHadoopConf the configuration Delta was started with
     */
    public VendedLogStore(Configuration initHadoopConf) {
        super(initHadoopConf);
    }

    /**
     * Reads a log file's lines (one GET).
     *
     * @throws FileNotFoundException if no file is at {@code path}
     * @throws IOException if the path is not served by {@link VendedFileSystem}, or the read fails
     */
    @Override
    public CloseableIterator<String> read(Path path, Configuration hadoopConf) throws IOException {
        StoreObject o = locate(path, hadoopConf);
        byte[] bytes;
        try {
            bytes = o.store().get(o.key());
        } catch (ObjectNotFoundException e) {
            FileNotFoundException f = new FileNotFoundException("no Delta log file at " + path);
            f.initCause(e);
            throw f;
        }
        return new LineCloseableIterator(
                new InputStreamReader(new ByteArrayInputStream(bytes), StandardCharsets.UTF_8));
    }

    /**
     * Writes a log file: each action followed by {@code \n}. With {@code overwrite=false} (every
     * commit) one create-only request; with {@code overwrite=true} (Delta's {@code
     * _last_checkpoint}) one plain PUT.
     *
     * @throws FileAlreadyExistsException if {@code overwrite} is false and another writer's file is
     *     at {@code path}
     * @throws IOException if the path is not served by {@link VendedFileSystem}, if the endpoint
     *     ignores create-only conditions (naming it; nothing written), or the write fails
     */
    @Override
    public void write(
            Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
            throws IOException {
        StoreObject o = locate(path, hadoopConf);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (actions.hasNext()) {
            out.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        byte[] bytes = out.toByteArray();
        if (Boolean.TRUE.equals(overwrite)) {
            o.store().put(o.key(), bytes);
            return;
        }
        try {
            o.store().putCommit(o.key(), bytes);
        } catch (ObjectAlreadyExistsException e) {
            FileAlreadyExistsException f = new FileAlreadyExistsException(path.toString());
            f.initCause(e);
            throw f;
        }
    }

    /**
     * The files in {@code path}'s directory whose names sort at or after {@code path}'s name,
     * sorted by path, from one listing of the directory.
     *
     * @throws FileNotFoundException if nothing is stored under the directory
     * @throws IOException if the path is not served by {@link VendedFileSystem}, or the listing
     *     fails
     */
    @Override
    public Iterator<FileStatus> listFrom(Path path, Configuration hadoopConf) throws IOException {
        FileSystem fs = path.getFileSystem(hadoopConf);
        Path qualified = fs.makeQualified(path);
        Path dir = qualified.getParent();
        if (dir == null) {
            throw new FileNotFoundException("a Delta log path names a file in a directory: " + path);
        }
        StoreObject d = locate(fs, dir);
        ListResult r = d.store().listWithDelimiter(d.key());
        if (r.objects().isEmpty() && r.commonPrefixes().isEmpty()) {
            throw new FileNotFoundException("no such directory: " + dir);
        }
        String from = path.getName();
        long blockSize = fs.getDefaultBlockSize(qualified);
        List<FileStatus> out = new ArrayList<>();
        for (ObjectMeta m : r.objects()) {
            String name = m.path().substring(m.path().lastIndexOf('/') + 1);
            if (name.compareTo(from) >= 0 && !name.equals(VendedFileSystem.DIR_MARKER)) {
                out.add(
                        new FileStatus(
                                m.size(), false, 1, blockSize, m.lastModifiedMillis(),
                                new Path(dir, name)));
            }
        }
        out.sort(Comparator.comparing(s -> s.getPath().getName()));
        return out.iterator();
    }

    /**
     * The path qualified by its file system ({@code scheme://bucket/key}), as Delta's Hadoop log
     * stores resolve it.
     */
    @Override
    public Path resolvePathOnPhysicalStorage(Path path, Configuration hadoopConf)
            throws IOException {
        return path.getFileSystem(hadoopConf).makeQualified(path);
    }

    /** {@code false}: a log file is visible only once its single request completed. */
    @Override
    public Boolean isPartialWriteVisible(Path path, Configuration hadoopConf) {
        return false;
    }

    private static StoreObject locate(Path path, Configuration conf) throws IOException {
        return locate(path.getFileSystem(conf), path);
    }

    private static StoreObject locate(FileSystem fs, Path path) throws IOException {
        if (!(fs instanceof VendedFileSystem vfs)) {
            String scheme = path.toUri().getScheme();
            throw new IOException(
                    VendedLogStore.class.getSimpleName()
                            + " needs "
                            + path
                            + " to be served by "
                            + VendedFileSystem.class.getName()
                            + ", but the file system of scheme '"
                            + scheme
                            + "' is "
                            + fs.getClass().getName()
                            + " (set fs."
                            + scheme
                            + ".impl="
                            + VendedFileSystem.class.getName()
                            + ", or a log store for "
                            + fs.getClass().getSimpleName()
                            + " in spark.delta.logStore."
                            + scheme
                            + ".impl)");
        }
        return vfs.storeObject(path);
    }
}
