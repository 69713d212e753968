/**
 * Hadoop and Spark integration: {@link dev.vended.storage.hadoop.VendedFileSystem}, a Hadoop
 * FileSystem that resolves per-table credentials by path inside one instance, and {@link
 * dev.vended.storage.hadoop.VendedTable}, a serializable table handle for connectors that opens the
 * table's shared store on executors.
 */
package dev.vended.storage.hadoop;
