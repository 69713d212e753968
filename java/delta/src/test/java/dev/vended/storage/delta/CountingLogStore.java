package dev.vended.storage.delta;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * {@link VendedLogStore} counting the commits its create-only request refused (each one a race for
 * a version this driver lost, which Delta answers by retrying at the next version).
 */
public class CountingLogStore extends VendedLogStore {

    /** Commits refused with {@link FileAlreadyExistsException} in this JVM. */
    static final AtomicInteger CONFLICTS = new AtomicInteger();

    /**
     * Creates the log store (Delta calls this).
     *
     * @param initHadoopConf the configuration
     */
    public CountingLogStore(Configuration initHadoopConf) {
        super(initHadoopConf);
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
            throws IOException {
        try {
            super.write(path, actions, overwrite, hadoopConf);
        } catch (FileAlreadyExistsException e) {
            CONFLICTS.incrementAndGet();
            throw e;
        }
    }
}
