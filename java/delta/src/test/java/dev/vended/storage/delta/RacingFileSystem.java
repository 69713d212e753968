package dev.vended.storage.delta;

import dev.vended.storage.hadoop.VendedFileSystem;

import java.io.IOException;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * {@link VendedFileSystem} whose {@code create} first waits at {@link Barrier#current} (so that
 * racing writers have all passed any existence check before either creates) and, with {@code
 * test.delta.s3a-create=true}, creates as S3A does: {@code overwrite=false} is checked by looking
 * (the caller's {@code exists}), and the object is then written by a plain PUT that replaces
 * whatever is there.
 */
public class RacingFileSystem extends VendedFileSystem {

    /** Creates the file system (Hadoop calls {@link #initialize}). */
    public RacingFileSystem() {}

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
        Barrier b = Barrier.current;
        if (b != null && f.getName().endsWith(".json")) {
            b.await(Long.parseLong(f.getName().substring(0, 20)));
        }
        boolean s3a = getConf().getBoolean("test.delta.s3a-create", false);
        return super.create(
                f, permission, overwrite || s3a, bufferSize, replication, blockSize, progress);
    }
}
