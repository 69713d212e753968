//! The builder of [`UnityCatalogProvider`]: checks the URI and the target, resolves the REST
//! API's base URL and computes the provider id.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use tokio::sync::OnceCell;

use super::{
    UnityCatalogProvider, UnityOperation, UnityTable, UnityTarget, CATALOG, UNITY_API_PATH,
};
use crate::catalog::http::CatalogHttp;
use crate::catalog::{auth_id, display_url};
use crate::error::{Error, Result};

/// Builds a [`UnityCatalogProvider`].
#[derive(Clone)]
pub struct UnityCatalogProviderBuilder {
    pub(super) uri: String,
    pub(super) target: UnityTarget,
    pub(super) operation: UnityOperation,
    pub(super) location: Option<String>,
    pub(super) name: Option<String>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) timeout: Duration,
}

impl fmt::Debug for UnityCatalogProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("UnityCatalogProviderBuilder")
            .field("uri", &self.uri)
            .field("target", &self.target)
            .field("operation", &self.operation)
            .field("location", &self.location)
            .field("name", &self.name)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl UnityCatalogProviderBuilder {
    /// Read or read-write credentials (default [`UnityOperation::Read`]).
    pub fn operation(mut self, operation: UnityOperation) -> Self {
        self.operation = operation;
        self
    }

    /// The table's storage location, for a table given by id (a table given by name gets it
    /// from `getTable`; a path is its own location). Used to open its store and to name the
    /// Azure account of a SAS token when the answer has no `url`.
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into()).filter(|l| !l.trim().is_empty());
        self
    }

    /// The full name of a table given by id, for messages only (e.g. after a lookup made
    /// elsewhere: the provider then names the table in its errors without looking it up).
    pub fn table_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into()).filter(|n| !n.trim().is_empty());
        self
    }

    /// Sends `Authorization: Bearer {token}` (a personal access token or an OAuth token).
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Adds a header sent with every request. Its value is treated as a secret: it never
    /// appears in ids, messages or `Debug`, and is part of the provider id only as a keyed
    /// fingerprint.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The timeout of one call, connection included (default
    /// [`DEFAULT_CATALOG_TIMEOUT`](crate::catalog::DEFAULT_CATALOG_TIMEOUT), 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds the provider. No request is sent.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the URI is not an `http`/`https` URL (key `uri`), the
    /// table name is not three non-empty dot-separated parts (key `table`), the table id or
    /// the path is empty (key `table_id` / `path`), a header is not valid HTTP (key `headers`;
    /// never quoting the value) or the timeout is zero.
    pub fn build(self) -> Result<UnityCatalogProvider> {
        let base = url::Url::parse(self.uri.trim())
            .map_err(|e| Error::invalid_option("uri", format!("not a URL ({e})")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(Error::invalid_option(
                "uri",
                "the Unity Catalog URI must be an http:// or https:// URL",
            ));
        }
        let (what, text) = match &self.target {
            UnityTarget::TableName(n) => ("table", n),
            UnityTarget::TableId(id) => ("table_id", id),
            UnityTarget::Path(p) => ("path", p),
        };
        if text.trim().is_empty() {
            return Err(Error::invalid_option(what, "must not be empty"));
        }
        if let UnityTarget::TableName(name) = &self.target {
            let parts: Vec<&str> = name.split('.').collect();
            if parts.len() != 3 || parts.iter().any(|p| p.is_empty()) {
                return Err(Error::invalid_option(
                    "table",
                    format!("{name:?} is not a full table name catalog.schema.table"),
                ));
            }
        }
        let mut api = base.clone();
        api.set_query(None);
        api.set_fragment(None);
        if !api.path().trim_end_matches('/').ends_with(UNITY_API_PATH) {
            api.path_segments_mut()
                .map_err(|_| Error::invalid_option("uri", "the URI cannot have a path"))?
                .pop_if_empty()
                .extend(UNITY_API_PATH.split('/'));
        }
        let shown = display_url(&base);
        let target_id = match &self.target {
            UnityTarget::TableName(n) => format!("table={n}"),
            UnityTarget::TableId(id) => format!("table_id={id}"),
            UnityTarget::Path(p) => format!("path={p}"),
        };
        let id = format!(
            "unity-catalog:{shown}:{target_id}:{}:auth={}",
            self.operation.table_operation(),
            auth_id(&self.headers)
        );
        let http = CatalogHttp::new(CATALOG, &self.headers, self.timeout)?;
        let table = OnceCell::new();
        if let UnityTarget::TableId(table_id) = &self.target {
            let _ = table.set(UnityTable {
                table_id: table_id.clone(),
                storage_location: self.location.clone(),
            });
        }
        Ok(UnityCatalogProvider {
            uri: shown,
            api,
            target: self.target,
            name: self.name,
            operation: self.operation,
            http,
            id,
            table,
            table_calls: AtomicU64::new(0),
            credential_calls: AtomicU64::new(0),
        })
    }
}
