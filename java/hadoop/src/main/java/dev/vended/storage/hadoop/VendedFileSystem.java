package dev.vended.storage.hadoop;

import dev.vended.storage.ListResult;
import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectListing;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;
import dev.vended.storage.UncheckedStorageException;
import dev.vended.storage.hadoop.BucketTables.Table;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
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
 * {@code abfs}/{@code abfss} Azure, {@code gs} GCS.
 *
 * <h2>Tables (configuration keys)</h2>
 *
 * Each table is a group of keys {@code vended.storage.table.<name>.<setting>} ({@code <name>}
 * without dots):
 *
 * <ul>
 *   <li>{@code location}: the table's root, e.g. {@code s3://bucket/warehouse/orders/} (the
 *       scheme may be any alias of the cloud: {@code s3a://}, {@code vended://}). Required, except
 *       for a Lance table, whose catalog can give it (see <i>Tables located by their catalog</i>).
 *   <li>{@code provider.class}: a class implementing {@link dev.vended.storage.StorageOptionsProvider}
 *       with a public constructor {@code (Configuration, String tableName)} or a public no-arg
 *       one; looked up with the thread's context class loader, then this library's class loader,
 *       then the configuration's (classes of Spark {@code --jars} are found).
 *   <li>{@code lance.endpoint}, {@code lance.table-id} (the parts joined by {@code
 *       lance.delimiter}, default {@code $}), optional {@code lance.token-env} (the name of an
 *       environment variable holding the bearer token) or {@code lance.token-file} (a file
 *       holding it), {@code lance.timeout} (e.g. {@code 10s}): a Lance Namespace catalog table,
 *       whose credential refreshes run natively.
 *   <li>{@code options.<key>}: static storage options that are not secret ({@code aws_endpoint},
 *       {@code aws_region}, {@code aws_allow_http}, ...). A key that is not on the library's
 *       non-secret list is refused: secrets never go into the Hadoop or Spark configuration.
 *   <li>{@code lead-time}: how long before expiry to refresh (e.g. {@code 5m}); default the
 *       library's (5 minutes, at most half the credentials' lifetime).
 * </ul>
 *
 * A path belongs to the table with the <b>longest</b> location that contains it. Each table has
 * its own store and credential source, shared JVM-wide by every FileSystem instance (Hadoop caches
 * FileSystems by scheme, authority and user only, never by configuration): one provider and about
 * one provider call per credential lifetime per table per JVM. A path no table covers is not
 * found; the directories leading to table locations exist (read-only).
 *
 * <h2>Tables located by their catalog</h2>
 *
 * A table without a {@code location} is located by its catalog's describe, which also seeds its
 * store: once per JVM (shared by every FileSystem instance, like the stores), at the first path
 * operation of any instance; {@link #initialize} never calls a catalog. The rule, so that a
 * catalog that is down never breaks the other tables:
 *
 * <ul>
 *   <li>Before routing a path, each table not located yet is tried: one describe in flight per
 *       table per JVM; after a failure, none again before a backoff (1 s doubling to 30 s; 30 s
 *       for a failure the catalog will not heal by itself, such as 404 or 401), and an operation
 *       never waits for a retry another thread is making.
 *   <li>A path is routed among the <b>known</b> locations (configured, or located already): the
 *       longest one containing it wins, and the operation proceeds with that table whatever the
 *       state of the catalogs.
 *   <li>A path no known location covers fails, while some table is not located, with an {@link
 *       IOException} (not a {@link FileNotFoundException}: the path may be that table's) naming
 *       each such table and its catalog's failure; once the catalog answers, the same FileSystem
 *       instance serves the table.
 *   <li>Hence, while a catalog-located table lies inside a configured table's location and its
 *       catalog has not answered yet in this JVM, its paths are served by the enclosing table,
 *       with that table's credentials; and listings of the directories leading to locations show
 *       only the known ones. Configure the {@code location} of such a nested table to avoid this.
 * </ul>
 *
 * <h2>Semantics</h2>
 *
 * <ul>
 *   <li>Files are objects; a directory is a prefix with objects under it, or an empty directory
 *       marker object {@code dir/_$folder$} written by {@link #mkdirs} (and by {@link #delete}
 *       and {@link #rename} when they would empty a parent). Markers never show in listings.
 *   <li>{@link #create} writes through a buffered multipart upload; the file becomes visible when
 *       the stream is closed (not before), and a failed write leaves nothing.
 *   <li>{@link #rename} is a server-side copy of every object and a delete of the source: <b>not
 *       atomic</b>; renaming across tables is refused; the destination's parents are implied.
 *   <li>{@link #delete} of a directory deletes object by object; deleting the bucket root is
 *       refused ({@code false}).
 *   <li>No append, no permissions, owners or times other than the object's modification time.
 * </ul>
 */
public class VendedFileSystem extends FileSystem {

    /** The scheme registered for this FileSystem. */
    public static final String SCHEME = "vended";

    /** The cloud behind {@code vended://} paths ({@code s3}, {@code gs}, {@code abfss}); default s3. */
    public static final String VENDED_SCHEME_KEY = "vended.storage.vended.scheme";

    /** Block size reported to split planners, bytes (default 32 MiB). */
    public static final String BLOCK_SIZE_KEY = "vended.storage.block.size";

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

    /**
     * A resolved path: its table (or null), its bucket key (no leading or trailing slash) and, when
     * no table is known for it, the failures of the tables not located yet.
     */
    private record Target(Table table, String key, Path path, List<IOException> unlocated) {
        ObjectStore store(VendedFileSystem fs) throws IOException {
            return TableStores.get(table.config(), fs.getConf(), fs.vendedScheme).store();
        }
    }

    /** Creates an uninitialized FileSystem (Hadoop calls {@link #initialize}). */
    public VendedFileSystem() {}

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
        this.tables =
                new BucketTables(
                        cloudScheme,
                        name.getAuthority(),
                        TableConfig.all(conf).values(),
                        conf,
                        vendedScheme);
        this.workingDir = makeQualified(new Path("/"));
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
     * The name of the table a path belongs to (longest matching known location; see the class
     * description for tables located by their catalog).
     *
     * @param path a path of this FileSystem
     * @return the table's configured name, or {@code null} when no known table covers the path
     * @throws IllegalArgumentException if the path belongs to another FileSystem
     * @throws java.io.UncheckedIOException (of an {@link java.io.InterruptedIOException}) if
     *     interrupted while a catalog locates a table
     */
    public String tableOf(Path path) {
        try {
            Target t = resolve(path);
            return t.table == null ? null : t.table.config().name;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Paths

    private Target resolve(Path p) throws IOException {
        Path q = makeQualified(p);
        String key = q.toUri().getPath();
        while (key.startsWith("/")) {
            key = key.substring(1);
        }
        while (key.endsWith("/")) {
            key = key.substring(0, key.length() - 1);
        }
        BucketTables.Match m = tables.match(key);
        return new Target(m.table(), key, q, m.unlocated());
    }

    private Path pathOf(String key) {
        return new Path(uri.getScheme(), uri.getAuthority(), "/" + key);
    }

    private Target child(Target parent, String name) throws IOException {
        String key = parent.key.isEmpty() ? name : parent.key + "/" + name;
        return resolve(pathOf(key));
    }

    private boolean leadsToTable(String key) {
        return tables.leadsToTable(key);
    }

    /**
     * The error for a path no known table covers: not found, or, while tables located by their
     * catalog are not located, an {@link IOException} naming them and their failures (the path
     * may be theirs).
     */
    private IOException noTable(Target t) {
        if (!t.unlocated.isEmpty()) {
            return BucketTables.unlocatedError(t.path.toString(), t.unlocated);
        }
        return new FileNotFoundException(
                "no table covers "
                        + t.path
                        + " (configure "
                        + TableConfig.PREFIX
                        + "<name>.location and its credential source)");
    }

    private Target requireTable(Path p) throws IOException {
        Target t = resolve(p);
        if (t.table == null) {
            throw noTable(t);
        }
        return t;
    }

    /**
     * Whether an object may exist at {@code key}: not the bucket root, and not the table's root
     * (the location names a directory; credentials scoped to {@code prefix/} may not even HEAD
     * {@code prefix}).
     */
    private static boolean mayBeObject(Table table, String key) {
        return !key.isEmpty() && !(key + "/").equals(table.location().prefix());
    }

    private static boolean isMarker(String key) {
        return key.equals(DIR_MARKER) || key.endsWith("/" + DIR_MARKER);
    }

    private static String markerOf(String dirKey) {
        return dirKey.isEmpty() ? DIR_MARKER : dirKey + "/" + DIR_MARKER;
    }

    private static String parentKey(String key) {
        int slash = key.lastIndexOf('/');
        return slash < 0 ? "" : key.substring(0, slash);
    }

    private static FileNotFoundException notFound(Path p, StorageException cause) {
        FileNotFoundException e = new FileNotFoundException("no such file or directory: " + p);
        e.initCause(cause);
        return e;
    }

    // ---------------------------------------------------------------------------------------
    // Status

    private FileStatus fileStatus(ObjectMeta m) {
        return new FileStatus(
                m.size(), false, 1, blockSize, m.lastModifiedMillis(), pathOf(m.path()));
    }

    private FileStatus dirStatus(Path p) {
        return new FileStatus(0, true, 1, blockSize, 0, p);
    }

    /** Whether any object (a child or a marker) lies under {@code dirKey/}. */
    private boolean hasChildren(ObjectStore store, String dirKey) throws IOException {
        try (ObjectListing l = store.listIterator(dirKey.isEmpty() ? null : dirKey, 1)) {
            return l.hasNext();
        } catch (UncheckedStorageException e) {
            throw e.getCause();
        }
    }

    /** The status of a path in a table, or null when nothing exists there. */
    private FileStatus statusOrNull(Target t) throws IOException {
        ObjectStore store = t.store(this);
        if (mayBeObject(t.table, t.key)) {
            try {
                return fileStatus(store.head(t.key));
            } catch (ObjectNotFoundException e) {
                // not a file: a directory?
            }
        }
        return hasChildren(store, t.key) ? dirStatus(t.path) : null;
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        statistics.incrementReadOps(1);
        Target t = resolve(f);
        if (t.table == null) {
            if (t.key.isEmpty() || leadsToTable(t.key)) {
                return dirStatus(t.path);
            }
            throw noTable(t);
        }
        FileStatus s = statusOrNull(t);
        if (s == null) {
            if (t.key.isEmpty()) {
                return dirStatus(t.path);
            }
            throw new FileNotFoundException("no such file or directory: " + t.path);
        }
        return s;
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        statistics.incrementReadOps(1);
        Target t = resolve(f);
        if (t.table == null) {
            if (t.key.isEmpty() || leadsToTable(t.key)) {
                return leadingDirectories(t);
            }
            throw noTable(t);
        }
        ObjectStore store = t.store(this);
        ListResult r = store.listWithDelimiter(t.key.isEmpty() ? null : t.key);
        List<FileStatus> out = new ArrayList<>();
        boolean marker = false;
        for (ObjectMeta m : r.objects()) {
            if (isMarker(m.path())) {
                marker = true;
            } else {
                out.add(fileStatus(m));
            }
        }
        for (String prefix : r.commonPrefixes()) {
            out.add(dirStatus(pathOf(prefix)));
        }
        if (out.isEmpty() && !marker) {
            if (!mayBeObject(t.table, t.key)) {
                if (t.key.isEmpty()) {
                    return new FileStatus[0];
                }
                throw new FileNotFoundException("no such file or directory: " + t.path);
            }
            try {
                return new FileStatus[] {fileStatus(store.head(t.key))};
            } catch (ObjectNotFoundException e) {
                throw notFound(t.path, e);
            }
        }
        return out.toArray(new FileStatus[0]);
    }

    /** The children of a directory above table locations: the next segments towards them. */
    private FileStatus[] leadingDirectories(Target t) {
        String base = t.key.isEmpty() ? "" : t.key + "/";
        List<FileStatus> out = new ArrayList<>();
        for (String n : tables.leadingNames(t.key)) {
            out.add(dirStatus(pathOf(base + n)));
        }
        return out.toArray(new FileStatus[0]);
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
        Target t = resolve(f);
        if (t.table == null) {
            return super.listFiles(f, true);
        }
        ObjectStore store = t.store(this);
        if (mayBeObject(t.table, t.key)) {
            try {
                FileStatus file = fileStatus(store.head(t.key));
                List<LocatedFileStatus> one =
                        List.of(new LocatedFileStatus(file, getFileBlockLocations(file, 0, file.getLen())));
                return iterator(one.iterator());
            } catch (ObjectNotFoundException e) {
                // a directory, or nothing
            }
        }
        ObjectListing listing = store.listIterator(t.key.isEmpty() ? null : t.key, 0);
        FlatListing it = new FlatListing(listing);
        if (!it.sawAnything()) {
            listing.close();
            throw new FileNotFoundException("no such file or directory: " + t.path);
        }
        return it;
    }

    private static <T> RemoteIterator<T> iterator(java.util.Iterator<T> it) {
        return new RemoteIterator<>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public T next() {
                return it.next();
            }
        };
    }

    /** A recursive listing as located statuses, markers skipped, one object looked ahead. */
    private final class FlatListing implements RemoteIterator<LocatedFileStatus> {
        private final ObjectListing listing;
        private ObjectMeta next;
        private boolean anything;

        FlatListing(ObjectListing listing) throws IOException {
            this.listing = listing;
            advance();
        }

        boolean sawAnything() {
            return anything;
        }

        private void advance() throws IOException {
            next = null;
            try {
                while (listing.hasNext()) {
                    ObjectMeta m = listing.next();
                    anything = true;
                    if (!isMarker(m.path())) {
                        next = m;
                        return;
                    }
                }
            } catch (UncheckedStorageException e) {
                throw e.getCause();
            }
            listing.close();
        }

        @Override
        public boolean hasNext() {
            return next != null;
        }

        @Override
        public LocatedFileStatus next() throws IOException {
            if (next == null) {
                throw new NoSuchElementException();
            }
            FileStatus s = fileStatus(next);
            advance();
            return new LocatedFileStatus(s, getFileBlockLocations(s, 0, s.getLen()));
        }
    }

    // ---------------------------------------------------------------------------------------
    // Reading and writing

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        statistics.incrementReadOps(1);
        Target t = requireTable(f);
        if (!mayBeObject(t.table, t.key)) {
            throw new FileNotFoundException("cannot open a directory: " + t.path);
        }
        ObjectStore store = t.store(this);
        try {
            return new FSDataInputStream(
                    new VendedInputStream(store.openInput(t.key), statistics, t.path.toString()));
        } catch (ObjectNotFoundException e) {
            if (hasChildren(store, t.key)) {
                FileNotFoundException d =
                        new FileNotFoundException("cannot open a directory: " + t.path);
                d.initCause(e);
                throw d;
            }
            throw notFound(t.path, e);
        }
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
        Target t = requireTable(f);
        if (!mayBeObject(t.table, t.key)) {
            throw new FileAlreadyExistsException("cannot create a file at a table's root: " + t.path);
        }
        FileStatus existing = statusOrNull(t);
        if (existing != null) {
            if (existing.isDirectory()) {
                throw new FileAlreadyExistsException(t.path + " is a directory");
            }
            if (!overwrite) {
                throw new FileAlreadyExistsException(t.path + " already exists");
            }
        }
        MultipartOutputStream out = t.store(this).openOutput(t.key);
        return new FSDataOutputStream(out, statistics);
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
        Path parent = makeQualified(f).getParent();
        if (parent != null && !parent.isRoot()) {
            FileStatus ps;
            try {
                ps = getFileStatus(parent);
            } catch (FileNotFoundException e) {
                throw new FileNotFoundException("parent directory does not exist: " + parent);
            }
            if (!ps.isDirectory()) {
                throw new ParentNotDirectoryException(parent + " is a file");
            }
        }
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

    /** Writes a marker for the parent of {@code key} when nothing else keeps it in existence. */
    private void keepParent(Target t, ObjectStore store) throws IOException {
        String parent = parentKey(t.key);
        if (parent.isEmpty() || !t.table.location().contains(parent)) {
            return;
        }
        if (!hasChildren(store, parent)) {
            store.put(markerOf(parent), new byte[0]);
        }
    }

    @Override
    public boolean mkdirs(Path f, FsPermission permission) throws IOException {
        statistics.incrementWriteOps(1);
        Target t = resolve(f);
        if (t.table == null) {
            if (t.key.isEmpty() || leadsToTable(t.key)) {
                return true;
            }
            throw noTable(t);
        }
        if (t.key.isEmpty()) {
            return true;
        }
        FileStatus existing = statusOrNull(t);
        if (existing != null) {
            if (existing.isFile()) {
                throw new FileAlreadyExistsException("a file exists at " + t.path);
            }
            return true;
        }
        ObjectStore store = t.store(this);
        for (String a = parentKey(t.key);
                mayBeObject(t.table, a) && t.table.location().contains(a);
                a = parentKey(a)) {
            try {
                store.head(a);
                throw new ParentNotDirectoryException("a parent is a file: " + pathOf(a));
            } catch (ObjectNotFoundException e) {
                // not a file: fine
            }
        }
        store.put(markerOf(t.key), new byte[0]);
        return true;
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        statistics.incrementWriteOps(1);
        Target t = requireTable(f);
        if (t.key.isEmpty()) {
            return false; // never the bucket root
        }
        ObjectStore store = t.store(this);
        if (mayBeObject(t.table, t.key)) {
            try {
                store.head(t.key);
                store.delete(t.key);
                keepParent(t, store);
                return true;
            } catch (ObjectNotFoundException e) {
                // a directory, or nothing
            }
        }
        List<String> keys = new ArrayList<>();
        boolean content = false;
        try (ObjectListing l = store.listIterator(t.key, 0)) {
            while (l.hasNext()) {
                String k = l.next().path();
                keys.add(k);
                content |= !isMarker(k);
            }
        } catch (UncheckedStorageException e) {
            throw e.getCause();
        }
        if (keys.isEmpty()) {
            return false;
        }
        if (content && !recursive) {
            throw new PathIsNotEmptyDirectoryException(t.path.toString());
        }
        for (String k : keys) {
            deleteQuietly(store, k);
        }
        keepParent(t, store);
        return true;
    }

    /** Deletes one object; an object already gone is fine (another deleter won). */
    private static void deleteQuietly(ObjectStore store, String key) throws IOException {
        try {
            store.delete(key);
        } catch (ObjectNotFoundException e) {
            // gone already
        }
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
        Target s = requireTable(src);
        Target d = requireTable(dst);
        if (s.table != d.table) {
            throw new IOException(
                    "rename across tables is not supported: "
                            + s.path
                            + " ("
                            + s.table.config().name
                            + ") to "
                            + d.path
                            + " ("
                            + d.table.config().name
                            + ")");
        }
        if (s.key.isEmpty()) {
            return false;
        }
        FileStatus ss = statusOrNull(s);
        if (ss == null) {
            return false;
        }
        if (s.key.equals(d.key)) {
            return ss.isFile();
        }
        if (d.key.startsWith(s.key + "/")) {
            return false;
        }
        FileStatus ds = d.key.isEmpty() ? dirStatus(d.path) : statusOrNull(d);
        if (ds != null) {
            if (ds.isFile()) {
                return false;
            }
            d = child(d, s.path.getName());
            if (d.table != s.table) {
                throw new IOException("rename across tables is not supported: " + d.path);
            }
            if (statusOrNull(d) != null) {
                return false;
            }
        } else {
            String parent = parentKey(d.key);
            if (mayBeObject(d.table, parent) && d.table.location().contains(parent)) {
                try {
                    s.store(this).head(parent);
                    return false; // the destination's parent is a file
                } catch (ObjectNotFoundException e) {
                    // fine
                }
            }
        }
        ObjectStore store = s.store(this);
        if (ss.isFile()) {
            store.copy(s.key, d.key);
            deleteQuietly(store, s.key);
        } else {
            List<String> keys = new ArrayList<>();
            try (ObjectListing l = store.listIterator(s.key, 0)) {
                while (l.hasNext()) {
                    keys.add(l.next().path());
                }
            } catch (UncheckedStorageException e) {
                throw e.getCause();
            }
            for (String k : keys) {
                store.copy(k, d.key + k.substring(s.key.length()));
            }
            for (String k : keys) {
                deleteQuietly(store, k);
            }
        }
        keepParent(s, store);
        return true;
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
