//! Unity Catalog temporary table and path credentials as a [`StorageOptionsProvider`].
//!
//! Protocol (the Unity Catalog REST API, `api/all.yaml` of the OSS server; every path below is
//! under `{uri}/api/2.1/unity-catalog`):
//!
//! ```text
//! GET  /tables/{full_name}                         full_name = catalog.schema.table
//! 200 {"table_id": "4b6f...", "storage_location": "s3://bucket/sales/orders", ...}
//!
//! POST /temporary-table-credentials   {"table_id": "4b6f...", "operation": "READ"}   (or READ_WRITE)
//! POST /temporary-path-credentials    {"url": "s3://bucket/p", "operation": "PATH_READ"}  (or PATH_READ_WRITE)
//! 200 {"aws_temp_credentials": {"access_key_id": "...", "secret_access_key": "...", "session_token": "..."},
//!      "expiration_time": 1767225600000, "url": "s3://bucket/sales/orders"}
//!
//! 404 {"error_code": "TABLE_NOT_FOUND", "message": "Table not found: main.sales.orders"}
//! ```
//!
//! A table given by name is looked up **once** (`getTable`): its `table_id` and
//! `storage_location` are kept for the provider's life ([`UnityCatalogProvider::table_info`]), so
//! each refresh is one credentials call. A failed lookup is not kept: the next fetch tries
//! again. A table given by id needs no lookup (its location, needed only to open a store and to
//! name an Azure account, is the one given to the builder). A path target asks for path
//! credentials of that URL.
//!
//! The answer's credential is mapped to this crate's storage options:
//!
//! | Unity Catalog field | storage options |
//! |---|---|
//! | `aws_temp_credentials` (also `r2_temp_credentials`) | `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token` |
//! | `azure_user_delegation_sas.sas_token` | `azure_storage_sas_token` (a leading `?` removed), plus `azure_storage_account_name` = the account of the location (`abfss://container@account.dfs.core.windows.net/...`) when it names one |
//! | `azure_aad.aad_token` | `azure_storage_token` (and the account as above) |
//! | `gcp_oauth_token.oauth_token` | `google_bearer_token` |
//! | `expiration_time` (epoch ms; a number, or a decimal string) | `expires_at_millis` |
//!
//! The location the account is read from is the answer's `url` when present, else the table's
//! location (or the path). A missing `expiration_time` (or `0`) means no stated expiry: the
//! store uses the credential until the storage endpoint rejects it, then fetches again.
//! Endpoint and region are not vended: they are the caller's own options, kept across refreshes.
//!
//! Errors name the catalog operation, the table (or path), the HTTP status, and Unity Catalog's
//! `error_code` and `message` (a `google.rpc.Status` `code` when a server answers with that
//! instead); never a header value or a vended secret.

mod builder;
mod credentials;
mod wire;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::OnceCell;

use super::http::CatalogHttp;
use super::{CatalogError, CatalogErrorKind, DEFAULT_CATALOG_TIMEOUT};
use crate::error::{Error, Result};
use crate::options::StorageOptions;
use crate::provider::StorageOptionsProvider;
pub use builder::UnityCatalogProviderBuilder;
use credentials::map_credentials;
pub use credentials::AZURE_STORAGE_TOKEN;
use wire::{
    unity_error_body, PathCredentialsRequest, TableCredentialsRequest, TableInfo,
    TemporaryCredentials, TABLE_INFO, TEMPORARY_CREDENTIALS,
};

const CATALOG: &str = "Unity Catalog";

/// The REST API's path under the server URI: `api/2.1/unity-catalog`.
pub const UNITY_API_PATH: &str = "api/2.1/unity-catalog";

/// What the provider vends credentials for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UnityTarget {
    /// A table by its full name, `catalog.schema.table` (looked up once with `getTable`).
    TableName(String),
    /// A table by its id (the UUID `getTable` returns as `table_id`); no lookup.
    TableId(String),
    /// A storage path (`s3://bucket/prefix`, `abfss://...`, `gs://...`): path credentials.
    Path(String),
}

/// Read or read-write credentials (`READ`/`READ_WRITE` for tables, `PATH_READ`/`PATH_READ_WRITE`
/// for paths).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum UnityOperation {
    /// Read-only credentials (the default).
    #[default]
    Read,
    /// Read-write credentials.
    ReadWrite,
}

impl UnityOperation {
    /// `READ` or `READ_WRITE`: the table operation, also this type's spelling in specs.
    pub fn table_operation(self) -> &'static str {
        match self {
            UnityOperation::Read => "READ",
            UnityOperation::ReadWrite => "READ_WRITE",
        }
    }

    /// `PATH_READ` or `PATH_READ_WRITE`.
    pub fn path_operation(self) -> &'static str {
        match self {
            UnityOperation::Read => "PATH_READ",
            UnityOperation::ReadWrite => "PATH_READ_WRITE",
        }
    }

    /// Reads `READ` / `READ_WRITE` (ASCII case ignored); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_uppercase().as_str() {
            "READ" => Some(UnityOperation::Read),
            "READ_WRITE" => Some(UnityOperation::ReadWrite),
            _ => None,
        }
    }
}

/// A table as the provider knows it: its id and, when known, its storage location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnityTable {
    /// `table_id`: the table's UUID.
    pub table_id: String,
    /// `storage_location`, e.g. `s3://bucket/sales/orders` (for a table given by id: the
    /// location given to the builder, if any).
    pub storage_location: Option<String>,
}

/// Vends a table's (or a path's) temporary credentials through Unity Catalog's
/// `temporary-table-credentials` / `temporary-path-credentials` (see the [module
/// documentation](self) for the wire format and the mapping).
///
/// Its [`provider_id`](StorageOptionsProvider::provider_id) is
/// `unity-catalog:{uri}:{table=name | table_id=id | path=url}:{READ | READ_WRITE}:auth={fingerprint}`
/// (the fingerprint a keyed hash of the headers, `none` without): read and read-write
/// credentials of one table never share a store, nor do two tenants' tokens.
///
/// ```no_run
/// # async fn demo() -> vended_storage::Result<()> {
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use vended_storage::catalog::unity::{UnityCatalogProvider, UnityOperation};
/// use vended_storage::options::merge;
/// use vended_storage::{ObjectStoreRegistry, RefreshConfig, StorageOptionsProvider};
///
/// let provider = Arc::new(
///     UnityCatalogProvider::table("https://uc.example", "main.sales.orders")
///         .operation(UnityOperation::ReadWrite)
///         .bearer_token("my-token")
///         .build()?,
/// );
/// let location = provider.storage_location().await?;              // getTable, once
/// let mine = HashMap::from([("aws_region".to_string(), "us-east-1".to_string())]);
/// let vended = provider.fetch_storage_options().await?.unwrap_or_default();
/// let store = ObjectStoreRegistry::global().open(
///     &location, merge(&mine, &vended), Some(provider), RefreshConfig::default())?;
/// # Ok(()) }
/// ```
pub struct UnityCatalogProvider {
    uri: String,
    api: url::Url,
    target: UnityTarget,
    name: Option<String>,
    operation: UnityOperation,
    http: CatalogHttp,
    id: String,
    table: OnceCell<UnityTable>,
    table_calls: AtomicU64,
    credential_calls: AtomicU64,
}

impl fmt::Debug for UnityCatalogProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnityCatalogProvider")
            .field("id", &self.id)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl UnityCatalogProvider {
    /// Starts building a provider for `target` of the Unity Catalog server at `uri` (e.g.
    /// `http://127.0.0.1:8080` or a workspace URL; `/api/2.1/unity-catalog` is appended unless
    /// the URI already ends with it).
    pub fn builder(uri: impl Into<String>, target: UnityTarget) -> UnityCatalogProviderBuilder {
        UnityCatalogProviderBuilder {
            uri: uri.into(),
            target,
            operation: UnityOperation::Read,
            location: None,
            name: None,
            headers: Vec::new(),
            timeout: DEFAULT_CATALOG_TIMEOUT,
        }
    }

    /// A builder for the table `full_name` (`catalog.schema.table`).
    pub fn table(
        uri: impl Into<String>,
        full_name: impl Into<String>,
    ) -> UnityCatalogProviderBuilder {
        Self::builder(uri, UnityTarget::TableName(full_name.into()))
    }

    /// A builder for the path credentials of `url`.
    pub fn path(uri: impl Into<String>, url: impl Into<String>) -> UnityCatalogProviderBuilder {
        Self::builder(uri, UnityTarget::Path(url.into()))
    }

    /// The URI as printed in ids and messages (no user info, query or trailing slash).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// What the provider vends credentials for.
    pub fn target(&self) -> &UnityTarget {
        &self.target
    }

    /// Read or read-write.
    pub fn operation(&self) -> UnityOperation {
        self.operation
    }

    /// How many `getTable` calls this provider has sent (at most one success per provider).
    pub fn table_calls(&self) -> u64 {
        self.table_calls.load(Ordering::Relaxed)
    }

    /// How many temporary-credentials calls this provider has sent (successful or not).
    pub fn credential_calls(&self) -> u64 {
        self.credential_calls.load(Ordering::Relaxed)
    }

    fn target_text(&self) -> String {
        match &self.target {
            UnityTarget::TableName(n) => format!("table '{n}'"),
            UnityTarget::TableId(id) => match &self.name {
                Some(n) => format!("table '{n}' (id {id})"),
                None => format!("table id '{id}'"),
            },
            UnityTarget::Path(p) => format!("path '{p}'"),
        }
    }

    fn fail(&self, e: CatalogError) -> Error {
        Error::Provider {
            provider: self.id.clone(),
            message: e.to_string(),
            retryable: e.is_retryable(),
            source: Some(Arc::new(e)),
        }
    }

    fn answer_error(
        &self,
        operation: String,
        (kind, message): (CatalogErrorKind, String),
    ) -> Error {
        self.fail(CatalogError {
            kind,
            catalog: CATALOG,
            operation,
            status: Some(200),
            code: None,
            message,
        })
    }

    fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.api.clone();
        if let Ok(mut s) = url.path_segments_mut() {
            s.pop_if_empty().extend(segments);
        }
        url
    }

    /// The table: for a table given by name, one `getTable` call the first time (kept after a
    /// success; a failure is not kept); for a table given by id, its id and the location given
    /// to the builder.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `table`) for a path target; [`Error::Provider`] (source a
    /// [`CatalogError`]: status, `error_code`, `message`) when `getTable` fails (404 when the
    /// table does not exist, 403 when the caller may not see it), or when its answer has no
    /// string `table_id`.
    pub async fn table_info(&self) -> Result<UnityTable> {
        let UnityTarget::TableName(name) = &self.target else {
            return self
                .table
                .get()
                .cloned()
                .ok_or_else(|| Error::invalid_option("table", "a path target has no table"));
        };
        self.table
            .get_or_try_init(|| async {
                self.table_calls.fetch_add(1, Ordering::Relaxed);
                let operation = format!("get table '{name}' at {}", self.uri);
                let request = self
                    .http
                    .client()
                    .get(self.endpoint(&["tables", name.as_str()]));
                let info: TableInfo = self
                    .http
                    .send_json(request, &operation, TABLE_INFO, unity_error_body)
                    .await
                    .map_err(|e| self.fail(e))?;
                let malformed = |m| (CatalogErrorKind::MalformedResponse, m);
                let table_id = info
                    .table_id
                    .optional_string("table_id")
                    .map_err(|m| self.answer_error(operation.clone(), malformed(m)))?
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| {
                        let missing = (
                            CatalogErrorKind::MissingField,
                            "the answer has no table_id".into(),
                        );
                        self.answer_error(operation.clone(), missing)
                    })?;
                let storage_location = info
                    .storage_location
                    .optional_string("storage_location")
                    .map_err(|m| self.answer_error(operation.clone(), malformed(m)))?
                    .filter(|l| !l.is_empty());
                Ok(UnityTable {
                    table_id,
                    storage_location,
                })
            })
            .await
            .cloned()
    }

    /// Where the data lives: the table's `storage_location` (looked up once, see
    /// [`table_info`](Self::table_info)), the location given for a table id, or the path.
    ///
    /// # Errors
    /// The errors of [`table_info`](Self::table_info); [`Error::Provider`] (kind
    /// [`CatalogErrorKind::MissingField`]) when `getTable` returned no `storage_location`;
    /// [`Error::InvalidOption`] (key `location`) for a table id without a location.
    pub async fn storage_location(&self) -> Result<String> {
        if let UnityTarget::Path(p) = &self.target {
            return Ok(p.clone());
        }
        let table = self.table_info().await?;
        match (table.storage_location, &self.target) {
            (Some(l), _) => Ok(l),
            (None, UnityTarget::TableId(_)) => Err(Error::invalid_option(
                "location",
                "a table given by id needs its location to be given too",
            )),
            (None, _) => Err(self.answer_error(
                format!("get {} at {}", self.target_text(), self.uri),
                (
                    CatalogErrorKind::MissingField,
                    "the answer has no storage_location".into(),
                ),
            )),
        }
    }

    /// One temporary-credentials call (after the one-time table lookup of a table given by
    /// name), mapped to storage options (see the [module documentation](self)).
    ///
    /// # Errors
    /// The errors of [`table_info`](Self::table_info); [`Error::Provider`] (source a [`CatalogError`]
    /// naming the table or path, the operation, the status and Unity Catalog's `error_code` and
    /// `message`) for a non-2xx answer, a timeout, a connection failure, an answer that is not
    /// a `TemporaryCredentials` object, one without a credential, or an `expiration_time` that
    /// is not epoch milliseconds (named, never quoted).
    pub async fn temporary_credentials(&self) -> Result<StorageOptions> {
        let (url, body, operation, location) = match &self.target {
            UnityTarget::Path(path) => {
                let op = self.operation.path_operation();
                let body = serde_json::to_vec(&PathCredentialsRequest {
                    url: path,
                    operation: op,
                });
                let what = format!(
                    "temporary path credentials ({op}) for '{path}' at {}",
                    self.uri
                );
                (
                    self.endpoint(&["temporary-path-credentials"]),
                    body,
                    what,
                    Some(path.clone()),
                )
            }
            _ => {
                let table = self.table_info().await?;
                let op = self.operation.table_operation();
                let body = serde_json::to_vec(&TableCredentialsRequest {
                    table_id: &table.table_id,
                    operation: op,
                });
                let what = match &self.target {
                    UnityTarget::TableName(n) => format!(
                        "temporary table credentials ({op}) for table '{n}' (id {}) at {}",
                        table.table_id, self.uri
                    ),
                    _ => format!(
                        "temporary table credentials ({op}) for {} at {}",
                        self.target_text(),
                        self.uri
                    ),
                };
                (
                    self.endpoint(&["temporary-table-credentials"]),
                    body,
                    what,
                    table.storage_location,
                )
            }
        };
        let body = body.map_err(|e| {
            Error::provider(self.id.clone(), format!("cannot encode the request: {e}"))
        })?;
        self.credential_calls.fetch_add(1, Ordering::Relaxed);
        let request = self
            .http
            .client()
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let answer: TemporaryCredentials = self
            .http
            .send_json(request, &operation, TEMPORARY_CREDENTIALS, unity_error_body)
            .await
            .map_err(|e| self.fail(e))?;
        map_credentials(answer, location.as_deref()).map_err(|e| self.answer_error(operation, e))
    }
}

#[async_trait]
impl StorageOptionsProvider for UnityCatalogProvider {
    /// [`UnityCatalogProvider::temporary_credentials`].
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.temporary_credentials().await.map(Some)
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

#[cfg(test)]
mod tests;
