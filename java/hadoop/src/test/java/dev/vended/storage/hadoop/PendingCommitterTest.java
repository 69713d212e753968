package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link PendingCommitter}'s lifecycle with Hadoop's own contexts against the local endpoint:
 * task output invisible until job commit, job commit after the credential the tasks wrote with
 * has expired, failed and speculative attempts aborted, job abort leaving nothing.
 */
class PendingCommitterTest {
    private static final String BUCKET = "committer";
    private static final long TTL_MS = 3000;
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static Configuration conf(String table, String location) {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        VendedFileSystemTest.table(c, server, table, location, null);
        c.set("test.vended." + table + ".ttl-ms", Long.toString(TTL_MS));
        return c;
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + seed);
        }
        return b;
    }

    private static TaskAttemptContext attempt(Configuration c, JobID job, int task, int attempt) {
        return new TaskAttemptContextImpl(
                c, new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, task, attempt));
    }

    private static Path write(FileSystem fs, PendingCommitter committer, String name, byte[] data)
            throws IOException {
        Path p = new Path(committer.getWorkPath(), name);
        try (FSDataOutputStream out = fs.create(p, false)) {
            out.write(data);
        }
        return p;
    }

    private static List<String> keysUnder(FileSystem fs, Path dir) throws IOException {
        List<String> out = new ArrayList<>();
        if (!fs.exists(dir)) {
            return out;
        }
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(dir, true);
        while (it.hasNext()) {
            out.add(it.next().getPath().toUri().getPath());
        }
        out.sort(null);
        return out;
    }

    private static long incomplete() throws IOException {
        return server.incompleteUploads(BUCKET).size();
    }

    @Test
    void jobCommitPublishesCommittedTasksAfterTheirCredentialExpiredAndAbortsTheRest()
            throws Exception {
        Configuration c = conf("pc1", "s3a://" + BUCKET + "/out/");
        Path out = new Path("s3a://" + BUCKET + "/out/data");
        JobID job = new JobID("20261202", 1);
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            assertThat(fs).isExactlyInstanceOf(VendedFileSystem.class);
            assertThat(fs.hasPathCapability(out, PendingCommitter.MAGIC_CAPABILITY)).isTrue();
            JobContext jobContext = new JobContextImpl(c, job);
            new PendingCommitter(out, jobContext).setupJob(jobContext);
            byte[] a = bytes(6 << 20, 1);
            byte[] b = bytes(1000, 2);
            TaskAttemptContext t0 = attempt(c, job, 0, 0);
            PendingCommitter c0 = new PendingCommitter(out, t0);
            write(fs, c0, "part-0", a);
            write(fs, c0, "sub/part-1", new byte[0]);
            TaskAttemptContext t1 = attempt(c, job, 1, 0);
            PendingCommitter c1 = new PendingCommitter(out, t1);
            write(fs, c1, "part-2", b);
            // A speculative attempt of task 1 that never commits, and a failed attempt of task 2.
            write(fs, new PendingCommitter(out, attempt(c, job, 1, 1)), "part-2", bytes(50, 9));
            TaskAttemptContext t2 = attempt(c, job, 2, 0);
            PendingCommitter c2 = new PendingCommitter(out, t2);
            write(fs, c2, "part-3", bytes(70, 3));
            c2.abortTask(t2);

            assertThat(fs.exists(new Path(out, "part-0"))).isFalse();
            assertThat(fs.exists(c0.getWorkPath())).as("nothing at the work path").isFalse();
            assertThat(incomplete()).isEqualTo(4);
            c0.commitTask(t0);
            c1.commitTask(t1);
            assertThat(fs.exists(new Path(out, "part-0"))).as("invisible before job commit").isFalse();

            // The credential the tasks wrote with expires; the provider vends a new one.
            int keysBefore = TestTableProvider.keys("pc1").size();
            long deadline = System.currentTimeMillis() + TTL_MS + 30_000;
            long expired = System.currentTimeMillis() + TTL_MS + 500;
            while (System.currentTimeMillis() < expired
                    || TestTableProvider.keys("pc1").size() <= keysBefore) {
                assertThat(System.currentTimeMillis()).as("credential refresh").isLessThan(deadline);
                fs.exists(out); // requests keep the refresher busy
                Thread.sleep(200);
            }

            // A job commit that failed half-way and runs again: one upload is completed already.
            PendingWrites.StoreAndKey sk = ((VendedFileSystem) fs).storeOf(new Path(out, "part-2"));
            String set =
                    new String(
                            sk.store().get(
                                    MagicPaths.jobKey("out/data", job.toString())
                                            + "/tasks/"
                                            + t1.getTaskAttemptID().getTaskID()
                                            + ".pendingset"),
                            StandardCharsets.UTF_8);
            dev.vended.storage.PendingCommits.of(sk.store())
                    .commit(dev.vended.storage.PendingCommit.fromJson(set.trim()));

            new PendingCommitter(out, jobContext).commitJob(jobContext);

            assertThat(read(fs, new Path(out, "part-0"))).isEqualTo(a);
            assertThat(read(fs, new Path(out, "sub/part-1"))).isEmpty();
            assertThat(read(fs, new Path(out, "part-2"))).isEqualTo(b);
            assertThat(fs.exists(new Path(out, "part-3"))).as("aborted task").isFalse();
            assertThat(incomplete()).isZero();
            assertThat(keysUnder(fs, new Path(out, "__magic"))).isEmpty();
            String success = new String(read(fs, new Path(out, "_SUCCESS")), StandardCharsets.UTF_8);
            assertThat(success)
                    .contains("\"committer\" : \"vended-pending\"")
                    .contains("out/data/part-0", "out/data/sub/part-1", "out/data/part-2")
                    .doesNotContain("part-3");
            for (Map.Entry<String, KeyStats> e : server.stats().entrySet()) {
                assertThat(e.getValue().rejected()).as("key " + e.getKey()).isZero();
            }
        }
    }

    @Test
    void jobAbortLeavesNoUploadNoFileAndNoStagingObject() throws Exception {
        Configuration c = conf("pc2", "s3a://" + BUCKET + "/abort/");
        Path out = new Path("s3a://" + BUCKET + "/abort/data");
        JobID job = new JobID("20261202", 2);
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            JobContext jobContext = new JobContextImpl(c, job);
            TaskAttemptContext t0 = attempt(c, job, 0, 0);
            PendingCommitter c0 = new PendingCommitter(out, t0);
            write(fs, c0, "part-0", bytes(6 << 20, 4));
            c0.commitTask(t0);
            write(fs, new PendingCommitter(out, attempt(c, job, 1, 0)), "part-1", bytes(10, 5));
            assertThat(incomplete()).isEqualTo(2);

            new PendingCommitter(out, jobContext).abortJob(jobContext, JobStatus.State.FAILED);

            assertThat(incomplete()).isZero();
            assertThat(keysUnder(fs, out)).isEmpty();
        }
    }

    @Test
    void withTheMagicCommitterDisabledWorkPathsAreOrdinaryAndTheCommitterRefuses()
            throws Exception {
        Configuration c = conf("pc3", "s3a://" + BUCKET + "/off/");
        c.setBoolean(PendingCommitter.MAGIC_ENABLED_KEY, false);
        Path out = new Path("s3a://" + BUCKET + "/off/data");
        JobID job = new JobID("20261202", 3);
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            assertThat(fs.hasPathCapability(out, PendingCommitter.MAGIC_CAPABILITY)).isFalse();
            long before = incomplete();
            TaskAttemptContext t0 = attempt(c, job, 0, 0);
            PendingCommitter c0 = new PendingCommitter(out, t0);
            Path p = write(fs, c0, "part-0", bytes(10, 6));
            assertThat(read(fs, p)).as("written at the work path itself").isEqualTo(bytes(10, 6));
            assertThat(incomplete()).isEqualTo(before);
            JobContext jobContext = new JobContextImpl(c, job);
            assertThatThrownBy(() -> new PendingCommitter(out, jobContext).commitJob(jobContext))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(PendingCommitter.MAGIC_ENABLED_KEY);
            assertThat(fs.exists(new Path(out, "part-0"))).isFalse();
            fs.delete(out, true);
        }
    }

    @SuppressWarnings("deprecation")
    @Test
    void theDeprecatedFileSystemNameStillWritesPendingUploads() throws Exception {
        Configuration c = conf("pc4", "s3a://" + BUCKET + "/old/");
        c.set("fs.s3a.impl", PendingCommitFileSystem.class.getName());
        Path out = new Path("s3a://" + BUCKET + "/old/data");
        JobID job = new JobID("20261202", 4);
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            assertThat(fs).isInstanceOf(PendingCommitFileSystem.class);
            assertThat(fs.hasPathCapability(out, PendingCommitter.MAGIC_CAPABILITY)).isTrue();
            TaskAttemptContext t0 = attempt(c, job, 0, 0);
            PendingCommitter c0 = new PendingCommitter(out, t0);
            write(fs, c0, "part-0", bytes(10, 7));
            c0.commitTask(t0);
            assertThat(fs.exists(new Path(out, "part-0"))).isFalse();
            JobContext jobContext = new JobContextImpl(c, job);
            new PendingCommitter(out, jobContext).commitJob(jobContext);
            assertThat(read(fs, new Path(out, "part-0"))).isEqualTo(bytes(10, 7));
            assertThat(keysUnder(fs, new Path(out, "__magic"))).isEmpty();
        }
    }

    private static byte[] read(FileSystem fs, Path p) throws IOException {
        try (InputStream in = fs.open(p)) {
            return in.readAllBytes();
        }
    }
}
