//! Lance Namespace REST: `DescribeTable` as a [`StorageOptionsProvider`], and opening a table by
//! name.
//!
//! Protocol (the Lance Namespace REST specification, `lance-namespace` 0.13; reference server:
//! PyPI `pylance` 14.0.2, `lance.namespace.RestAdapter`):
//!
//! ```text
//! POST {endpoint}/v1/table/{id}/describe            id = the table id's parts joined by "$"
//! Content-Type: application/json
//! {"id": ["db", "orders"], "vend_credentials": true, "with_table_uri": true}
//!
//! 200 {"location": "s3://bucket/db/orders.lance",
//!      "table_uri": "s3://bucket/db/orders.lance",            (optional)
//!      "storage_options": {"aws_access_key_id": "...", "aws_secret_access_key": "...",
//!                          "aws_session_token": "...", "expires_at_millis": "1767225600000"}}
//! 404 {"error": "table id 'db$orders'", "code": 4}              (ErrorResponse; 4 = TableNotFound)
//! ```
//!
//! `storage_options` use `object_store`'s key names, as this crate does, with
//! `expires_at_millis` in epoch milliseconds. Catalogs usually vend only credentials: the
//! endpoint, region and allow-http a store needs come from the options the caller passes to
//! [`LanceNamespaceProvider::open_table`] (defined in the crate's `table` module, which sits
//! above the registry) and are kept across refreshes.
//!
//! The wire types (module `wire`) are serde structs ([`DescribeTableRequest`],
//! `DescribeTableResponse`, `ErrorResponse`); their fields are read through a shape that reports
//! a wrong JSON type by the field's name, never by its value.

mod wire;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::http::CatalogHttp;
use super::{auth_id, display_url, CatalogError, CatalogErrorKind, DEFAULT_CATALOG_TIMEOUT};
use crate::error::{Error, Result};
use crate::options::{Redacted, StorageOptions};
use crate::provider::StorageOptionsProvider;
pub use wire::DescribeTableRequest;
use wire::{lance_error_body, DescribeTableResponse, RESPONSE};

const CATALOG: &str = "Lance Namespace";

/// The default delimiter that joins a table id's parts in the URL path: `$`.
pub const DEFAULT_DELIMITER: &str = "$";

/// What `DescribeTable` answered (the fields this crate uses).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TableDescription {
    /// `location`: where the table's data lives, e.g. `s3://bucket/db/orders.lance`.
    pub location: Option<String>,
    /// `table_uri`: the table's complete URI, when the server returned one.
    pub table_uri: Option<String>,
    /// `storage_options`: the vended options (credentials and `expires_at_millis`), or `None`
    /// when the answer had none.
    pub storage_options: Option<StorageOptions>,
}

impl TableDescription {
    /// The URI to open the table's store at: `table_uri` when present, else `location`.
    pub fn uri(&self) -> Option<&str> {
        self.table_uri
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.location.as_deref().filter(|s| !s.is_empty()))
    }
}

impl fmt::Debug for TableDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableDescription")
            .field("location", &self.location)
            .field("table_uri", &self.table_uri)
            .field(
                "storage_options",
                &self.storage_options.as_ref().map(Redacted),
            )
            .finish()
    }
}

/// Builds a [`LanceNamespaceProvider`].
#[derive(Clone)]
pub struct LanceNamespaceProviderBuilder {
    endpoint: String,
    table_id: Vec<String>,
    delimiter: String,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl fmt::Debug for LanceNamespaceProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("LanceNamespaceProviderBuilder")
            .field("endpoint", &self.endpoint)
            .field("table_id", &self.table_id)
            .field("delimiter", &self.delimiter)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl LanceNamespaceProviderBuilder {
    /// The delimiter that joins the table id's parts in the URL path (default `$`, as the Lance
    /// REST servers expect unless configured otherwise).
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = delimiter.into();
        self
    }

    /// Adds a header sent with every request (for example `x-api-key`). Its value is treated
    /// as a secret: it never appears in ids, messages or `Debug`, and it is part of the
    /// provider id only as a keyed fingerprint.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends `Authorization: Bearer {token}`.
    pub fn bearer_token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// The timeout of one describe call, connection included (default
    /// [`DEFAULT_CATALOG_TIMEOUT`], 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds the provider. No request is sent.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the endpoint is not an `http`/`https` URL (key
    /// `endpoint`), the table id is empty or has an empty part or a part containing the
    /// delimiter (key `table_id`), the delimiter is empty, a header is not valid HTTP (key
    /// `headers`; the message never quotes the value) or the timeout is zero.
    pub fn build(self) -> Result<LanceNamespaceProvider> {
        let endpoint = url::Url::parse(self.endpoint.trim())
            .map_err(|e| Error::invalid_option("endpoint", format!("not a URL ({e})")))?;
        if !matches!(endpoint.scheme(), "http" | "https") || endpoint.cannot_be_a_base() {
            return Err(Error::invalid_option(
                "endpoint",
                "the namespace endpoint must be an http:// or https:// URL",
            ));
        }
        if self.delimiter.is_empty() {
            return Err(Error::invalid_option(
                "delimiter",
                "the table id delimiter must not be empty",
            ));
        }
        if self.table_id.is_empty() {
            return Err(Error::invalid_option(
                "table_id",
                "the table id must have at least one part",
            ));
        }
        for part in &self.table_id {
            if part.is_empty() {
                return Err(Error::invalid_option(
                    "table_id",
                    format!("{:?} has an empty part", self.table_id),
                ));
            }
            if part.contains(&self.delimiter) {
                return Err(Error::invalid_option(
                    "table_id",
                    format!(
                        "the part {part:?} contains the delimiter {:?}",
                        self.delimiter
                    ),
                ));
            }
        }
        let joined = self.table_id.join(&self.delimiter);
        let mut describe_url = endpoint.clone();
        describe_url.set_query(None);
        describe_url.set_fragment(None);
        describe_url
            .path_segments_mut()
            .map_err(|_| Error::invalid_option("endpoint", "the endpoint cannot have a path"))?
            .pop_if_empty()
            .extend(["v1", "table", joined.as_str(), "describe"]);
        let http = CatalogHttp::new(CATALOG, &self.headers, self.timeout)?;
        let shown = display_url(&endpoint);
        let id = format!(
            "lance-namespace:{shown}:{joined}:auth={}",
            auth_id(&self.headers)
        );
        Ok(LanceNamespaceProvider {
            endpoint: shown,
            table_id: self.table_id,
            joined_id: joined,
            describe_url,
            http,
            id,
            calls: AtomicU64::new(0),
        })
    }
}

/// Vends a table's storage options through the Lance Namespace REST `DescribeTable` operation
/// (`POST {endpoint}/v1/table/{id}/describe`; see the [module documentation](self) for the
/// wire format).
///
/// Its [`provider_id`](StorageOptionsProvider::provider_id) is
/// `lance-namespace:{endpoint}:{id joined by the delimiter}:auth={fingerprint}`, where the
/// fingerprint is a keyed hash of the configured headers (per-process random key; `none`
/// without headers): two providers for the same table with equal headers share one store,
/// two tenants with different tokens never do. No header value is ever printed.
///
/// ```no_run
/// # async fn demo() -> vended_storage::Result<()> {
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use vended_storage::catalog::LanceNamespaceProvider;
/// use vended_storage::{ObjectStoreRegistry, RefreshConfig};
///
/// let provider = Arc::new(
///     LanceNamespaceProvider::builder("http://127.0.0.1:2333", ["db", "orders"])
///         .bearer_token("my-token")
///         .build()?,
/// );
/// // The catalog vends credentials only; the endpoint and region are the client's own.
/// let mine = HashMap::from([("aws_region".to_string(), "us-east-1".to_string())]);
/// let store = provider
///     .open_table(ObjectStoreRegistry::global(), mine, RefreshConfig::default())
///     .await?;
/// store.put("data/part-0", bytes::Bytes::from_static(b"...")).await?;
/// # Ok(()) }
/// ```
pub struct LanceNamespaceProvider {
    endpoint: String,
    table_id: Vec<String>,
    joined_id: String,
    describe_url: url::Url,
    http: CatalogHttp,
    id: String,
    calls: AtomicU64,
}

impl fmt::Debug for LanceNamespaceProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LanceNamespaceProvider")
            .field("id", &self.id)
            .field("table_id", &self.table_id)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl LanceNamespaceProvider {
    /// Starts building a provider for table `table_id` (its parts, outermost namespace first,
    /// e.g. `["db", "orders"]`) of the namespace server at `endpoint` (e.g.
    /// `http://127.0.0.1:2333`; a base path is kept).
    pub fn builder<I, S>(endpoint: impl Into<String>, table_id: I) -> LanceNamespaceProviderBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        LanceNamespaceProviderBuilder {
            endpoint: endpoint.into(),
            table_id: table_id.into_iter().map(Into::into).collect(),
            delimiter: DEFAULT_DELIMITER.to_string(),
            headers: Vec::new(),
            timeout: DEFAULT_CATALOG_TIMEOUT,
        }
    }

    /// The endpoint as printed in ids and messages (no user info, query or trailing slash).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The table id's parts.
    pub fn table_id(&self) -> &[String] {
        &self.table_id
    }

    /// How many describe calls this provider has sent (successful or not).
    pub fn describe_calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    fn operation(&self) -> String {
        format!("describe table '{}' at {}", self.joined_id, self.endpoint)
    }

    fn fail(&self, e: CatalogError) -> Error {
        Error::Provider {
            provider: self.id.clone(),
            message: e.to_string(),
            retryable: e.is_retryable(),
            source: Some(Arc::new(e)),
        }
    }

    /// Calls `DescribeTable` once.
    ///
    /// # Errors
    /// [`Error::Provider`] (source: a [`CatalogError`] with the HTTP status and the catalog's
    /// `error` message and `code`) for a non-2xx answer (404 when the table does not exist),
    /// a timeout, a connection failure, an answer that is not a JSON object, or a
    /// `storage_options` that is not an object of strings.
    pub async fn describe_table(&self) -> Result<TableDescription> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let operation = self.operation();
        let body = DescribeTableRequest {
            id: self.table_id.clone(),
            vend_credentials: true,
            with_table_uri: true,
        };
        let body = serde_json::to_vec(&body).map_err(|e| {
            Error::provider(self.id.clone(), format!("cannot encode the request: {e}"))
        })?;
        let request = self
            .http
            .client()
            .post(self.describe_url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let answer: DescribeTableResponse = self
            .http
            .send_json(request, &operation, RESPONSE, lance_error_body)
            .await
            .map_err(|e| self.fail(e))?;
        TableDescription::try_from(answer).map_err(|(kind, message)| {
            self.fail(CatalogError {
                kind,
                catalog: CATALOG,
                operation,
                status: Some(200),
                code: None,
                message,
            })
        })
    }

    /// What opening the table needs from a describe answer: the URI to open (`table_uri`, else
    /// `location`) and the vended `storage_options`.
    ///
    /// # Errors
    /// [`Error::Provider`] (kind [`CatalogErrorKind::MissingField`]) when the answer has no
    /// location or no `storage_options`.
    pub(crate) fn open_parts(
        &self,
        description: TableDescription,
    ) -> Result<(String, StorageOptions)> {
        let Some(uri) = description.uri().map(str::to_string) else {
            return Err(self.missing("the answer has neither table_uri nor location"));
        };
        let Some(vended) = description.storage_options else {
            return Err(self.missing(MISSING_STORAGE_OPTIONS));
        };
        Ok((uri, vended))
    }

    fn missing(&self, message: &str) -> Error {
        self.fail(CatalogError {
            kind: CatalogErrorKind::MissingField,
            catalog: CATALOG,
            operation: self.operation(),
            status: Some(200),
            code: None,
            message: message.to_string(),
        })
    }
}

const MISSING_STORAGE_OPTIONS: &str =
    "the answer has no storage_options (does the namespace vend credentials for this table?)";

#[async_trait]
impl StorageOptionsProvider for LanceNamespaceProvider {
    /// Calls `DescribeTable` and returns its `storage_options`.
    ///
    /// # Errors
    /// See [`LanceNamespaceProvider::describe_table`]; also [`Error::Provider`] (kind
    /// [`CatalogErrorKind::MissingField`]) when the answer has no `storage_options`.
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let description = self.describe_table().await?;
        match description.storage_options {
            Some(options) => Ok(Some(options)),
            None => Err(self.missing(MISSING_STORAGE_OPTIONS)),
        }
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

#[cfg(test)]
mod tests;
