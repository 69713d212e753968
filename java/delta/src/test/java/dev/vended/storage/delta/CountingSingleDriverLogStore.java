package dev.vended.storage.delta;

import io.delta.storage.S3SingleDriverLogStore;

import java.io.IOException;
import java.util.Iterator;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * Delta's {@link S3SingleDriverLogStore} counting the commits it refused (its existence check
 * found the version), as {@link CountingLogStore} counts {@link VendedLogStore}'s.
 */
public class CountingSingleDriverLogStore extends S3SingleDriverLogStore {

    /**
     * Creates the log store (Delta calls this).
     *
     * @param hadoopConf the configuration
     */
    public CountingSingleDriverLogStore(Configuration hadoopConf) {
        super(hadoopConf);
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
            throws IOException {
        CountingLogStore.counted(path, () -> super.write(path, actions, overwrite, hadoopConf));
    }
}
