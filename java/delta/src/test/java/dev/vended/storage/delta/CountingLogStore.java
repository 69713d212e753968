package dev.vended.storage.delta;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * {@link VendedLogStore} counting the commits its create-only request refused (each one a race for
 * a version this driver lost, which Delta answers by retrying at the next version), per scheme.
 */
public class CountingLogStore extends VendedLogStore {

    /** Commits refused with {@link FileAlreadyExistsException} in this JVM, by the path's scheme. */
    private static final Map<String, AtomicInteger> CONFLICTS = new ConcurrentHashMap<>();

    /**
     * Creates the log store (Delta calls this).
     *
     * @param initHadoopConf the configuration
     */
    public CountingLogStore(Configuration initHadoopConf) {
        super(initHadoopConf);
    }

    /** A write through a log store, counted by {@link #counted} when refused. */
    interface Write {
        void run() throws IOException;
    }

    /** Runs {@code write} of {@code path}, counting a {@link FileAlreadyExistsException}. */
    static void counted(Path path, Write write) throws IOException {
        try {
            write.run();
        } catch (FileAlreadyExistsException e) {
            CONFLICTS.computeIfAbsent(path.toUri().getScheme(), k -> new AtomicInteger()).incrementAndGet();
            throw e;
        }
    }

    /** The commits to {@code scheme} paths refused in this JVM. */
    static int conflicts(String scheme) {
        AtomicInteger n = CONFLICTS.get(scheme);
        return n == null ? 0 : n.get();
    }

    @Override
    public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration hadoopConf)
            throws IOException {
        counted(path, () -> super.write(path, actions, overwrite, hadoopConf));
    }
}
