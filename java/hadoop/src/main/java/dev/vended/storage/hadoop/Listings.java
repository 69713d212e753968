package dev.vended.storage.hadoop;

import static dev.vended.storage.hadoop.PathResolver.isMarker;
import static dev.vended.storage.hadoop.PathResolver.mayBeObject;
import static dev.vended.storage.hadoop.PathResolver.notFound;

import dev.vended.storage.ListResult;
import dev.vended.storage.ObjectListing;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.UncheckedStorageException;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * The statuses and listings of one {@link VendedFileSystem}: files are objects, a directory is a
 * prefix with objects under it or a marker, and the directories leading to table locations exist
 * (read-only). Thread-safe.
 */
final class Listings {

    private final FileSystem fs;
    private final PathResolver paths;
    private final long blockSize;

    Listings(FileSystem fs, PathResolver paths, long blockSize) {
        this.fs = fs;
        this.paths = paths;
        this.blockSize = blockSize;
    }

    FileStatus fileStatus(ObjectMeta m) {
        return new FileStatus(
                m.size(), false, 1, blockSize, m.lastModifiedMillis(), paths.pathOf(m.path()));
    }

    FileStatus dirStatus(Path p) {
        return new FileStatus(0, true, 1, blockSize, 0, p);
    }

    /** Whether any object (a child or a marker) lies under {@code dirKey/}. */
    static boolean hasChildren(ObjectStore store, String dirKey) throws IOException {
        try (ObjectListing l = store.listIterator(dirKey.isEmpty() ? null : dirKey, 1)) {
            return l.hasNext();
        } catch (UncheckedStorageException e) {
            throw e.getCause();
        }
    }

    /** The status of a path in a table, or null when nothing exists there. */
    FileStatus statusOrNull(Target t) throws IOException {
        ObjectStore store = paths.store(t);
        if (mayBeObject(t.table(), t.key())) {
            try {
                return fileStatus(store.head(t.key()));
            } catch (ObjectNotFoundException e) {
                // not a file: a directory?
            }
        }
        return hasChildren(store, t.key()) ? dirStatus(t.path()) : null;
    }

    /** {@link FileSystem#getFileStatus} of a resolved path. */
    FileStatus status(Target t) throws IOException {
        if (t.table() == null) {
            if (t.key().isEmpty() || paths.leadsToTable(t.key())) {
                return dirStatus(t.path());
            }
            throw paths.noTable(t);
        }
        FileStatus s = statusOrNull(t);
        if (s == null) {
            if (t.key().isEmpty()) {
                return dirStatus(t.path());
            }
            throw new FileNotFoundException("no such file or directory: " + t.path());
        }
        return s;
    }

    /** {@link FileSystem#listStatus(Path)} of a resolved path. */
    FileStatus[] list(Target t) throws IOException {
        if (t.table() == null) {
            if (t.key().isEmpty() || paths.leadsToTable(t.key())) {
                return leadingDirectories(t);
            }
            throw paths.noTable(t);
        }
        ObjectStore store = paths.store(t);
        ListResult r = store.listWithDelimiter(t.key().isEmpty() ? null : t.key());
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
            out.add(dirStatus(paths.pathOf(prefix)));
        }
        if (out.isEmpty() && !marker) {
            if (!mayBeObject(t.table(), t.key())) {
                if (t.key().isEmpty()) {
                    return new FileStatus[0];
                }
                throw new FileNotFoundException("no such file or directory: " + t.path());
            }
            try {
                return new FileStatus[] {fileStatus(store.head(t.key()))};
            } catch (ObjectNotFoundException e) {
                throw notFound(t.path(), e);
            }
        }
        return out.toArray(new FileStatus[0]);
    }

    /** The children of a directory above table locations: the next segments towards them. */
    private FileStatus[] leadingDirectories(Target t) {
        String base = t.key().isEmpty() ? "" : t.key() + "/";
        List<FileStatus> out = new ArrayList<>();
        for (String n : paths.tables().leadingNames(t.key())) {
            out.add(dirStatus(paths.pathOf(base + n)));
        }
        return out.toArray(new FileStatus[0]);
    }

    /**
     * The files under a path of a table, with one flat listing of the prefix (no directory walk).
     *
     * @throws FileNotFoundException if nothing exists at the path
     */
    RemoteIterator<LocatedFileStatus> listRecursively(Target t) throws IOException {
        ObjectStore store = paths.store(t);
        if (mayBeObject(t.table(), t.key())) {
            try {
                FileStatus file = fileStatus(store.head(t.key()));
                List<LocatedFileStatus> one =
                        List.of(
                                new LocatedFileStatus(
                                        file, fs.getFileBlockLocations(file, 0, file.getLen())));
                return iterator(one.iterator());
            } catch (ObjectNotFoundException e) {
                // a directory, or nothing
            }
        }
        ObjectListing listing = store.listIterator(t.key().isEmpty() ? null : t.key(), 0);
        FlatListing it = new FlatListing(listing);
        if (!it.sawAnything()) {
            listing.close();
            throw new FileNotFoundException("no such file or directory: " + t.path());
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
            return new LocatedFileStatus(s, fs.getFileBlockLocations(s, 0, s.getLen()));
        }
    }
}
