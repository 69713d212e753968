package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;
import dev.vended.storage.hadoop.BucketTables.Table;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The path to key mapping of one {@link VendedFileSystem}: a path resolves to its table (the
 * longest known location containing it, see {@link BucketTables}) and its bucket key (no leading or
 * trailing slash); the reverse maps a key to a path. Also the key rules of directories (markers,
 * parents, table roots). Thread-safe.
 */
final class PathResolver {

    /**
     * A resolved path: its table (or null), its bucket key (no leading or trailing slash) and, when
     * no table is known for it, the failures of the tables not located yet.
     */
    record Target(Table table, String key, Path path, List<IOException> unlocated) {}

    private final FileSystem fs;
    private final URI uri;
    private final BucketTables tables;
    private final Configuration conf;
    private final String vendedScheme;

    PathResolver(
            FileSystem fs, URI uri, BucketTables tables, Configuration conf, String vendedScheme) {
        this.fs = fs;
        this.uri = uri;
        this.tables = tables;
        this.conf = conf;
        this.vendedScheme = vendedScheme;
    }

    /** This bucket's tables. */
    BucketTables tables() {
        return tables;
    }

    /**
     * The store of the target's table (opened on first use in the JVM, see {@link TableStores}).
     *
     * @throws IOException naming the table if it cannot be opened now
     */
    ObjectStore store(Target t) throws IOException {
        return TableStores.get(t.table().config(), conf, vendedScheme).store();
    }

    /**
     * Resolves {@code p} (qualified against the FileSystem's working directory), after updating
     * the calling thread's audit context ({@link TaskAudit#update()}).
     *
     * @throws java.io.InterruptedIOException if interrupted while a catalog locates a table
     */
    Target resolve(Path p) throws IOException {
        // Every operation resolves its path first: the thread's job and task ids, if they
        // changed, reach the native side before the operation's requests.
        TaskAudit.update();
        Path q = fs.makeQualified(p);
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

    /** The path of a bucket key. */
    Path pathOf(String key) {
        return new Path(uri.getScheme(), uri.getAuthority(), "/" + key);
    }

    /** The child {@code name} of {@code parent}, resolved. */
    Target child(Target parent, String name) throws IOException {
        String key = parent.key().isEmpty() ? name : parent.key() + "/" + name;
        return resolve(pathOf(key));
    }

    /** Whether {@code key} is a directory above some table location. */
    boolean leadsToTable(String key) {
        return tables.leadsToTable(key);
    }

    /**
     * The error for a path no known table covers: not found, or, while tables located by their
     * catalog are not located, an {@link IOException} naming them and their failures (the path
     * may be theirs).
     */
    IOException noTable(Target t) {
        if (!t.unlocated().isEmpty()) {
            return BucketTables.unlocatedError(t.path().toString(), t.unlocated());
        }
        return new FileNotFoundException(
                "no table covers "
                        + t.path()
                        + " (configure "
                        + TableConfig.PREFIX
                        + "<name>.location and its credential source)");
    }

    /** Resolves {@code p}, which must belong to a table ({@link #noTable} otherwise). */
    Target requireTable(Path p) throws IOException {
        Target t = resolve(p);
        if (t.table() == null) {
            throw noTable(t);
        }
        return t;
    }

    /**
     * Whether an object may exist at {@code key}: not the bucket root, and not the table's root
     * (the location names a directory; credentials scoped to {@code prefix/} may not even HEAD
     * {@code prefix}).
     */
    static boolean mayBeObject(Table table, String key) {
        return !key.isEmpty() && !(key + "/").equals(table.location().prefix());
    }

    static boolean isMarker(String key) {
        return key.equals(VendedFileSystem.DIR_MARKER)
                || key.endsWith("/" + VendedFileSystem.DIR_MARKER);
    }

    static String markerOf(String dirKey) {
        return dirKey.isEmpty()
                ? VendedFileSystem.DIR_MARKER
                : dirKey + "/" + VendedFileSystem.DIR_MARKER;
    }

    static String parentKey(String key) {
        int slash = key.lastIndexOf('/');
        return slash < 0 ? "" : key.substring(0, slash);
    }

    static FileNotFoundException notFound(Path p, StorageException cause) {
        FileNotFoundException e = new FileNotFoundException("no such file or directory: " + p);
        e.initCause(cause);
        return e;
    }
}
