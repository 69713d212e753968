package dev.vended.storage.hadoop;

/**
 * {@link VendedFileSystem} under its former name for {@link PendingCommitter}'s task side, kept so
 * that configurations naming it (e.g. {@code fs.s3a.impl}) keep working: {@link VendedFileSystem}
 * itself now writes the files created under a task attempt's work path as pending uploads (see
 * {@link PendingCommitter#MAGIC_ENABLED_KEY}). It adds nothing.
 *
 * @deprecated configure {@link VendedFileSystem}; this class will be removed.
 */
@Deprecated
public class PendingCommitFileSystem extends VendedFileSystem {
    /** Hadoop's no-argument constructor; {@link #initialize} configures it. */
    public PendingCommitFileSystem() {}
}
