package dev.vended.storage.hadoop;

import static dev.vended.storage.hadoop.PathResolver.mayBeObject;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FileNotFoundException;
import java.io.IOException;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;

/**
 * The create path of one {@link VendedFileSystem}: the checks before a file is created and the
 * output stream that writes it (a buffered multipart upload, create-only when not overwriting),
 * or, under a task attempt's work path of {@link PendingCommitter}, a pending upload ({@link
 * PendingWrites}). Thread-safe as the stores are.
 */
final class Writes {

    private final VendedFileSystem fs;
    private final PathResolver paths;
    private final Listings listings;
    private final PendingWrites pending;

    /** The create path of {@code fs}, whose configuration ({@code getConf()}) is set. */
    Writes(VendedFileSystem fs, PathResolver paths, Listings listings) {
        this.fs = fs;
        this.paths = paths;
        this.listings = listings;
        this.pending = new PendingWrites(fs, paths);
    }

    /** The task side of {@link PendingCommitter}. */
    PendingWrites pending() {
        return pending;
    }

    /**
     * {@link FileSystem#create(Path, boolean)} of a resolved path, which must belong to a table. A
     * path under a work path is a pending upload ({@link PendingWrites}), without the checks: its
     * final path is not looked at and {@code overwrite} does not matter.
     *
     * @throws FileAlreadyExistsException at a table's root, at a directory, or at an existing file
     *     when {@code overwrite} is false
     */
    FSDataOutputStream create(Target t, boolean overwrite, FileSystem.Statistics statistics)
            throws IOException {
        if (pending.isPending(t.key())) {
            return pending.create(t.key(), statistics);
        }
        if (!mayBeObject(t.table(), t.key())) {
            throw new FileAlreadyExistsException("cannot create a file at a table's root: " + t.path());
        }
        FileStatus existing = listings.statusOrNull(t);
        if (existing != null) {
            if (existing.isDirectory()) {
                throw new FileAlreadyExistsException(t.path() + " is a directory");
            }
            if (!overwrite) {
                throw new FileAlreadyExistsException(t.path() + " already exists");
            }
        }
        if (!overwrite) {
            // One conditional PUT (If-None-Match) at close: of racing writers exactly one wins.
            MultipartOutputStream out =
                    paths.store(t).openOutput(t.key(), fs.writeOptions().withCreateOnly());
            return new FSDataOutputStream(
                    new CreateOnlyOutputStream(out, t.path().toString()), statistics);
        }
        MultipartOutputStream out = paths.store(t).openOutput(t.key(), fs.writeOptions());
        return new FSDataOutputStream(out, statistics);
    }

    /**
     * The check of {@link FileSystem#createNonRecursive}: the parent of {@code f} exists and is a
     * directory (with the FileSystem's {@code getFileStatus}, counted as such); none for a path
     * under a work path, whose parents are never written.
     *
     * @throws FileNotFoundException if the parent does not exist
     * @throws ParentNotDirectoryException if the parent is a file
     */
    void requireParentDirectory(Path f) throws IOException {
        if (pending.isPending(paths.resolve(f).key())) {
            return;
        }
        Path parent = fs.makeQualified(f).getParent();
        if (parent != null && !parent.isRoot()) {
            FileStatus ps;
            try {
                ps = fs.getFileStatus(parent);
            } catch (FileNotFoundException e) {
                throw new FileNotFoundException("parent directory does not exist: " + parent);
            }
            if (!ps.isDirectory()) {
                throw new ParentNotDirectoryException(parent + " is a file");
            }
        }
    }
}
