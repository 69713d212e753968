package dev.vended.storage.hadoop;

import org.apache.hadoop.fs.Path;

/**
 * The layout of {@link PendingCommitter}'s staging objects under a job's output directory {@code
 * out} (bucket keys, no leading slash). Everything lives under {@code out/__magic/<jobId>/}, which
 * Spark and Hadoop readers skip (a name starting with {@code _}):
 *
 * <ul>
 *   <li>{@code <attemptId>/__base/<rel>}: the work path of a task attempt; a file created there by
 *       {@link VendedFileSystem} is written as a pending upload to {@code out/<rel>} (see {@link
 *       PendingWrites});
 *   <li>{@code uploads/<uuid>.json}: one record per upload, written when it starts (job abort and
 *       job commit abort every recorded upload nobody committed);
 *   <li>{@code pending/<attemptId>/<uuid>.pending}: the pending commit of a closed file;
 *   <li>{@code tasks/<taskId>.pendingset}: a committed task's pending commits, one JSON per line.
 * </ul>
 */
final class MagicPaths {
    /** The directory name that marks staging paths. */
    static final String MAGIC = "__magic";

    /** The directory under an attempt's directory that stands for the output directory. */
    static final String BASE = "__base";

    private MagicPaths() {}

    /** The job's staging key: {@code out/__magic/<jobId>}. */
    static String jobKey(String outKey, String jobId) {
        return join(outKey, MAGIC + "/" + jobId);
    }

    /** A task attempt's work path. */
    static Path workPath(Path out, String jobId, String attemptId) {
        return new Path(out, MAGIC + "/" + jobId + "/" + attemptId + "/" + BASE);
    }

    /**
     * The parts of a key under an attempt's work path: {@code {outKey, jobId, attemptId, rel}}, or
     * {@code null} when {@code key} is not one.
     */
    static String[] parse(String key) {
        String marker = MAGIC + "/";
        int at = key.startsWith(marker) ? 0 : key.indexOf("/" + marker);
        if (at < 0) {
            return null;
        }
        String outKey = at == 0 ? "" : key.substring(0, at);
        String rest = key.substring(at == 0 ? marker.length() : at + 1 + marker.length());
        String[] p = rest.split("/", 4);
        if (p.length < 4 || !p[2].equals(BASE) || p[3].isEmpty()) {
            return null;
        }
        return new String[] {outKey, p[0], p[1], p[3]};
    }

    static String join(String a, String b) {
        return a.isEmpty() ? b : a + "/" + b;
    }
}
