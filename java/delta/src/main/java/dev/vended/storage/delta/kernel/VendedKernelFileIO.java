package dev.vended.storage.delta.kernel;

import dev.vended.storage.ListResult;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.Redaction;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.StorageException;
import dev.vended.storage.StorageOptionsProvider;

import io.delta.kernel.defaults.engine.fileio.FileIO;
import io.delta.kernel.defaults.engine.fileio.InputFile;
import io.delta.kernel.defaults.engine.fileio.OutputFile;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;

/**
 * Delta Kernel's {@link FileIO} on the library's {@link ObjectStore}: a plain Java program reads
 * and writes a Delta table with {@code delta-kernel-defaults}' {@code DefaultEngine} and no
 * Hadoop file system, with credentials that a {@link StorageOptionsProvider} vends and the native
 * side refreshes before they expire.
 *
 * <pre>{@code
 * String table = "s3://bucket/tables/t";
 * try (VendedKernelFileIO io = VendedKernelFileIO.open(table, options, provider)) {
 *     Engine engine = DefaultEngine.create(io);
 *     Snapshot snapshot = TableManager.loadSnapshot(table).build(engine);
 *     ...
 * }
 * }</pre>
 *
 * <h2>One table location per FileIO</h2>
 *
 * The FileIO serves the paths under the URI it was opened with (its <em>root</em>, usually the
 * table's location, which is also what catalogs scope vended credentials to); Kernel's paths are
 * fully qualified ({@code s3://bucket/tables/t/_delta_log/...}) and any other path is refused with
 * an {@link IllegalArgumentException} naming it and the root. {@code s3}, {@code s3a} and {@code
 * s3n} name the same bucket.
 *
 * <h2>What each call costs and guarantees</h2>
 *
 * <ul>
 *   <li>{@link #listFrom}: one listing of the directory, one level ({@code /} delimiter), filtered
 *       to the names at or after the given one and sorted by name in UTF-8 byte order; {@link
 *       FileNotFoundException} when nothing at all is under the directory (Kernel's "no table");
 *   <li>{@link #newInputFile}: no request; its stream sends ranged or streaming GETs (the
 *       library's {@link SeekableObjectInputStream}), one HEAD first only when the size is
 *       unknown;
 *   <li>{@link #newOutputFile}: writes appear whole when closed; a commit ({@code
 *       writeAtomically(lines, false)}) and a checkpoint ({@code create(true)}) are create-only
 *       writes decided at the store, {@link java.nio.file.FileAlreadyExistsException} when the
 *       file exists;
 *   <li>{@link #copyFileAtomically}: a server-side copy when overwriting; otherwise the source is
 *       streamed into a create-only write, so the target appears whole or not at all;
 *   <li>{@link #mkdirs}: object stores have no directories: checks the path, sends nothing;
 *   <li>{@link #getConf}: Kernel's settings (e.g. {@code delta.kernel.default.json.reader
 *       .batch-size}) from the map given at open; never storage options.
 * </ul>
 *
 * <p>A missing object is a {@link FileNotFoundException}; other failures are the library's {@link
 * StorageException} (an {@link IOException}) with the core's kind and retryability, e.g. a {@link
 * dev.vended.storage.CredentialsException} when the endpoint still refuses after one retry with
 * fresh credentials. No message or {@code toString()} contains a secret.
 *
 * <h2>The Hadoop classes Kernel still loads</h2>
 *
 * No Hadoop {@code FileSystem} is created and no byte goes through one: every read, write and
 * listing is this FileIO's, so no Hadoop connector ({@code hadoop-aws}, ABFS, GCS) and no {@code
 * fs.<scheme>.impl} is needed. {@code delta-kernel-defaults} still needs Hadoop's client jars
 * (it depends on {@code hadoop-client-runtime}, which brings {@code hadoop-client-api}), for
 * Parquet:
 *
 * <ul>
 *   <li>{@code DefaultEngine} links {@code org.apache.hadoop.conf.Configuration} (its other
 *       factory takes one);
 *   <li>its Parquet reader and writer are {@code parquet-hadoop}'s, configured with a {@code
 *       HadoopParquetConfiguration}: a new {@code Configuration}, which reads {@code
 *       core-default.xml} (and a {@code core-site.xml} on the class path) with the XML parser
 *       {@code hadoop-client-runtime} shades, and loads the {@code FileSystem} and {@code
 *       LocalFileSystem} classes without creating either;
 *   <li>Parquet compresses through Hadoop's codec interfaces ({@code
 *       org.apache.hadoop.io.compress}: {@code CompressionCodec}, {@code CodecPool}), whose
 *       {@code ReflectionUtils} loads {@code mapred.JobConf} and, through its deprecated keys,
 *       some {@code mapreduce} classes; {@code CodecPool} uses Hadoop's shaded Guava.
 * </ul>
 *
 * <p>{@code delta-storage} (Delta's {@code LogStore}), which {@code delta-kernel-defaults} also
 * brings, is not loaded: commits are this FileIO's create-only writes. (Checked by logging the
 * classes a JVM running {@code KernelCommitsTest} loads; {@code KernelTableRotationTest} asserts
 * Hadoop's file-system statistics stay empty.)
 *
 * <p>Thread-safe; Kernel may use it from several threads. {@link #close()} closes the store when
 * this FileIO opened it.
 */
public final class VendedKernelFileIO implements FileIO, AutoCloseable {

    /** UTF-8 byte order of strings, which is their code point order. */
    private static final Comparator<String> UTF8_ORDER = VendedKernelFileIO::compareCodePoints;

    private final ObjectStore store;
    private final boolean ownsStore;
    private final TableRoot root;
    private final Map<String, String> conf;

    private VendedKernelFileIO(ObjectStore store, boolean ownsStore, Map<String, String> conf) {
        this.store = store;
        this.ownsStore = ownsStore;
        this.root = TableRoot.of(store.uri());
        this.conf = Map.copyOf(conf);
    }

    /**
     * Opens a store at a table's location whose credentials come from {@code provider}; Kernel
     * settings none.
     *
     * @param tableUri the table's location, e.g. {@code s3://bucket/tables/t}
     * @param options the initial storage options ({@code null} means none), e.g. the ones the
     *     catalog returned with the table; they seed the credential cache
     * @param provider the credential source, or {@code null} for static options
     * @return the FileIO; close it to close its store
     * @throws IllegalArgumentException naming the URI when it is not {@code scheme://bucket/path}
     * @throws StorageException as {@link ObjectStore#open(String, Map, StorageOptionsProvider)}
     *     (e.g. {@link dev.vended.storage.InvalidOptionsException} for unusable options, {@link
     *     dev.vended.storage.CredentialsException} when the options hold no valid credentials and
     *     the provider fails)
     */
    public static VendedKernelFileIO open(
            String tableUri, Map<String, String> options, StorageOptionsProvider provider)
            throws StorageException {
        return open(tableUri, options, provider, Map.of());
    }

    /**
     * Opens a store at a table's location whose credentials come from {@code provider}, with
     * Kernel settings for {@link #getConf}.
     *
     * @param tableUri the table's location, e.g. {@code s3://bucket/tables/t}
     * @param options the initial storage options ({@code null} means none)
     * @param provider the credential source, or {@code null} for static options
     * @param kernelConf Kernel's settings, e.g. {@code delta.kernel.default.parquet.reader
     *     .batch-size}; copied; keys and values must not be null
     * @return the FileIO; close it to close its store
     * @throws NullPointerException if {@code tableUri} or {@code kernelConf} is null, or holds a
     *     null key or value
     * @throws IllegalArgumentException naming the URI when it is not {@code scheme://bucket/path}
     * @throws StorageException as {@link ObjectStore#open(String, Map, StorageOptionsProvider)}
     */
    public static VendedKernelFileIO open(
            String tableUri,
            Map<String, String> options,
            StorageOptionsProvider provider,
            Map<String, String> kernelConf)
            throws StorageException {
        Objects.requireNonNull(tableUri, "tableUri");
        Map<String, String> conf = Map.copyOf(Objects.requireNonNull(kernelConf, "kernelConf"));
        TableRoot.of(tableUri); // a clear error before anything is opened
        return new VendedKernelFileIO(ObjectStore.open(tableUri, options, provider), true, conf);
    }

    /**
     * Serves a store the caller opened (e.g. with {@link ObjectStore#builder} for another lead
     * time or a session); {@link #close()} leaves it open.
     *
     * @param store an open store at the table's location
     * @param kernelConf Kernel's settings for {@link #getConf}; copied
     * @return the FileIO
     * @throws NullPointerException if an argument is null, or {@code kernelConf} holds a null key
     *     or value
     * @throws IllegalArgumentException naming the store's URI when it is not {@code
     *     scheme://bucket/path}
     */
    public static VendedKernelFileIO of(ObjectStore store, Map<String, String> kernelConf) {
        Objects.requireNonNull(store, "store");
        return new VendedKernelFileIO(
                store, false, Objects.requireNonNull(kernelConf, "kernelConf"));
    }

    /**
     * The store this FileIO reads and writes through (for its counters, {@link
     * ObjectStore#refreshStats()} and {@link ObjectStore#requestStats()}).
     *
     * @return the store
     */
    public ObjectStore store() {
        return store;
    }

    /**
     * Lists the files in {@code filePath}'s directory whose names are at or after its name, in
     * UTF-8 byte order of their names, with one listing of that directory.
     *
     * @param filePath a fully qualified path, e.g. {@code
     *     s3://b/t/_delta_log/00000000000000000000.}
     * @return the files; the iterator holds them in memory and its {@code close()} releases nothing
     * @throws FileNotFoundException if nothing is under the directory
     * @throws IllegalArgumentException if the path is not under the root
     * @throws StorageException for failures of the listing
     */
    @Override
    public CloseableIterator<FileStatus> listFrom(String filePath) throws IOException {
        String key = root.keyOf(filePath);
        int slash = key.lastIndexOf('/');
        String dir = slash < 0 ? null : key.substring(0, slash);
        String from = key.substring(slash + 1);
        ListResult level = store.listWithDelimiter(dir);
        if (level.objects().isEmpty() && level.commonPrefixes().isEmpty()) {
            throw new FileNotFoundException(
                    "no such directory: " + root.pathOf(dir == null ? "" : dir));
        }
        List<ObjectMeta> files = new ArrayList<>();
        for (ObjectMeta meta : level.objects()) {
            if (compareCodePoints(nameOf(meta.path()), from) >= 0) {
                files.add(meta);
            }
        }
        files.sort(Comparator.comparing(ObjectMeta::path, UTF8_ORDER));
        List<FileStatus> statuses = new ArrayList<>(files.size());
        for (ObjectMeta meta : files) {
            statuses.add(status(meta));
        }
        return iterator(statuses);
    }

    /**
     * One HEAD.
     *
     * @param path a fully qualified path to a file
     * @return its size and last modification time
     * @throws FileNotFoundException if the object does not exist
     * @throws IllegalArgumentException if the path is not under the root
     * @throws StorageException for other failures
     */
    @Override
    public FileStatus getFileStatus(String path) throws IOException {
        String key = root.keyOf(path);
        try {
            return status(store.head(key));
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    /**
     * Qualifies a path without a request: the root's scheme and location followed by the key, no
     * trailing {@code /} (so {@code s3a://b/t/} under a root {@code s3://b/t} is {@code s3://b/t}).
     * Existence is not checked: Kernel resolves a table's path before creating it.
     *
     * @param path a fully qualified path under the root
     * @return the path in this FileIO's canonical form
     * @throws IllegalArgumentException if the path is not under the root
     */
    @Override
    public String resolvePath(String path) {
        return root.pathOf(root.keyOf(path));
    }

    /**
     * Object stores have no directories, so there is nothing to create: checks that the path is
     * under the root and sends no request.
     *
     * @param path a fully qualified path
     * @return {@code true}
     * @throws IllegalArgumentException if the path is not under the root
     */
    @Override
    public boolean mkdirs(String path) {
        root.keyOf(path);
        return true;
    }

    /**
     * A file to read, without a request.
     *
     * @param path a fully qualified path to a file
     * @param fileSize its size in bytes, or a negative number when unknown (one HEAD when the
     *     stream is opened)
     * @return the file
     * @throws IllegalArgumentException if the path is not under the root
     */
    @Override
    public InputFile newInputFile(String path, long fileSize) {
        return new KernelInputFile(store, root.keyOf(path), path, fileSize);
    }

    /**
     * A file to write, without a request; see {@link OutputFile#create(boolean)} and {@link
     * OutputFile#writeAtomically} for when an existing file is replaced.
     *
     * @param path a fully qualified path to a file
     * @return the file
     * @throws IllegalArgumentException if the path is not under the root
     */
    @Override
    public OutputFile newOutputFile(String path) {
        return new KernelOutputFile(store, root.keyOf(path), path);
    }

    /**
     * Deletes one object (one request). S3 does not say whether the object existed, so there a
     * missing file also returns {@code true}; stores that do say (local files) return {@code
     * false}.
     *
     * @param path a fully qualified path to a file
     * @return {@code false} if the store reported the file missing, else {@code true}
     * @throws IllegalArgumentException if the path is not under the root
     * @throws StorageException for failures
     */
    @Override
    public boolean delete(String path) throws IOException {
        String key = root.keyOf(path);
        try {
            store.delete(key);
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        }
    }

    /**
     * A Kernel setting given at open.
     *
     * @param confKey the setting's name
     * @return its value, or empty
     */
    @Override
    public Optional<String> getConf(String confKey) {
        return Optional.ofNullable(confKey == null ? null : conf.get(confKey));
    }

    /**
     * Copies a file so that the target appears whole or not at all. With {@code overwrite} one
     * server-side copy; without, the source is streamed into a create-only write (the library's
     * conditional PUT or conditional multipart completion), which works on every cloud without
     * {@code aws_copy_if_not_exists}.
     *
     * @param srcPath the fully qualified source path
     * @param destPath the fully qualified target path
     * @param overwrite whether to replace an existing target
     * @throws FileNotFoundException if the source does not exist
     * @throws java.nio.file.FileAlreadyExistsException if the target exists and {@code overwrite}
     *     is false (nothing is written)
     * @throws IllegalArgumentException if a path is not under the root
     * @throws StorageException for other failures
     */
    @Override
    public void copyFileAtomically(String srcPath, String destPath, boolean overwrite)
            throws IOException {
        String from = root.keyOf(srcPath);
        String to = root.keyOf(destPath);
        if (overwrite) {
            try {
                store.copy(from, to);
            } catch (ObjectNotFoundException e) {
                throw KernelErrors.notFound(srcPath, e);
            }
            return;
        }
        try (SeekableObjectInputStream in = openSource(from, srcPath)) {
            new KernelOutputFile(store, to, destPath).copyFrom(in);
        }
    }

    private SeekableObjectInputStream openSource(String key, String path) throws IOException {
        try {
            return store.openInput(key);
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    /** Closes the store if this FileIO opened it ({@link #open}); idempotent. */
    @Override
    public void close() {
        if (ownsStore) {
            store.close();
        }
    }

    @Override
    public String toString() {
        return "VendedKernelFileIO{root=" + Redaction.redactUri(root.uri()) + "}";
    }

    private FileStatus status(ObjectMeta meta) {
        return FileStatus.of(root.pathOf(meta.path()), meta.size(), meta.lastModifiedMillis());
    }

    private static String nameOf(String key) {
        return key.substring(key.lastIndexOf('/') + 1);
    }

    /** Compares by code point, which is the order of the strings' UTF-8 bytes. */
    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) { // each step advances both by one code point
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    private static CloseableIterator<FileStatus> iterator(List<FileStatus> statuses) {
        return new CloseableIterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < statuses.size();
            }

            @Override
            public FileStatus next() {
                if (next >= statuses.size()) {
                    throw new NoSuchElementException();
                }
                return statuses.get(next++);
            }

            @Override
            public void close() {}
        };
    }
}
