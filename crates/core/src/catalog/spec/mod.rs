//! Catalog specs: a catalog table described by plain strings (the form the JVM side holds and
//! passes over JNI), turned into the Rust provider.
//!
//! A spec is a `kind` and a flat map of string keys to string values:
//!
//! | kind | keys |
//! |---|---|
//! | `lance-namespace` | `endpoint` (required), `table_id` (required; parts joined by `delimiter`), `delimiter` (default `$`) |
//! | `iceberg-rest` | `uri`, `namespace`, `table`, `location` (all required; `namespace` parts joined by `namespace_separator`; without both `namespace` and `table` the refresh endpoint of `config.` is the whole address and `uri`, then optional, only resolves a relative one: see `IcebergRestCredentialsProvider::builder_for_location`), `namespace_separator` (default the unit separator U+001F), `prefix`; what the catalog returned with the table: `config.<key>` (the `LoadTableResult` `config`), `storage_credential.<n>.prefix` and `storage_credential.<n>.config.<key>` (its `storage-credentials`, `<n>` = 0, 1, ...), `plan_id`, `staged` (`true`/`false`) |
//! | `unity-catalog` | `uri` (required), one of `table` (`catalog.schema.table`), `table_id` or `path` (a storage URL: path credentials; `table` may come with `table_id`, then naming it in messages only), `operation` (`READ` or `READ_WRITE`; default `READ`), `location` (with `table_id`: the table's storage location) |
//! | all | `timeout_millis` (decimal milliseconds, > 0; default 10 s), `header.<Name>` = value, `bearer_token`, `access_mode` (`read` or `read_write`: the access mode of the store the provider serves; a Unity Catalog spec then asks for `READ` / `READ_WRITE` (`PATH_READ` / `PATH_READ_WRITE`), and an `operation` given too must agree; Lance Namespace and Iceberg REST have no such parameter and only check the value) |
//!
//! `header.<Name>` values and `bearer_token` (sent as `Authorization: Bearer <token>`) are
//! secrets: no error message and no `Debug` output ever contains one; neither do the values of
//! `config.` and `storage_credential.` keys (they hold vended credentials). An unknown key is an
//! error that names the key (never its value).
//!
//! ```
//! use std::collections::BTreeMap;
//! use vended_storage::catalog::CatalogSpec;
//!
//! let map = BTreeMap::from([
//!     ("endpoint".to_string(), "http://127.0.0.1:2333".to_string()),
//!     ("table_id".to_string(), "db$orders".to_string()),
//!     ("bearer_token".to_string(), "my-token".to_string()),
//! ]);
//! let spec = CatalogSpec::parse("lance-namespace", &map)?;
//! assert!(spec.provider_id()?.starts_with("lance-namespace:http://127.0.0.1:2333:db$orders:auth="));
//! assert!(!format!("{spec:?}").contains("my-token"));
//! # Ok::<(), vended_storage::Error>(())
//! ```

mod build;
mod parse;

use std::fmt;
use std::time::Duration;

use crate::catalog::iceberg::IcebergTableCredentials;
use crate::catalog::unity::{UnityOperation, UnityTarget};

/// The `kind` of a Lance Namespace REST spec.
pub const LANCE_NAMESPACE: &str = "lance-namespace";
/// The `kind` of an Iceberg REST spec.
pub const ICEBERG_REST: &str = "iceberg-rest";

/// The `kind` of a Unity Catalog spec.
pub const UNITY_CATALOG: &str = "unity-catalog";

/// The prefix of header keys: `header.<Name>`.
pub const HEADER_PREFIX: &str = "header.";

/// A catalog table as plain configuration: what the providers' builders take. Built by
/// [`CatalogSpec::parse`]; [`CatalogSpec::provider`] turns it into the provider. `Debug` shows
/// header names, never their values.
#[derive(Clone, PartialEq, Eq)]
pub enum CatalogSpec {
    /// A Lance Namespace REST table (`DescribeTable`).
    Lance {
        /// The namespace server, e.g. `http://127.0.0.1:2333`.
        endpoint: String,
        /// The table id's parts, outermost namespace first.
        table_id: Vec<String>,
        /// The delimiter that joins the parts in the URL path (default `$`).
        delimiter: String,
        /// Headers sent with every call (name, value); values are secrets.
        headers: Vec<(String, String)>,
        /// The timeout of one call.
        timeout: Duration,
    },
    /// An Iceberg REST table (`loadCredentials`).
    Iceberg {
        /// The catalog's base URL (without `/v1`).
        uri: String,
        /// The catalog's path prefix, if any.
        prefix: Option<String>,
        /// The namespace's parts, outermost first; empty (with an empty `table`) for a
        /// location refreshed through the config's refresh endpoint alone.
        namespace: Vec<String>,
        /// The table name; empty with an empty `namespace`.
        table: String,
        /// The table's location (credentials are chosen for it).
        location: String,
        /// The separator of namespace parts in the URL path (default U+001F).
        separator: String,
        /// Headers sent with every call (name, value); values are secrets.
        headers: Vec<(String, String)>,
        /// The timeout of one call.
        timeout: Duration,
        /// What the catalog returned with the table (first answer, refresh endpoint, plan id,
        /// staged); values are secrets.
        vended: IcebergTableCredentials,
    },
    /// A Unity Catalog table or path (temporary table or path credentials).
    Unity {
        /// The server's URI (`/api/2.1/unity-catalog` is appended unless present).
        uri: String,
        /// The table (by name or id) or the path.
        target: UnityTarget,
        /// Read or read-write.
        operation: UnityOperation,
        /// The storage location of a table given by id, if given.
        location: Option<String>,
        /// The full name of a table given by id (for messages), if given.
        name: Option<String>,
        /// Headers sent with every call (name, value); values are secrets.
        headers: Vec<(String, String)>,
        /// The timeout of one call.
        timeout: Duration,
    },
}

impl fmt::Debug for CatalogSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |headers: &[(String, String)]| -> Vec<String> {
            headers.iter().map(|(k, _)| k.clone()).collect()
        };
        match self {
            CatalogSpec::Lance {
                endpoint,
                table_id,
                delimiter,
                headers,
                timeout,
            } => f
                .debug_struct("Lance")
                .field("endpoint", endpoint)
                .field("table_id", table_id)
                .field("delimiter", delimiter)
                .field("headers", &names(headers))
                .field("timeout", timeout)
                .finish(),
            CatalogSpec::Iceberg {
                uri,
                prefix,
                namespace,
                table,
                location,
                separator,
                headers,
                timeout,
                vended,
            } => f
                .debug_struct("Iceberg")
                .field("uri", uri)
                .field("prefix", prefix)
                .field("namespace", namespace)
                .field("table", table)
                .field("location", location)
                .field("separator", separator)
                .field("headers", &names(headers))
                .field("timeout", timeout)
                .field("vended", vended)
                .finish(),
            CatalogSpec::Unity {
                uri,
                target,
                operation,
                location,
                name,
                headers,
                timeout,
            } => f
                .debug_struct("Unity")
                .field("uri", uri)
                .field("target", target)
                .field("operation", operation)
                .field("location", location)
                .field("name", name)
                .field("headers", &names(headers))
                .field("timeout", timeout)
                .finish(),
        }
    }
}

impl CatalogSpec {
    /// The spec's kind: [`LANCE_NAMESPACE`], [`ICEBERG_REST`] or [`UNITY_CATALOG`].
    pub fn kind(&self) -> &'static str {
        match self {
            CatalogSpec::Lance { .. } => LANCE_NAMESPACE,
            CatalogSpec::Iceberg { .. } => ICEBERG_REST,
            CatalogSpec::Unity { .. } => UNITY_CATALOG,
        }
    }
}

#[cfg(test)]
mod tests;
