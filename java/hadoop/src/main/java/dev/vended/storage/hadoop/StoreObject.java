package dev.vended.storage.hadoop;

import dev.vended.storage.ObjectStore;

/**
 * The store that serves a path of a {@link VendedFileSystem} and the path's key in it (see {@link
 * VendedFileSystem#storeObject}): for libraries that need an operation Hadoop's API lacks, such as
 * a commit file written with {@link ObjectStore#putCommit}, on the same store and credentials as
 * the file system's own reads and writes.
 *
 * @param store the table's store, rooted at the bucket (shared by the JVM; do not close it)
 * @param key the path's object key in the bucket, without a leading {@code /}
 */
public record StoreObject(ObjectStore store, String key) {}
