package dev.vended.storage.hadoop;

import java.io.IOException;
import java.util.Locale;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * What {@link VendedFileSystem#hasPathCapability} answers itself: the standard {@code openFile}
 * options ({@code fs.option.openfile.*}: length, read policy, buffer size, split start and end),
 * vectored reads ({@code in:readvectored}), {@code in:readbytebuffer}, {@code iostatistics} and,
 * while enabled, {@link PendingCommitter#MAGIC_CAPABILITY}; Hadoop's answer (no symlinks) for
 * anything else, so {@code false} for permissions, append, ACLs, xattrs, snapshots, concat,
 * truncate and the rest.
 */
final class Capabilities {

    private Capabilities() {}

    /**
     * The answer for {@code capability} at {@code path}, or {@code null} to ask Hadoop's default.
     *
     * @throws IOException when the path is not the FileSystem's
     */
    static Boolean of(VendedFileSystem fs, Path path, String capability) throws IOException {
        switch (capability.toLowerCase(Locale.ROOT)) {
            case Options.OpenFileOptions.FS_OPTION_OPENFILE_LENGTH:
            case Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY:
            case Options.OpenFileOptions.FS_OPTION_OPENFILE_BUFFER_SIZE:
            case Options.OpenFileOptions.FS_OPTION_OPENFILE_SPLIT_START:
            case Options.OpenFileOptions.FS_OPTION_OPENFILE_SPLIT_END:
            case StreamCapabilities.VECTOREDIO:
            case StreamCapabilities.READBYTEBUFFER:
            case StreamCapabilities.IOSTATISTICS:
                fs.makeQualified(path); // checks that the path is this FileSystem's
                return true;
            case PendingCommitter.MAGIC_CAPABILITY:
                fs.makeQualified(path);
                return fs.pendingEnabled();
            default:
                return null;
        }
    }
}
