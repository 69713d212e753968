/**
 * Delta Kernel on vended-storage: {@link dev.vended.storage.delta.kernel.VendedKernelFileIO}, the
 * {@code FileIO} that {@code delta-kernel-defaults}' {@code DefaultEngine.create(FileIO)} takes, so
 * that a JVM service without Spark or a Hadoop file system reads and writes Delta tables with
 * credentials vended by a catalog and refreshed natively. Kernel itself still loads Hadoop and
 * {@code parquet-hadoop} classes for Parquet, but creates no Hadoop file system (which ones and
 * why: {@link dev.vended.storage.delta.kernel.VendedKernelFileIO}, {@code docs/delta.md}).
 */
package dev.vended.storage.delta.kernel;
