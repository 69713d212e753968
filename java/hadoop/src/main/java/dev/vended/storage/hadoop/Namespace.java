package dev.vended.storage.hadoop;

import static dev.vended.storage.hadoop.Listings.hasChildren;
import static dev.vended.storage.hadoop.PathResolver.isMarker;
import static dev.vended.storage.hadoop.PathResolver.markerOf;
import static dev.vended.storage.hadoop.PathResolver.mayBeObject;
import static dev.vended.storage.hadoop.PathResolver.parentKey;

import dev.vended.storage.ObjectListing;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.UncheckedStorageException;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;

/**
 * The namespace operations of one {@link VendedFileSystem}: directories (marker objects), deletes
 * and renames (copies, then deletes: not atomic). Thread-safe as the stores are.
 */
final class Namespace {

    private final PathResolver paths;
    private final Listings listings;

    Namespace(PathResolver paths, Listings listings) {
        this.paths = paths;
        this.listings = listings;
    }

    /** Writes a marker for the parent of {@code key} when nothing else keeps it in existence. */
    private void keepParent(Target t, ObjectStore store) throws IOException {
        String parent = parentKey(t.key());
        if (parent.isEmpty() || !t.table().location().contains(parent)) {
            return;
        }
        if (!hasChildren(store, parent)) {
            store.put(markerOf(parent), new byte[0]);
        }
    }

    /** {@link org.apache.hadoop.fs.FileSystem#mkdirs(Path)} of a resolved path. */
    boolean mkdirs(Target t) throws IOException {
        if (t.table() == null) {
            if (t.key().isEmpty() || paths.leadsToTable(t.key())) {
                return true;
            }
            throw paths.noTable(t);
        }
        if (t.key().isEmpty()) {
            return true;
        }
        FileStatus existing = listings.statusOrNull(t);
        if (existing != null) {
            if (existing.isFile()) {
                throw new FileAlreadyExistsException("a file exists at " + t.path());
            }
            return true;
        }
        ObjectStore store = paths.store(t);
        for (String a = parentKey(t.key());
                mayBeObject(t.table(), a) && t.table().location().contains(a);
                a = parentKey(a)) {
            try {
                store.head(a);
                throw new ParentNotDirectoryException("a parent is a file: " + paths.pathOf(a));
            } catch (ObjectNotFoundException e) {
                // not a file: fine
            }
        }
        store.put(markerOf(t.key()), new byte[0]);
        return true;
    }

    /** {@link org.apache.hadoop.fs.FileSystem#delete(Path, boolean)} of a path of a table. */
    boolean delete(Target t, boolean recursive) throws IOException {
        if (t.key().isEmpty()) {
            return false; // never the bucket root
        }
        ObjectStore store = paths.store(t);
        if (mayBeObject(t.table(), t.key())) {
            try {
                store.head(t.key());
                store.delete(t.key());
                keepParent(t, store);
                return true;
            } catch (ObjectNotFoundException e) {
                // a directory, or nothing
            }
        }
        List<String> keys = new ArrayList<>();
        boolean content = false;
        try (ObjectListing l = store.listIterator(t.key(), 0)) {
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
            throw new PathIsNotEmptyDirectoryException(t.path().toString());
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
     * {@link org.apache.hadoop.fs.FileSystem#rename} of paths of tables (see {@link
     * VendedFileSystem#rename}).
     */
    boolean rename(Target s, Target d) throws IOException {
        requireSameTable(s, d);
        if (s.key().isEmpty()) {
            return false;
        }
        FileStatus ss = listings.statusOrNull(s);
        if (ss == null) {
            return false;
        }
        if (s.key().equals(d.key())) {
            return ss.isFile();
        }
        if (d.key().startsWith(s.key() + "/")) {
            return false;
        }
        FileStatus ds = d.key().isEmpty() ? listings.dirStatus(d.path()) : listings.statusOrNull(d);
        if (ds != null) {
            if (ds.isFile()) {
                return false;
            }
            d = paths.child(d, s.path().getName());
            if (d.table() != s.table()) {
                throw new IOException("rename across tables is not supported: " + d.path());
            }
            if (listings.statusOrNull(d) != null) {
                return false;
            }
        } else if (ancestorIsFile(d)) {
            return false; // a directory above the destination is a file
        }
        move(s, ss, d);
        return true;
    }

    /**
     * {@code FileSystem.rename(src, dst, Options.Rename...)} of paths of tables, as HDFS and
     * {@link org.apache.hadoop.fs.FileContext#rename} define it (see {@link
     * VendedAbstractFileSystem#renameInternal(Path, Path, boolean)}): a failure is an exception,
     * never {@code false}. With {@code overwrite}, a file at {@code d} is replaced by the copy
     * itself (never deleted first); an empty directory at {@code d} is deleted first.
     */
    void rename(Target s, Target d, boolean overwrite) throws IOException {
        requireSameTable(s, d);
        if (s.key().isEmpty()) {
            throw new IOException("cannot rename the bucket's root: " + s.path());
        }
        FileStatus ss = listings.statusOrNull(s);
        if (ss == null) {
            throw new FileNotFoundException("rename source not found: " + s.path());
        }
        if (s.key().equals(d.key())) {
            throw new FileAlreadyExistsException("rename destination is the source: " + d.path());
        }
        if (d.key().startsWith(s.key() + "/")) {
            throw new IOException("rename destination " + d.path() + " is inside its source");
        }
        FileStatus ds = d.key().isEmpty() ? listings.dirStatus(d.path()) : listings.statusOrNull(d);
        if (ds != null) {
            if (ss.isDirectory() != ds.isDirectory()) {
                throw new IOException(
                        "rename source "
                                + s.path()
                                + " and destination "
                                + d.path()
                                + " must both be files or both directories");
            }
            if (!overwrite) {
                throw new FileAlreadyExistsException("rename destination exists: " + d.path());
            }
            if (ds.isDirectory()) {
                if (listings.list(d).length > 0) {
                    throw new IOException(
                            "rename cannot overwrite a non-empty directory: " + d.path());
                }
                delete(d, true); // its markers
            }
        } else {
            Path parent = d.path().getParent();
            FileStatus ps;
            try {
                ps = listings.status(paths.resolve(parent));
            } catch (FileNotFoundException e) {
                FileNotFoundException f =
                        new FileNotFoundException(
                                "rename destination's parent not found: " + parent);
                f.initCause(e);
                throw f;
            }
            if (ps.isFile()) {
                throw new ParentNotDirectoryException(
                        "rename destination's parent is a file: " + parent);
            }
        }
        move(s, ss, d);
    }

    private static void requireSameTable(Target s, Target d) throws IOException {
        if (s.table() != d.table()) {
            throw new IOException(
                    "rename across tables is not supported: "
                            + s.path()
                            + " ("
                            + s.table().config().name
                            + ") to "
                            + d.path()
                            + " ("
                            + d.table().config().name
                            + ")");
        }
    }

    /**
     * Moves the file or directory {@code s} (of status {@code ss}) to {@code d}, of the same table:
     * a server-side copy of each object (replacing any object at its destination), then a delete of
     * each source object.
     */
    private void move(Target s, FileStatus ss, Target d) throws IOException {
        ObjectStore store = paths.store(s);
        if (ss.isFile()) {
            store.copy(s.key(), d.key());
            deleteQuietly(store, s.key());
        } else {
            List<String> keys = new ArrayList<>();
            try (ObjectListing l = store.listIterator(s.key(), 0)) {
                while (l.hasNext()) {
                    keys.add(l.next().path());
                }
            } catch (UncheckedStorageException e) {
                throw e.getCause();
            }
            for (String k : keys) {
                store.copy(k, d.key() + k.substring(s.key().length()));
            }
            for (String k : keys) {
                deleteQuietly(store, k);
            }
        }
        keepParent(s, store);
    }

    /**
     * Whether an object (a file) exists at a key above {@code d}'s, from its parent up to the
     * table's root: one HEAD per level. An object store would accept the rename under a file
     * ({@code file} and {@code file/parent/x} are both valid keys); a FileSystem must refuse it.
     */
    private boolean ancestorIsFile(Target d) throws IOException {
        for (String k = parentKey(d.key()); !k.isEmpty(); k = parentKey(k)) {
            if (!mayBeObject(d.table(), k) || !d.table().location().contains(k)) {
                continue;
            }
            try {
                paths.store(d).head(k);
                return true;
            } catch (ObjectNotFoundException e) {
                // not a file: look further up
            }
        }
        return false;
    }
}
