package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.PendingCommit;
import dev.vended.storage.PendingCommits;
import dev.vended.storage.StorageException;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.util.JsonSerialization;

/**
 * An output committer that publishes task output by completing multipart uploads at job commit:
 * no temporary files, no rename, no byte copied (the idea of S3A's magic committer). Tasks write
 * through {@link VendedFileSystem} to their work path ({@link #getWorkPath()}), which uploads each
 * file to its final path without completing it (while {@value #MAGIC_ENABLED_KEY} is true, the
 * default; the FileSystem then has the path capability {@value #MAGIC_CAPABILITY}); task commit
 * saves the attempt's pending commits as one manifest; job commit completes every upload of the
 * committed tasks (bounded parallelism, {@value #THREADS_KEY}, default 8) with the driver's own
 * store (its credential refreshed as usual: the tasks' credentials may have expired), aborts every
 * other recorded upload (failed or speculative attempts), deletes the staging objects and writes
 * {@code _SUCCESS} (JSON: committer, jobId, timestamp, files, bytes). Task and job abort abort
 * the uploads and delete the staging objects. See docs/spark-and-hadoop.md, "Committer", for
 * where it is safe.
 *
 * <p>It extends {@link FileOutputCommitter} only so that Spark's commit protocol asks it for the
 * work path ({@code spark.sql.parquet.output.committer.class} / {@code
 * spark.sql.sources.outputCommitterClass}); none of FileOutputCommitter's own behaviour is used.
 */
public class PendingCommitter extends FileOutputCommitter {
    /** The most uploads completed at once at job commit. */
    public static final String THREADS_KEY = "vended.storage.committer.threads";

    /**
     * Whether {@link VendedFileSystem} writes the files created under a task attempt's work path
     * ({@code out/__magic/<jobId>/<attemptId>/__base/<rel>}) as pending uploads of {@code
     * out/<rel>} (default {@code true}, as S3A's {@code fs.s3a.committer.magic.enabled}). When
     * false such paths are ordinary paths and this committer refuses to run.
     */
    public static final String MAGIC_ENABLED_KEY = "vended.storage.committer.magic.enabled";

    /** The default of {@link #MAGIC_ENABLED_KEY}. */
    public static final boolean MAGIC_ENABLED_DEFAULT = true;

    /**
     * The path capability ({@code FileSystem.hasPathCapability}) of a FileSystem that writes work
     * paths as this committer needs: {@link VendedFileSystem} while {@link #MAGIC_ENABLED_KEY} is
     * true. Not S3A's {@code fs.s3a.capability.magic.committer}: the layouts differ.
     */
    public static final String MAGIC_CAPABILITY = "vended.storage.capability.magic.committer";

    /** The job's UUID that Spark puts in the configuration of the driver and of every task. */
    public static final String SPARK_JOB_UUID = "spark.sql.sources.writeJobUUID";

    /** The name written to {@code _SUCCESS}. */
    public static final String NAME = "vended-pending";

    private final Path out;
    private final String jobId;
    private final Path workPath;

    /**
     * A committer for {@code outputPath}.
     *
     * @param outputPath the job's output directory (on a {@link VendedFileSystem})
     * @param context the task attempt (or job) context
     * @throws IOException if the output path's FileSystem cannot be created
     */
    public PendingCommitter(Path outputPath, TaskAttemptContext context) throws IOException {
        this(outputPath, (JobContext) context);
    }

    /**
     * A committer for {@code outputPath} in a job context (job commit and abort).
     *
     * @param outputPath the job's output directory
     * @param context the job context
     * @throws IOException if the output path's FileSystem cannot be created
     */
    public PendingCommitter(Path outputPath, JobContext context) throws IOException {
        super(outputPath, context);
        this.out = outputPath;
        this.jobId = jobIdOf(context);
        this.workPath =
                context instanceof TaskAttemptContext
                        ? MagicPaths.workPath(
                                outputPath,
                                jobId,
                                ((TaskAttemptContext) context).getTaskAttemptID().toString())
                        : null;
    }

    @Override
    public Path getWorkPath() {
        return workPath;
    }

    @Override
    public Path getOutputPath() {
        return out;
    }

    @Override
    public void setupJob(JobContext context) {
        // Nothing to create: staging objects appear with the first upload.
    }

    @Override
    public void setupTask(TaskAttemptContext context) {}

    @Override
    public boolean needsTaskCommit(TaskAttemptContext context) {
        return true;
    }

    /** Saves the attempt's pending commits as {@code tasks/<taskId>.pendingset}. */
    @Override
    public void commitTask(TaskAttemptContext context) throws IOException {
        Staging s = staging(context);
        String attempt = context.getTaskAttemptID().toString();
        List<ObjectMeta> files = s.store.list(s.jobKey + "/pending/" + attempt);
        StringBuilder set = new StringBuilder();
        for (ObjectMeta m : files) {
            set.append(new String(s.store.get(m.path()), StandardCharsets.UTF_8)).append('\n');
        }
        String taskId = context.getTaskAttemptID().getTaskID().toString();
        s.store.put(
                s.jobKey + "/tasks/" + taskId + ".pendingset",
                set.toString().getBytes(StandardCharsets.UTF_8));
        for (ObjectMeta m : files) {
            s.store.delete(m.path());
        }
    }

    /** Aborts the attempt's closed files' uploads and deletes their pending commits. */
    @Override
    public void abortTask(TaskAttemptContext context) throws IOException {
        Staging s = staging(context);
        String attempt = context.getTaskAttemptID().toString();
        PendingCommits commits = PendingCommits.of(s.store);
        for (ObjectMeta m : s.store.list(s.jobKey + "/pending/" + attempt)) {
            String json = new String(s.store.get(m.path()), StandardCharsets.UTF_8);
            commits.abort(PendingCommit.fromJson(json));
            s.store.delete(m.path());
        }
    }

    /**
     * Completes every upload of the committed tasks, aborts the other recorded uploads, deletes the
     * staging objects and writes {@code _SUCCESS}.
     */
    @Override
    public void commitJob(JobContext context) throws IOException {
        Staging s = staging(context);
        List<PendingCommit> pending = new ArrayList<>();
        for (ObjectMeta m : s.store.list(s.jobKey + "/tasks")) {
            String set = new String(s.store.get(m.path()), StandardCharsets.UTF_8);
            for (String line : set.split("\n")) {
                if (!line.isBlank()) {
                    pending.add(PendingCommit.fromJson(line));
                }
            }
        }
        PendingCommits commits = PendingCommits.of(s.store);
        int threads = Math.max(1, context.getConfiguration().getInt(THREADS_KEY, 8));
        ExecutorService pool =
                Executors.newFixedThreadPool(Math.min(threads, Math.max(1, pending.size())));
        try {
            List<Future<?>> done = new ArrayList<>();
            for (PendingCommit p : pending) {
                done.add(pool.submit(() -> {
                    complete(commits, s.store, p);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while committing " + s.jobKey);
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    throw c instanceof IOException
                            ? (IOException) c
                            : new IOException("committing " + s.jobKey + " failed: " + c, c);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        // Uploads of attempts that did not commit (failed, speculative losers).
        commits.abortUploadsUnder(s.jobKey + "/uploads");
        deleteUnder(s.store, s.jobKey);
        SuccessData success = new SuccessData();
        success.committer = NAME;
        success.jobId = jobIdOf(context);
        success.timestamp = System.currentTimeMillis();
        for (PendingCommit p : pending) {
            success.files.add(p.key());
            success.bytes += p.length();
        }
        byte[] json = new JsonSerialization<>(SuccessData.class, false, true).toBytes(success);
        s.store.put(MagicPaths.join(s.outKey, "_SUCCESS"), json);
    }

    /** Aborts every recorded upload of the job and deletes its staging objects. */
    @Override
    public void abortJob(JobContext context, JobStatus.State state) throws IOException {
        Staging s = staging(context);
        try {
            PendingCommits.of(s.store).abortUploadsUnder(s.jobKey + "/uploads");
        } finally {
            deleteUnder(s.store, s.jobKey);
        }
    }

    @Override
    public void cleanupJob(JobContext context) throws IOException {
        Staging s = staging(context);
        deleteUnder(s.store, s.jobKey);
    }

    @Override
    public boolean isRecoverySupported() {
        return false;
    }

    @Override
    public String toString() {
        return "PendingCommitter{out=" + out + ", jobId=" + jobId + "}";
    }

    /**
     * Completes {@code p}; an upload the store no longer knows whose object is there with the
     * pending length counts as completed (a job commit run again after it failed half-way).
     */
    private static void complete(PendingCommits commits, ObjectStore store, PendingCommit p)
            throws StorageException {
        try {
            commits.commit(p);
        } catch (ObjectNotFoundException e) {
            ObjectMeta m;
            try {
                m = store.head(p.key());
            } catch (ObjectNotFoundException missing) {
                throw e;
            }
            if (m.size() != p.length()) {
                throw e;
            }
        }
    }

    private static void deleteUnder(ObjectStore store, String prefix) throws StorageException {
        for (ObjectMeta m : store.list(prefix)) {
            store.delete(m.path());
        }
    }

    /** The store of the output directory and the job's staging key. */
    private record Staging(ObjectStore store, String outKey, String jobKey) {}

    /**
     * The job's id as tasks and driver agree on it: Spark gives them different Hadoop job ids but
     * one write UUID, which it sets in the driver's configuration only after {@code setupJob}, so
     * it is read from each call's context.
     */
    private static String jobIdOf(JobContext context) {
        String uuid = context.getConfiguration().getTrimmed(SPARK_JOB_UUID, "");
        return uuid.isEmpty() ? String.valueOf(context.getJobID()) : uuid;
    }

    private Staging staging(JobContext context) throws IOException {
        FileSystem fs = out.getFileSystem(context.getConfiguration());
        if (!(fs instanceof VendedFileSystem)) {
            throw new IOException(
                    "PendingCommitter needs "
                            + VendedFileSystem.class.getName()
                            + " as the FileSystem of "
                            + out
                            + ", not "
                            + fs.getClass().getName());
        }
        if (!fs.hasPathCapability(out, MAGIC_CAPABILITY)) {
            throw new IOException(
                    "PendingCommitter needs "
                            + MAGIC_ENABLED_KEY
                            + "=true in the configuration of the FileSystem of "
                            + out);
        }
        PendingWrites.StoreAndKey s = ((VendedFileSystem) fs).storeOf(out);
        return new Staging(s.store(), s.key(), MagicPaths.jobKey(s.key(), jobIdOf(context)));
    }

    /** The {@code _SUCCESS} file's content. */
    public static final class SuccessData {
        /** {@value PendingCommitter#NAME}. */
        public String committer;

        /** The job's id. */
        public String jobId;

        /** When the job committed, epoch milliseconds. */
        public long timestamp;

        /** The bucket keys of the files committed. */
        public List<String> files = new ArrayList<>();

        /** Their total size in bytes. */
        public long bytes;
    }
}
