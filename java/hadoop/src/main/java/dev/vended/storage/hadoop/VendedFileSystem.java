package dev.vended.storage.hadoop;

import dev.vended.storage.ReadOptions;
import dev.vended.storage.WriteOptions;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.StoreStatisticNames;
import org.apache.hadoop.fs.statistics.impl.IOStatisticsStore;
import org.apache.hadoop.util.Progressable;

/**
 * A Hadoop {@link FileSystem} over vended-storage object stores, with <b>per-table credentials
 * resolved by path</b> inside one FileSystem instance.
 *
 * <h2>Schemes</h2>
 *
 * Registered (service file) for the scheme {@code vended}: {@code vended://bucket/path} is a path
 * of the cloud named by {@code vended.storage.vended.scheme} (default {@code s3}). It can also
 * serve other schemes: {@code fs.s3a.impl=dev.vended.storage.hadoop.VendedFileSystem} (likewise
 * {@code s3}, {@code gs}, {@code abfss}); {@code s3a}/{@code s3n}/{@code s3} paths are S3,
 * {@code abfs}/{@code abfss} Azure, {@code gs} GCS. Hadoop's {@code FileContext} (streaming
 * checkpoints) needs {@code fs.AbstractFileSystem.<scheme>.impl}: {@link VendedAbstractFileSystem}.
 *
 * <h2>Tables (configuration keys)</h2>
 *
 * Each table is a group of keys {@code vended.storage.table.<name>.<setting>} ({@code <name>}
 * without dots):
 *
 * <ul>
 *   <li>{@code location}: the table's root, e.g. {@code s3://bucket/warehouse/orders/} (the
 *       scheme may be any alias of the cloud: {@code s3a://}, {@code vended://}). Required, except
 *       for a Lance or Unity Catalog table: without it the catalog locates the table, once per JVM
 *       and never from {@link #initialize}, delaying no other table (rule: package description).
 *   <li>{@code provider.class}: a class implementing {@link dev.vended.storage.StorageOptionsProvider}
 *       with a public constructor {@code (Configuration, String tableName)} or a public no-arg
 *       one; looked up with the thread's context class loader, then this library's class loader,
 *       then the configuration's (classes of Spark {@code --jars} are found).
 *   <li>{@code lance.endpoint}, {@code lance.table-id} (the parts joined by {@code
 *       lance.delimiter}, default {@code $}), {@code lance.token-env}, {@code lance.token-file},
 *       {@code lance.timeout}: a Lance Namespace table; {@code unity.uri}, {@code unity.table}
 *       ({@code catalog.schema.table}), {@code unity.token-env}, {@code unity.token-file}, {@code
 *       unity.timeout}: a Unity Catalog table, asked for {@code READ} credentials when the
 *       table's access is read, else {@code READ_WRITE}. Optional: {@code *.token-env} names an
 *       environment variable holding the bearer token, or {@code *.token-file} a file holding it;
 *       {@code *.timeout} bounds one call (e.g. {@code 10s}, default 10 s). Refreshes run natively.
 *   <li>{@code provider.conf.<key>}: settings of the table's {@code provider.class}, which reads
 *       them with {@code VendedFileSystem.providerConf(conf, tableName)} in its {@code
 *       (Configuration, String tableName)} constructor (a catalog URL, the file or environment variable holding
 *       its secret, ...). Not secrets: a key whose name says secret, password, token, credential,
 *       access key or private key is refused unless it ends in {@code -env}, {@code -file},
 *       {@code -path}, {@code -url} or {@code -uri}.
 *   <li>{@code options.<key>}: static storage options that are not secret ({@code aws_endpoint},
 *       {@code aws_region}, {@code aws_allow_http}, ...), overriding the shared {@code
 *       vended.storage.options.*} of the same key. A key that is not on the library's
 *       non-secret list is refused: secrets never go into the Hadoop or Spark configuration.
 *   <li>{@code lead-time}: how long before expiry to refresh (e.g. {@code 5m}); default the
 *       library's (5 minutes, at most half the credentials' lifetime).
 *   <li>{@code access}: {@code read} or {@code read-write} (default): a table opened {@code read}
 *       refuses every write (create, delete, rename) itself, before any request, with an {@code
 *       IOException} naming the operation, the location and the read open, and is a store of its
 *       own, with its own credentials (the storage option {@code access_mode}).
 * </ul>
 *
 * A path belongs to the table with the <b>longest</b> location that contains it. Each table has
 * its own store and credential source, shared JVM-wide by every FileSystem instance (Hadoop caches
 * FileSystems by scheme, authority and user only, never by configuration): one provider and about
 * one provider call per credential lifetime per table per JVM. A path no table covers is not
 * found; the directories leading to table locations exist (read-only).
 *
 * <h2>Semantics</h2>
 *
 * <ul>
 *   <li>Files are objects; a directory is a prefix with objects under it, or an empty directory
 *       marker object {@code dir/_$folder$} written by {@link #mkdirs} (and by {@link #delete}
 *       and {@link #rename} when they would empty a parent). Markers never show in listings.
 *   <li>{@link #create} writes through a buffered multipart upload; the file becomes visible when
 *       the stream is closed (not before), and a failed write leaves nothing. With {@code
 *       overwrite=false} the object is written create-only (see {@link CreateOnlyOutputStream}):
 *       a writer that loses a race gets {@link FileAlreadyExistsException} from {@code close()}.
 *   <li>A file created under a work path of {@link PendingCommitter} is a pending upload of its
 *       final path, completed at job commit ({@link PendingCommitter#MAGIC_ENABLED_KEY}).
 *   <li>{@link #openFile} takes a known length (no HEAD) and a read policy, see {@link
 *       OpenFileOptions}; input streams read vectored ranges natively, merged by Hadoop's rule
 *       ({@link #VECTORED_MIN_SEEK_KEY}, {@link #VECTORED_MAX_MERGED_KEY}); the FileSystem
 *       and its streams give {@link IOStatistics} ({@link VendedStatistics}).
 *   <li>{@link #rename} is a server-side copy of every object and a delete of the source: <b>not
 *       atomic</b>; renaming across tables is refused; the destination's parents are implied.
 *   <li>{@link #delete} of a directory deletes object by object; deleting the bucket root is
 *       refused ({@code false}).
 *   <li>No append, no permissions, owners or times other than the object's modification time.
 * </ul>
 */
public class VendedFileSystem extends FileSystem implements IOStatisticsSource {

    /** The scheme registered for this FileSystem. */
    public static final String SCHEME = "vended";

    /** The cloud behind {@code vended://} paths ({@code s3}, {@code gs}, {@code abfss}); default s3. */
    public static final String VENDED_SCHEME_KEY = "vended.storage.vended.scheme";

    /** Block size reported to split planners, bytes (default 32 MiB). */
    public static final String BLOCK_SIZE_KEY = "vended.storage.block.size";

    /**
     * Vectored reads: ranges at least this many bytes apart get GETs of their own, bytes (default
     * 4 KiB). As S3A's {@code fs.s3a.vectored.read.min.seek.size}, same default.
     */
    public static final String VECTORED_MIN_SEEK_KEY = "vended.storage.vectored.min-seek";

    /**
     * Vectored reads: the largest GET nearby ranges are merged into, bytes (default 1 MiB); a
     * longer range is one GET of its own. As S3A's {@code fs.s3a.vectored.read.max.merged.size},
     * same default.
     */
    public static final String VECTORED_MAX_MERGED_KEY = "vended.storage.vectored.max-merged";

    /**
     * Part size of the multipart uploads of the files this FileSystem creates ({@code create},
     * and the pending uploads under a {@link PendingCommitter} work path), bytes (default 5 MiB).
     * S3 allows 5 MiB to 5 GiB. A stream holds at most 9 parts (8 uploading, 1 filling): 45 MiB
     * at 5 MiB.
     */
    public static final String WRITE_PART_SIZE_KEY = "vended.storage.write.part-size";

    /**
     * Storage options shared by every table, as {@code vended.storage.options.*} (for example
     * {@code vended.storage.options.aws_endpoint}, {@code vended.storage.options.aws_region}):
     * each table gets them, and its own {@code options.*} overrides one. Non-secret keys
     * only, like the per-table options; none by default.
     */
    public static final String SHARED_OPTIONS_KEY = "vended.storage.options";

    /** Name of the empty object that marks a directory: {@code dir/_$folder$}. */
    public static final String DIR_MARKER = "_$folder$";

    private static final long DEFAULT_BLOCK_SIZE = 32L << 20;

    private URI uri;
    private String cloudScheme;
    private String vendedScheme;
    private long blockSize;
    private Path workingDir;
    /** This bucket's tables. */
    private BucketTables tables;
    /** Path to key mapping. */
    private PathResolver paths;
    /** Statuses and listings. */
    private Listings listings;
    /** Directories, deletes and renames. */
    private Namespace namespace;
    /** The create path. */
    private Writes writes;
    /** The open path, with how vectored reads merge ranges ({@link #VECTORED_MIN_SEEK_KEY}). */
    private Reads reads;
    /** Part size of uploads ({@link #WRITE_PART_SIZE_KEY}). */
    private WriteOptions writeOptions = WriteOptions.defaults();
    /** This instance's counters (see {@link VendedStatistics}). */
    private final IOStatisticsStore ioStatistics = VendedStatistics.forFileSystem();

    /** Creates an uninitialized FileSystem (Hadoop calls {@link #initialize}). */
    public VendedFileSystem() {}

    /**
     * The settings of table {@code tableName}'s provider: its {@code
     * vended.storage.table.<tableName>.provider.conf.<key>} entries, for a {@code provider.class}
     * to read in its {@code (Configuration, String tableName)} constructor.
     *
     * @param conf the configuration the provider was given
     * @param tableName the table name it was given
     * @return the settings, keys without the prefix ({@code provider.conf.url} as {@code url}),
     *     values trimmed, sorted by key; empty if none
     */
    public static Map<String, String> providerConf(Configuration conf, String tableName) {
        return Collections.unmodifiableMap(TableConfig.providerConf(conf, tableName));
    }

    @Override
    public String getScheme() {
        return uri == null ? SCHEME : uri.getScheme();
    }

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        setConf(conf);
        if (name.getScheme() == null || name.getAuthority() == null) {
            throw new IOException(
                    "a " + getClass().getSimpleName() + " URI names a bucket: scheme://bucket/, got " + name);
        }
        this.uri = URI.create(name.getScheme() + "://" + name.getAuthority());
        this.vendedScheme = conf.getTrimmed(VENDED_SCHEME_KEY, "s3");
        this.cloudScheme = TableConfig.Location.cloudScheme(name.getScheme(), vendedScheme);
        this.blockSize = conf.getLongBytes(BLOCK_SIZE_KEY, DEFAULT_BLOCK_SIZE);
        long partSize = conf.getLongBytes(WRITE_PART_SIZE_KEY, WriteOptions.DEFAULT_PART_SIZE);
        if (partSize <= 0) {
            throw new IOException(
                    WRITE_PART_SIZE_KEY + " must be positive (bytes), got " + partSize);
        }
        this.writeOptions = WriteOptions.defaults().withPartSize(partSize);
        this.tables =
                new BucketTables(
                        cloudScheme,
                        name.getAuthority(),
                        TableConfig.all(conf).values(),
                        conf,
                        vendedScheme);
        this.paths = new PathResolver(this, uri, tables, conf, vendedScheme);
        this.listings = new Listings(this, paths, blockSize);
        this.namespace = new Namespace(paths, listings);
        this.writes = new Writes(this, paths, listings);
        this.reads = new Reads(paths, ioStatistics, VectoredReads.Merge.of(conf));
        this.workingDir = makeQualified(new Path("/"));
        VendedAbstractFileSystem.warnIfUnbound(name.getScheme(), conf);
    }

    /** Part size and concurrency of this FileSystem's uploads ({@link #WRITE_PART_SIZE_KEY}). */
    WriteOptions writeOptions() {
        return writeOptions;
    }

    @Override
    public URI getUri() {
        return uri;
    }

    /** No delegation tokens: credentials come from each table's provider. */
    @Override
    public String getCanonicalServiceName() {
        return null;
    }

    @Override
    public Path getWorkingDirectory() {
        return workingDir;
    }

    @Override
    public void setWorkingDirectory(Path dir) {
        workingDir = makeQualified(dir);
    }

    /** {@inheritDoc} */
    @Deprecated
    @Override
    public long getDefaultBlockSize() {
        return blockSize;
    }

    @Override
    public long getDefaultBlockSize(Path f) {
        return blockSize;
    }

    /**
     * The name of the table a path belongs to (longest matching known location; see the {@linkplain
     * dev.vended.storage.hadoop package description} for tables located by their catalog).
     *
     * @param path a path of this FileSystem
     * @return the table's configured name, or {@code null} when no known table covers the path
     * @throws IllegalArgumentException if the path belongs to another FileSystem
     * @throws java.io.UncheckedIOException (of an {@link java.io.InterruptedIOException}) if
     *     interrupted while a catalog locates a table
     */
    public String tableOf(Path path) {
        try {
            Target t = paths.resolve(path);
            return t.table() == null ? null : t.table().config().name;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The store this FileSystem serves {@code path} with, and the path's key in it: the same store
     * and credentials as its own reads and writes of the path (see {@link StoreObject}).
     *
     * @param path a path of this FileSystem
     * @return the store and key
     * @throws FileNotFoundException if no known table covers the path
     * @throws IOException if the table's store cannot be opened now (naming the table)
     */
    public StoreObject storeObject(Path path) throws IOException {
        Target t = paths.requireTable(path);
        return new StoreObject(paths.store(t), t.key());
    }

    // ---------------------------------------------------------------------------------------
    // Status (see Listings)

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        statistics.incrementReadOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_GET_FILE_STATUS);
        return listings.status(paths.resolve(f));
    }

    /** The stored full-object checksum: see {@link VendedFileChecksum}; one {@code HEAD}. */
    @Override
    public FileChecksum getFileChecksum(Path f) throws IOException {
        statistics.incrementReadOps(1);
        return VendedFileChecksum.of(this, paths, f);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        statistics.incrementReadOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_LIST_STATUS);
        return listings.list(paths.resolve(f));
    }

    /**
     * Lists files; recursively with one flat listing of the prefix (no directory walk).
     *
     * @throws FileNotFoundException if nothing exists at {@code f}
     */
    @Override
    public RemoteIterator<LocatedFileStatus> listFiles(Path f, boolean recursive)
            throws IOException {
        if (!recursive) {
            return super.listFiles(f, false);
        }
        statistics.incrementReadOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_LIST_FILES);
        Target t = paths.resolve(f);
        if (t.table() == null) {
            return super.listFiles(f, true);
        }
        return listings.listRecursively(t);
    }

    // ---------------------------------------------------------------------------------------
    // Reading and writing

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f, ReadOptions.defaults());
    }

    /**
     * Opens a file with the options of {@code openFile(path)} (see {@link OpenFileOptions}): a
     * length known from {@code withFileStatus} or {@code fs.option.openfile.length} opens it
     * without a HEAD; {@code fs.option.openfile.read.policy} chooses the core's read policy.
     *
     * @throws IllegalArgumentException (thrown, not in the future) for a mandatory key other than
     *     Hadoop's standard openFile options, or a file status of another path
     */
    @Override
    protected CompletableFuture<FSDataInputStream> openFileWithOptions(
            Path path, OpenFileParameters parameters) throws IOException {
        ReadOptions options = OpenFileOptions.of(path, parameters);
        CompletableFuture<FSDataInputStream> result = new CompletableFuture<>();
        try {
            result.complete(open(path, options));
        } catch (IOException | RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private FSDataInputStream open(Path f, ReadOptions options) throws IOException {
        statistics.incrementReadOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_OPEN);
        return reads.open(paths.requireTable(f), options, statistics);
    }

    @Override
    public FSDataOutputStream create(
            Path f,
            FsPermission permission,
            boolean overwrite,
            int bufferSize,
            short replication,
            long blockSize,
            Progressable progress)
            throws IOException {
        statistics.incrementWriteOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_CREATE);
        return writes.create(paths.requireTable(f), overwrite, statistics);
    }

    /** As {@link #create}, after checking that the parent exists and is a directory. */
    @Override
    public FSDataOutputStream createNonRecursive(
            Path f,
            FsPermission permission,
            EnumSet<CreateFlag> flags,
            int bufferSize,
            short replication,
            long blockSize,
            Progressable progress)
            throws IOException {
        writes.requireParentDirectory(f);
        return create(
                f,
                permission,
                flags.contains(CreateFlag.OVERWRITE),
                bufferSize,
                replication,
                blockSize,
                progress);
    }

    /** Not supported: objects cannot be appended to. */
    @Override
    public FSDataOutputStream append(Path f, int bufferSize, Progressable progress)
            throws IOException {
        throw new UnsupportedOperationException(
                "append is not supported by " + getClass().getSimpleName() + ": " + f);
    }

    // ---------------------------------------------------------------------------------------
    // Namespace operations

    @Override
    public boolean mkdirs(Path f, FsPermission permission) throws IOException {
        statistics.incrementWriteOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_MKDIRS);
        return namespace.mkdirs(paths.resolve(f));
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        statistics.incrementWriteOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_DELETE);
        return namespace.delete(paths.requireTable(f), recursive);
    }

    /**
     * Renames a file or a directory within one table: server-side copies, then deletes of the
     * sources. Not atomic: a failure part-way leaves some objects at both places.
     *
     * @return {@code false} when the source does not exist, the destination is an existing file,
     *     the destination is inside the source, or the source is the root
     * @throws IOException if the source and destination belong to different tables, or a request
     *     fails
     */
    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        statistics.incrementWriteOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_RENAME);
        return namespace.rename(paths.requireTable(src), paths.requireTable(dst));
    }

    /**
     * Renames as {@code FileContext.rename} does: see {@link
     * VendedAbstractFileSystem#renameInternal(Path, Path, boolean)}, its caller.
     */
    @Deprecated
    @Override
    protected void rename(Path src, Path dst, Options.Rename... options) throws IOException {
        statistics.incrementWriteOps(1);
        ioStatistics.incrementCounter(StoreStatisticNames.OP_RENAME);
        boolean overwrite =
                options != null && Arrays.asList(options).contains(Options.Rename.OVERWRITE);
        namespace.rename(paths.requireTable(src), paths.requireTable(dst), overwrite);
    }

    /**
     * What this FileSystem really supports: the standard {@code openFile} options ({@code
     * fs.option.openfile.*}: length, read policy, buffer size, split start and end), vectored
     * reads ({@code in:readvectored}), {@code in:readbytebuffer}, {@code iostatistics} and, while
     * enabled, {@link PendingCommitter#MAGIC_CAPABILITY}; Hadoop's
     * answer (no symlinks) for anything else, so {@code false} for permissions, append, ACLs,
     * xattrs, snapshots, concat, truncate and the rest.
     */
    @Override
    public boolean hasPathCapability(Path path, String capability) throws IOException {
        Boolean known = Capabilities.of(this, path, capability);
        return known != null ? known : super.hasPathCapability(path, capability);
    }

    /** Whether the magic committer is enabled (see {@link Capabilities}). */
    boolean pendingEnabled() {
        return writes.pending().enabled();
    }

    /** The store serving {@code path} and its bucket key (for {@link PendingCommitter}). */
    PendingWrites.StoreAndKey storeOf(Path path) throws IOException {
        return writes.pending().storeOf(path);
    }

    /**
     * This instance's counters, live: operations and the sums of its closed input streams'
     * counters (see {@link VendedStatistics}), with its tables' HTTP requests, retries, throttling
     * and credential refreshes, summed and per table (see {@link StoreStatistics}).
     */
    @Override
    public IOStatistics getIOStatistics() {
        BucketTables t = tables;
        return new StoreStatistics(ioStatistics, () -> t == null ? Map.of() : t.openStores());
    }

    /** Does not close the tables' stores: they are shared JVM-wide (see the class description). */
    @Override
    public void close() throws IOException {
        super.close();
    }

    @Override
    public String toString() {
        return "VendedFileSystem{uri=" + uri + ", tables=" + (tables == null ? "[]" : tables) + "}";
    }
}
