/**
 * Hadoop and Spark integration: {@link dev.vended.storage.hadoop.VendedFileSystem}, a Hadoop
 * FileSystem that resolves per-table credentials by path inside one instance, and {@link
 * dev.vended.storage.hadoop.VendedTable}, a serializable table handle for connectors that opens the
 * table's shared store on executors.
 *
 * <h2>Tables located by their catalog</h2>
 *
 * A {@link dev.vended.storage.hadoop.VendedFileSystem} table configured without a {@code location}
 * is located by its catalog (a Lance describe; Unity Catalog's {@code getTable} and one
 * credentials call), which also seeds its store: once per JVM (shared by every
 * FileSystem instance, like the stores); {@link
 * dev.vended.storage.hadoop.VendedFileSystem#initialize} never calls a catalog. The rule, so that a catalog that is down, or that accepts connections and
 * never answers, never breaks nor delays the other tables:
 *
 * <ul>
 *   <li>The JVM-wide table registry locates each such table eagerly but bounded, at most once: a
 *       path operation (of any instance) waits for the table's <b>first</b> locate attempt in this
 *       JVM only, which is bounded by that table's catalog timeout ({@code lance.timeout} or {@code
 *       unity.timeout}, default 10 s); concurrent
 *       operations wait for the same attempt.
 *   <li>Never for later attempts. A path operation that needs the table, while none of its
 *       attempts is in flight, starts the next one on a background daemon thread ({@code
 *       vended-storage-locate-<table>}, one at a time per table) and does not wait for it. The
 *       catalog is called no more often for that: after a failure the native side makes no
 *       describe (Unity Catalog: {@code getTable}) before its backoff has passed (1 s doubling to 30 s; 30 s for a failure the
 *       catalog will not heal by itself, such as 404 or 401; one call in flight per catalog
 *       table per process) and meanwhile answers the remembered failure at once.
 *   <li>A path is routed among the <b>known</b> locations (configured, or located already): the
 *       longest one containing it wins, and the operation proceeds at once with that table,
 *       whatever the state of the catalogs.
 *   <li>A path no known location covers fails at once, while some table is not located, with an
 *       {@link java.io.IOException} (not a {@link java.io.FileNotFoundException}: the path may be that table's)
 *       naming each such table and its catalog's last failure (saying when the next attempt is);
 *       once an attempt succeeds, the same FileSystem instance serves the table.
 *   <li>Hence, while a catalog-located table lies inside a configured table's location and its
 *       catalog has not answered yet in this JVM, its paths are served by the enclosing table,
 *       with that table's credentials; and listings of the directories leading to locations show
 *       only the known ones. Configure the {@code location} of such a nested table to avoid this.
 * </ul>
 */
package dev.vended.storage.hadoop;
