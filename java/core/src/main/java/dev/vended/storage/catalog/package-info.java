/**
 * Catalog providers: serializable specs of the Lance Namespace ({@link
 * dev.vended.storage.catalog.LanceNamespaceStorageOptionsProvider}) and Iceberg REST ({@link
 * dev.vended.storage.catalog.IcebergRestStorageOptionsProvider}) protocols, which run natively, so
 * a refresh makes no Java call; failures are {@link dev.vended.storage.catalog.CatalogException}s.
 */
package dev.vended.storage.catalog;
