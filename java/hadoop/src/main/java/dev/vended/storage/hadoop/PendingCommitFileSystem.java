package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.PendingCommit;
import dev.vended.storage.PendingCommits;
import dev.vended.storage.PendingOutputStream;
import dev.vended.storage.hadoop.PathResolver.Target;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * {@link VendedFileSystem} with the task side of {@link PendingCommitter}: a file created under a
 * task attempt's work path ({@code out/__magic/<jobId>/<attemptId>/__base/<rel>}, see {@link
 * MagicPaths}) is written as a <em>pending</em> multipart upload to its final path {@code
 * out/<rel>}: nothing is visible there until the job commits, and nothing is written at the work
 * path itself. When the upload starts its record goes to {@code uploads/}; when the file closes its
 * pending commit goes to {@code pending/<attemptId>/}. Every other path behaves as in {@link
 * VendedFileSystem}.
 *
 * <p>Use it as the FileSystem of the scheme Spark writes to (e.g. {@code
 * spark.hadoop.fs.s3a.impl=dev.vended.storage.hadoop.PendingCommitFileSystem}) together with the
 * committer (see {@link PendingCommitter}).
 */
public class PendingCommitFileSystem extends VendedFileSystem {
    private PathResolver resolver;

    /** Hadoop's no-argument constructor; {@link #initialize} configures it. */
    public PendingCommitFileSystem() {}

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        String vendedScheme = conf.getTrimmed(VENDED_SCHEME_KEY, "s3");
        String cloudScheme = TableConfig.Location.cloudScheme(name.getScheme(), vendedScheme);
        BucketTables tables =
                new BucketTables(
                        cloudScheme,
                        name.getAuthority(),
                        TableConfig.all(conf).values(),
                        conf,
                        vendedScheme);
        this.resolver = new PathResolver(this, getUri(), tables, conf, vendedScheme);
    }

    /** The store serving {@code path} and the path's bucket key. */
    StoreAndKey storeOf(Path path) throws IOException {
        Target t = resolver.resolve(path);
        if (t.table() == null) {
            throw new IOException("no table covers " + path);
        }
        return new StoreAndKey(resolver.store(t), t.key());
    }

    /** A store and a bucket key in it. */
    record StoreAndKey(ObjectStore store, String key) {}

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
        FSDataOutputStream pending = createPending(f);
        return pending != null
                ? pending
                : super.create(
                        f, permission, overwrite, bufferSize, replication, blockSize, progress);
    }

    @Override
    public FSDataOutputStream createNonRecursive(
            Path f,
            FsPermission permission,
            java.util.EnumSet<org.apache.hadoop.fs.CreateFlag> flags,
            int bufferSize,
            short replication,
            long blockSize,
            Progressable progress)
            throws IOException {
        FSDataOutputStream pending = createPending(f);
        return pending != null
                ? pending
                : super.createNonRecursive(
                        f, permission, flags, bufferSize, replication, blockSize, progress);
    }

    /** A pending output for a path under a work path, or null for any other path. */
    private FSDataOutputStream createPending(Path f) throws IOException {
        String key = resolver.resolve(f).key();
        String[] magic = MagicPaths.parse(key);
        if (magic == null) {
            return null;
        }
        String outKey = magic[0];
        String jobKey = MagicPaths.jobKey(outKey, magic[1]);
        String target = MagicPaths.join(outKey, magic[3]);
        StoreAndKey s = storeOf(resolver.pathOf(target));
        String id = UUID.randomUUID().toString();
        String record = jobKey + "/uploads/" + id + ".json";
        String pendingKey = jobKey + "/pending/" + magic[2] + "/" + id + ".pending";
        PendingOutputStream out =
                PendingCommits.of(s.store()).openPendingOutput(s.key(), record, null);
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
