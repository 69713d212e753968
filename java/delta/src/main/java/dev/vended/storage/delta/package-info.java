/**
 * Delta Lake on vended-storage: {@link dev.vended.storage.delta.VendedLogStore}, Delta's log store
 * whose commits are single create-only requests on S3, Azure and GCS, on the stores {@link
 * dev.vended.storage.hadoop.VendedFileSystem} serves.
 */
package dev.vended.storage.delta;
