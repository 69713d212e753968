package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.PendingCommit;
import dev.vended.storage.PendingCommits;
import dev.vended.storage.PendingOutputStream;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The task side of {@link PendingCommitter} in {@link VendedFileSystem}: a file created under a
 * task attempt's work path ({@code out/__magic/<jobId>/<attemptId>/__base/<rel>}, see {@link
 * MagicPaths}) is written as a <em>pending</em> multipart upload to its final path {@code
 * out/<rel>}: nothing is visible there until the job commits, and nothing is written at the work
 * path itself. When the upload starts its record goes to {@code uploads/}; when the file closes its
 * pending commit goes to {@code pending/<attemptId>/}. Only while {@link
 * PendingCommitter#MAGIC_ENABLED_KEY} is true (the default); otherwise a work path is a path like
 * any other. Thread-safe as the stores are.
 */
final class PendingWrites {

    /** A store and a bucket key in it. */
    record StoreAndKey(ObjectStore store, String key) {}

    private final VendedFileSystem fs;
    private final PathResolver paths;
    private final boolean enabled;

    /** The task side of {@code fs}, whose configuration ({@code getConf()}) is set. */
    PendingWrites(VendedFileSystem fs, PathResolver paths) {
        this.fs = fs;
        this.paths = paths;
        this.enabled =
                fs.getConf()
                        .getBoolean(
                                PendingCommitter.MAGIC_ENABLED_KEY,
                                PendingCommitter.MAGIC_ENABLED_DEFAULT);
    }

    /**
     * Whether files under work paths are pending uploads ({@link
     * PendingCommitter#MAGIC_ENABLED_KEY}).
     */
    boolean enabled() {
        return enabled;
    }

    /** Whether {@code key} is under a task attempt's work path and written as a pending upload. */
    boolean isPending(String key) {
        return enabled && MagicPaths.parse(key) != null;
    }

    /**
     * The store serving {@code path} and the path's bucket key.
     *
     * @throws IOException if no table covers the path, or its store cannot be opened now
     */
    StoreAndKey storeOf(Path path) throws IOException {
        Target t = paths.resolve(path);
        if (t.table() == null) {
            throw new IOException("no table covers " + path);
        }
        return new StoreAndKey(paths.store(t), t.key());
    }

    /**
     * A pending output for a key under a work path ({@link #isPending}): a multipart upload of the
     * final path, started now, whose record is saved at once and whose pending commit is saved when
     * the stream closes; its part size is the FileSystem's ({@link
     * VendedFileSystem#WRITE_PART_SIZE_KEY}).
     *
     * @throws IOException if the final path's store cannot be opened or the upload cannot start
     */
    FSDataOutputStream create(String key, FileSystem.Statistics statistics) throws IOException {
        String[] magic = MagicPaths.parse(key);
        String outKey = magic[0];
        String jobKey = MagicPaths.jobKey(outKey, magic[1]);
        String target = MagicPaths.join(outKey, magic[3]);
        StoreAndKey s = storeOf(paths.pathOf(target));
        String id = UUID.randomUUID().toString();
        String record = jobKey + "/uploads/" + id + ".json";
        String pendingKey = jobKey + "/pending/" + magic[2] + "/" + id + ".pending";
        PendingOutputStream out =
                PendingCommits.of(s.store())
                        .openPendingOutput(s.key(), record, null, fs.writeOptions());
        return new FSDataOutputStream(new Saving(out, s.store(), pendingKey), statistics);
    }

    /** Saves the pending commit when the file closes. */
    private static final class Saving extends FilterOutputStream {
        private final PendingOutputStream pending;
        private final ObjectStore store;
        private final String key;
        private boolean closed;

        Saving(PendingOutputStream pending, ObjectStore store, String key) {
            super(pending);
            this.pending = pending;
            this.store = store;
            this.key = key;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            pending.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            pending.close();
            PendingCommit commit = pending.pendingCommit();
            store.put(key, commit.json().getBytes(StandardCharsets.UTF_8));
        }
    }
}
