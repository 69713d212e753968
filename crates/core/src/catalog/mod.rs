//! Catalog providers: [`StorageOptionsProvider`](crate::StorageOptionsProvider)s that ask a table
//! catalog for the credentials it vends per table.
//!
//! - [`LanceNamespaceProvider`]: Lance Namespace REST `DescribeTable`
//!   (`POST {endpoint}/v1/table/{id}/describe`), plus
//!   [`LanceNamespaceProvider::open_table`] (in the crate's `table` module, above the registry)
//!   to open a table by name with one describe call.
//! - [`IcebergRestCredentialsProvider`]: Iceberg REST `loadCredentials`
//!   (`GET {uri}/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials`).
//! - [`UnityCatalogProvider`]: Unity Catalog temporary table and path credentials
//!   (`POST {uri}/api/2.1/unity-catalog/temporary-table-credentials`, after one `getTable`).
//! - [`CatalogSpec`]: any of them described by a kind and flat string keys (the form the JVM
//!   side passes), turned into its provider.
//!
//! Catalogs sit beside the other providers: this module uses only the error, options and
//! provider modules, never the registry, the stores or the refresher.
//!
//! # Failures
//!
//! Every failure is an [`Error::Provider`] whose message names the
//! catalog, the operation, the table, the HTTP status and the catalog's own error message, and
//! whose source is a [`CatalogError`] (get it with [`catalog_error`]). No header value (bearer
//! token, API key) ever appears in a message, a `Debug` output, a provider id or a log line:
//! header values are marked sensitive, and any occurrence of one in a catalog's error text is
//! replaced by `***`.
//!
//! The providers never retry by themselves. Inside a store, the credential refresher treats
//! every provider failure the same way: it keeps a still-valid credential, backs off (1 s
//! doubling to 30 s by default) and tries again, so a `404` or `401` is also retried at that
//! slow pace until the store is closed; [`CatalogError::is_retryable`] tells which failures
//! can heal by themselves (`5xx`, `408`, `429`, timeouts, connection errors) and which need a
//! person (`404`, `401`, `403`, malformed answers).

mod http;
pub mod iceberg;
pub mod lance;
pub mod spec;
pub mod unity;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use once_cell::sync::Lazy;

pub use iceberg::{IcebergRestCredentialsProvider, IcebergRestCredentialsProviderBuilder};
pub use lance::{
    DescribeTableRequest, LanceNamespaceProvider, LanceNamespaceProviderBuilder, TableDescription,
};
pub use spec::CatalogSpec;
pub use unity::{UnityCatalogProvider, UnityCatalogProviderBuilder, UnityOperation, UnityTarget};

use crate::error::Error;

/// The HTTP timeout a catalog provider uses unless told otherwise: 10 s (below the refresher's
/// default provider timeout of 30 s, so that a slow catalog yields this module's clear error).
pub const DEFAULT_CATALOG_TIMEOUT: Duration = Duration::from_secs(10);

/// What kind of catalog failure a [`CatalogError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CatalogErrorKind {
    /// HTTP 404: the table (or namespace) does not exist. Not retryable.
    NotFound,
    /// HTTP 401: the catalog did not accept the caller's authentication. Not retryable.
    Unauthorized,
    /// HTTP 403: the caller may not read the table's credentials. Not retryable.
    Forbidden,
    /// Another 4xx status (400, 406, 409...). Not retryable, except 408 and 429.
    ClientError,
    /// A 5xx status. Retryable.
    ServerError,
    /// No answer within the provider's timeout. Retryable.
    Timeout,
    /// The catalog could not be reached (connection refused, DNS, TLS...). Retryable.
    Transport,
    /// The answer was not the JSON document the protocol defines. Not retryable.
    MalformedResponse,
    /// The answer lacked a required field (`storage_options`, a matching storage credential...).
    /// Not retryable.
    MissingField,
}

/// A failed catalog call: which catalog, which operation, the HTTP status and the catalog's own
/// error message. Found as the source of an [`Error::Provider`] (see [`catalog_error`]).
/// Never contains a header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// The kind of failure.
    pub kind: CatalogErrorKind,
    /// The catalog protocol, e.g. `"Lance Namespace"` or `"Iceberg REST"`.
    pub catalog: &'static str,
    /// What was being done, e.g. ``describe table 'db$orders' at http://host:2333``.
    pub operation: String,
    /// The HTTP status, when the catalog answered.
    pub status: Option<u16>,
    /// The catalog's error code or type, when its error body carried one (Lance: `code`, for
    /// example `4` = TableNotFound; Iceberg: `type`, for example `NoSuchTableException`).
    pub code: Option<String>,
    /// The catalog's message (from its error body), or what was wrong with the answer.
    pub message: String,
}

impl CatalogError {
    /// Whether the failure may heal by itself, so that retrying later makes sense: 5xx, 408,
    /// 429, timeouts and connection errors. 404, 401, 403, other 4xx and malformed or
    /// incomplete answers are permanent until someone changes the catalog or the configuration.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            CatalogErrorKind::ServerError
            | CatalogErrorKind::Timeout
            | CatalogErrorKind::Transport => true,
            CatalogErrorKind::ClientError => matches!(self.status, Some(408) | Some(429)),
            _ => false,
        }
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} failed: ", self.catalog, self.operation)?;
        if let Some(status) = self.status {
            write!(f, "HTTP {status}")?;
            if let Some(reason) = http_reason(status) {
                write!(f, " {reason}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)?;
        if let Some(code) = &self.code {
            write!(f, " (catalog error code {code})")?;
        }
        f.write_str(if self.is_retryable() {
            " [retryable]"
        } else {
            " [not retryable]"
        })
    }
}

impl std::error::Error for CatalogError {}

fn http_reason(status: u16) -> Option<&'static str> {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
}

/// The [`CatalogError`] behind `error`, if a catalog provider produced it (directly, or as the
/// last refresh error inside [`Error::CredentialsExpired`]).
pub fn catalog_error(error: &Error) -> Option<&CatalogError> {
    let source = error.provider_source()?;
    let source: &(dyn std::error::Error + 'static) = source.as_ref();
    source.downcast_ref::<CatalogError>()
}

static FINGERPRINT_KEY: Lazy<(u64, u64)> = Lazy::new(|| (rand::random(), rand::random()));

/// A keyed fingerprint (SipHash-1-3 with a random per-process key) of request headers: names
/// compared case-insensitively, order-insensitive. Equal headers give equal fingerprints within
/// one process; the value cannot be reversed to a header and differs between processes.
pub(crate) fn headers_fingerprint(headers: &[(String, String)]) -> u64 {
    let mut sorted: Vec<(String, &str)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .collect();
    sorted.sort();
    let (k0, k1) = *FINGERPRINT_KEY;
    let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
    sorted.hash(&mut h);
    h.finish()
}

/// The `auth=` part of a provider id: `none` without headers, else the fingerprint in hex.
pub(crate) fn auth_id(headers: &[(String, String)]) -> String {
    if headers.is_empty() {
        "none".to_string()
    } else {
        format!("{:016x}", headers_fingerprint(headers))
    }
}

/// `url` without user info, query or fragment: safe to print and to put in provider ids.
pub(crate) fn display_url(url: &url::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.as_str().trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_order_and_case_insensitive_and_keyed() {
        let a = vec![
            ("Authorization".to_string(), "Bearer t1".to_string()),
            ("x-api-key".into(), "k".into()),
        ];
        let b = vec![
            ("x-api-key".to_string(), "k".to_string()),
            ("authorization".into(), "Bearer t1".into()),
        ];
        let c = vec![
            ("Authorization".to_string(), "Bearer t2".to_string()),
            ("x-api-key".into(), "k".into()),
        ];
        assert_eq!(headers_fingerprint(&a), headers_fingerprint(&b));
        assert_ne!(headers_fingerprint(&a), headers_fingerprint(&c));
        assert_eq!(auth_id(&[]), "none");
        assert!(!auth_id(&a).contains("t1"));
    }

    #[test]
    fn display_url_drops_user_info_and_query() {
        let u = url::Url::parse("https://user:pw@catalog.example:8443/api/?token=abc#x").unwrap();
        assert_eq!(display_url(&u), "https://catalog.example:8443/api");
    }

    #[test]
    fn retryable_classification() {
        let e = |kind, status| CatalogError {
            kind,
            catalog: "Test",
            operation: "op".into(),
            status,
            code: None,
            message: "m".into(),
        };
        assert!(e(CatalogErrorKind::ServerError, Some(503)).is_retryable());
        assert!(e(CatalogErrorKind::Timeout, None).is_retryable());
        assert!(e(CatalogErrorKind::ClientError, Some(429)).is_retryable());
        assert!(!e(CatalogErrorKind::NotFound, Some(404)).is_retryable());
        assert!(!e(CatalogErrorKind::Unauthorized, Some(401)).is_retryable());
        assert!(!e(CatalogErrorKind::MalformedResponse, Some(200)).is_retryable());
        let text = e(CatalogErrorKind::NotFound, Some(404)).to_string();
        assert!(
            text.contains("HTTP 404 Not Found") && text.contains("not retryable"),
            "{text}"
        );
    }
}
