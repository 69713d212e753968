package dev.vended.storage.hadoop;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;

/**
 * Creates {@link PendingCommitter}s, for Hadoop's {@code
 * mapreduce.outputcommitter.factory.scheme.<scheme>} (and Spark's {@code PathOutputCommitProtocol}
 * from spark-hadoop-cloud, which reads it).
 */
public class PendingCommitterFactory extends PathOutputCommitterFactory {
    /** Hadoop's no-argument constructor. */
    public PendingCommitterFactory() {}

    @Override
    public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
            throws IOException {
        return new PendingCommitter(outputPath, context);
    }
}
