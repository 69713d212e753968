//! Iceberg REST `loadCredentials` as a [`StorageOptionsProvider`], optionally started from what
//! `loadTable` returned.
//!
//! Protocol (the Apache Iceberg REST catalog OpenAPI specification,
//! `open-api/rest-catalog-open-api.yaml`, operation `loadCredentials`):
//!
//! ```text
//! GET {uri}/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials
//! Authorization: Bearer {token}
//!
//! 200 LoadCredentialsResponse
//!     {"storage-credentials": [
//!         {"prefix": "s3://bucket/warehouse/", "config": {...}},
//!         {"prefix": "s3://bucket/warehouse/db/orders", "config": {
//!             "s3.access-key-id": "...", "s3.secret-access-key": "...",
//!             "s3.session-token": "...", "s3.session-token-expires-at-ms": "1767225600000"}}]}
//! 404 IcebergErrorResponse
//!     {"error": {"message": "Table does not exist: db.orders", "type": "NoSuchTableException", "code": 404}}
//! ```
//!
//! `{prefix}` is the catalog's optional path prefix (left out when unset); a multi-level
//! `{namespace}` joins its parts with the unit separator `0x1F` (sent as `%1F`) unless the
//! catalog advertises another `namespace-separator`.
//!
//! The credential used is the entry whose `prefix` is the longest prefix of the table's
//! location (as the spec says: "choose the most specific prefix"), on path-segment boundaries:
//! `s3://b/t1` covers `s3://b/t1` and `s3://b/t1/data`, never `s3://b/t10` (Iceberg's own
//! `S3FileIO` compares plain strings and so applied one table's credential to another,
//! apache/iceberg#17003). `s3a://` and `s3n://` count as `s3://`; when no prefix covers the
//! location the call fails (no fallback to another entry). Its `config` is mapped to this
//! crate's storage options:
//!
//! | Iceberg key | storage option |
//! |---|---|
//! | `s3.access-key-id` | `aws_access_key_id` |
//! | `s3.secret-access-key` | `aws_secret_access_key` |
//! | `s3.session-token` | `aws_session_token` |
//! | `s3.session-token-expires-at-ms` | `expires_at_millis` |
//! | `gcs.oauth2.token` | `google_bearer_token` |
//! | `gcs.oauth2.token-expires-at` (epoch ms) | `expires_at_millis` |
//! | `adls.sas-token.{account}` | `azure_storage_sas_token`, and `azure_storage_account_name` = the first label of `{account}` |
//! | `adls.sas-token-expires-at-ms.{account}` | `expires_at_millis` |
//!
//! Other keys (`s3.endpoint`, `client.region`, `s3.path-style-access`...) are not mapped: the
//! endpoint and region of a store are the caller's own options, which a refresh keeps. When
//! a config holds SAS tokens for several accounts, the one of the location's account is used.
//! A credential without an expiry is used until the storage endpoint rejects it, then
//! fetched again.
//!
//! # Starting from `loadTable`
//!
//! A table opened through the catalog already has credentials: the `LoadTableResult` of
//! `loadTable` (or of a stage-create) carries a `config` map and a `storage-credentials` list,
//! and a scan plan (`planTableScan`) may vend its own list with a `plan-id`. Given to the
//! builder ([`load_table_config`](IcebergRestCredentialsProviderBuilder::load_table_config),
//! [`storage_credential`](IcebergRestCredentialsProviderBuilder::storage_credential),
//! [`plan_id`](IcebergRestCredentialsProviderBuilder::plan_id),
//! [`staged`](IcebergRestCredentialsProviderBuilder::staged), or all at once as an
//! [`IcebergTableCredentials`]):
//!
//! - **First answer.** The first `fetch_storage_options` returns, without a call, the most
//!   specific storage credential covering the location (as above; none covering it fails at
//!   build), or when the list is empty the credential keys of `config` (the OpenAPI spec:
//!   "check `storage-credentials` first, then `config`"). It is skipped, and the catalog
//!   called, when a store would refuse it: expired or expiring within the default
//!   [`RefreshConfig::min_remaining`] (500 ms), the refresher's own rule (a cached `loadTable`
//!   answer is nearly expired by the time a task opens its store, apache/iceberg#15678). One
//!   inside the lead time is served and refreshed in the background.
//! - **Without namespace and table.** [`IcebergRestCredentialsProvider::builder_for_location`]
//!   (what an Iceberg `FileIO` has: Iceberg never tells it the table): refreshes go to the
//!   refresh endpoint of the config alone; without one the first answer is served (e.g. static
//!   `s3.access-key-id` keys of the config) and a later fetch fails naming the missing key.
//! - **Refresh endpoint.** Later fetches call the endpoint `config` names for the location's
//!   cloud: [`S3_REFRESH_ENDPOINT`] (`client.refresh-credentials-endpoint`, for
//!   `s3`/`s3a`/`s3n`), [`ADLS_REFRESH_ENDPOINT`] (`adls.refresh-credentials-endpoint`, for
//!   `abfs[s]`/`wasb[s]`/`az`/`azure`/`adl`), [`GCS_REFRESH_ENDPOINT`]
//!   (`gcs.oauth2.refresh-credentials-endpoint`, for `gs`), else `loadCredentials` as above.
//!   An endpoint is an absolute `http(s)` URL or a path relative to the catalog URI *and its
//!   path*: with the catalog at `https://h/api/catalog`, `v1/wh/namespaces/db/tables/t/credentials`
//!   and `/v1/wh/...` both mean `https://h/api/catalog/v1/wh/...` (Iceberg's
//!   `RESTUtil.resolveEndpoint`; apache/iceberg#17810 was a relative one sent unresolved). The
//!   answer is a `LoadCredentialsResponse`, read by the same code. The `*-enabled` flags and
//!   a `token` in `config` are not read: headers are the builder's.
//! - **Expiry keys.** `s3.session-token-expires-at-ms`, `gcs.oauth2.token-expires-at` and
//!   `adls.sas-token-expires-at-ms.{account}` are read from the first answer and from every
//!   refresh answer alike; a value that is not epoch milliseconds fails (at build for the
//!   first answer, as a `MalformedResponse` for a refresh) with a message that names the key,
//!   never the value.
//! - **`planId`.** With a plan id every refresh sends `?planId={id}` (the OpenAPI spec's query
//!   parameter of `loadCredentials`), and the provider id ends in `:plan={id}`.
//! - **Staged tables.** A stage-created table does not exist until its create commits, so its
//!   refresh may answer `404` (apache/iceberg#13554, still open there). The stage-create
//!   credentials are the first answer and serve until they expire; a `404` then names the
//!   staged table and is *retryable* (the refresher tries again at its fast pace), so the
//!   refresh succeeds as soon as the create commits and the catalog serves the table. The
//!   provider id ends in `:staged`.
//!
//! The wire types are serde structs (`LoadCredentialsResponse`, `StorageCredential`,
//! `IcebergErrorResponse`); their fields are read through a shape that reports a wrong JSON
//! type by the field's name, never by its value.

mod builder;
mod credentials;
mod table;
mod wire;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::http::CatalogHttp;
use super::{CatalogError, CatalogErrorKind, DEFAULT_CATALOG_TIMEOUT};
use crate::error::{Error, Result};
use crate::options::StorageOptions;
use crate::provider::StorageOptionsProvider;
use crate::refresh::{too_soon_to_use, RefreshConfig};
pub use builder::IcebergRestCredentialsProviderBuilder;
pub use credentials::covering_prefix;
use credentials::{select_credentials, NO_MATCH};
pub use table::{
    IcebergTableCredentials, ADLS_REFRESH_ENDPOINT, GCS_REFRESH_ENDPOINT, S3_REFRESH_ENDPOINT,
};
use wire::{iceberg_error_body, LoadCredentialsResponse, RESPONSE};

const CATALOG: &str = "Iceberg REST";

// The storage option keys a credential maps to (`object_store`'s names). Spelled out here so
// that catalogs stay beside the providers and need no cloud module.
/// `aws_access_key_id`.
const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
/// `aws_secret_access_key`.
const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
/// `aws_session_token`.
const AWS_SESSION_TOKEN: &str = "aws_session_token";

/// The default separator of a multi-level namespace in the URL path: the unit separator
/// `0x1F` (sent as `%1F`).
pub const DEFAULT_NAMESPACE_SEPARATOR: &str = "\u{1f}";

/// `google_bearer_token`: the GCS OAuth2 access token (`object_store`'s key).
pub const GOOGLE_BEARER_TOKEN: &str = "google_bearer_token";
/// `azure_storage_sas_token`: an Azure SAS token (`object_store`'s key).
pub const AZURE_STORAGE_SAS_TOKEN: &str = "azure_storage_sas_token";
/// `azure_storage_account_name`: the Azure storage account (`object_store`'s key).
pub const AZURE_STORAGE_ACCOUNT_NAME: &str = "azure_storage_account_name";

/// Vends a table's credentials through the Iceberg REST `loadCredentials` operation (see the
/// [module documentation](self) for the wire format and the key mapping).
///
/// Its [`provider_id`](StorageOptionsProvider::provider_id) is
/// `iceberg-rest:{uri}:{prefix}:{namespace}.{table}:{location}:auth={fingerprint}`, the
/// fingerprint being a keyed hash of the headers (token included; per-process random key):
/// tenants with different tokens never share a store. No header value is ever printed.
///
/// ```no_run
/// # async fn demo() -> vended_storage::Result<()> {
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use vended_storage::catalog::IcebergRestCredentialsProvider;
/// use vended_storage::{ObjectStoreRegistry, RefreshConfig};
///
/// let location = "s3://warehouse/db/orders";
/// let provider = Arc::new(
///     IcebergRestCredentialsProvider::builder("https://catalog.example/api/catalog", ["db"], "orders", location)
///         .prefix("prod")
///         .token("my-oauth-token")
///         .build()?,
/// );
/// let mine = HashMap::from([("aws_region".to_string(), "eu-west-1".to_string())]);
/// // No credentials yet: the first request fetches them.
/// let store = ObjectStoreRegistry::global().open(location, mine, Some(provider), RefreshConfig::default())?;
/// # let _ = store;
/// # Ok(()) }
/// ```
pub struct IcebergRestCredentialsProvider {
    endpoint: String,
    table: String,
    location: String,
    /// Where refreshes go, or why there is nowhere (no namespace/table and no refresh endpoint).
    url: std::result::Result<url::Url, String>,
    http: CatalogHttp,
    id: String,
    calls: AtomicU64,
    /// The first answer (from the table's `LoadTableResult`) and its expiry, until served.
    first: Mutex<Option<(StorageOptions, Option<i64>)>>,
    staged: bool,
}

impl fmt::Debug for IcebergRestCredentialsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IcebergRestCredentialsProvider")
            .field("id", &self.id)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl IcebergRestCredentialsProvider {
    /// Starts building a provider for table `table` in `namespace` (its parts, outermost
    /// first) of the catalog at `uri` (the catalog's base URL, without `/v1`), whose data
    /// lives at `location` (the table metadata's `location`, e.g. `s3://bucket/wh/db/orders`).
    pub fn builder<I, S>(
        uri: impl Into<String>,
        namespace: I,
        table: impl Into<String>,
        location: impl Into<String>,
    ) -> IcebergRestCredentialsProviderBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        IcebergRestCredentialsProviderBuilder {
            uri: uri.into(),
            prefix: None,
            namespace: namespace.into_iter().map(Into::into).collect(),
            table: table.into(),
            location: location.into(),
            separator: DEFAULT_NAMESPACE_SEPARATOR.to_string(),
            headers: Vec::new(),
            timeout: DEFAULT_CATALOG_TIMEOUT,
            vended: IcebergTableCredentials::default(),
        }
    }

    /// Starts building a provider for data at `location` without naming its table: what the
    /// catalog returned with the table (its `loadTable` config and storage credentials, given
    /// to the builder) is the first answer, and refreshes go to the refresh endpoint the
    /// config names for the location's cloud (the whole address; an absolute URL, or a path
    /// resolved against `uri`). This is what an Iceberg `FileIO` has: Iceberg never tells it
    /// the table. `uri` may be empty when the endpoint is absolute or there is none. Without a
    /// refresh endpoint the provider serves its first answer (e.g. static `s3.access-key-id`
    /// keys of the config) and a later fetch fails naming the missing endpoint key. Messages
    /// and the provider id name the location and the endpoint instead of a table
    /// (`iceberg-rest:{uri}:{prefix}:endpoint={endpoint}:{location}:auth={fingerprint}`).
    pub fn builder_for_location(
        uri: impl Into<String>,
        location: impl Into<String>,
    ) -> IcebergRestCredentialsProviderBuilder {
        Self::builder(uri, Vec::<String>::new(), "", location)
    }

    /// The URL this provider calls: the refresh endpoint of the location's cloud from the table
    /// config, resolved, else `loadCredentials`; with `?planId=` for a scan plan's credentials
    /// (prints no secret: tokens travel in headers).
    /// Empty when there is none: a provider built with
    /// [`builder_for_location`](Self::builder_for_location) from a config without refresh
    /// endpoint serves its first answer only.
    pub fn credentials_url(&self) -> &str {
        self.url.as_ref().map_or("", url::Url::as_str)
    }

    /// The table location credentials are chosen for.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// How many `loadCredentials` (or refresh endpoint) calls this provider has sent
    /// (successful or not); the first answer taken from the table's `LoadTableResult` is not a
    /// call.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Takes the first answer if it is still unserved and a store would accept it: not
    /// expired and not expiring within the store's minimum remaining lifetime (the refresher's
    /// own rule, [`too_soon_to_use`], with the default [`RefreshConfig::min_remaining`]).
    /// Otherwise the catalog is called: a `loadTable` answer that sat in a cache (Spark's table
    /// cache hands tasks credentials up to 30 s old, apache/iceberg#15678) is replaced, never
    /// refused. A first answer inside the lead time but outside that minimum is served: the
    /// store then refreshes in the background and requests go on with it.
    fn take_first(&self) -> Option<StorageOptions> {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        let (options, expires) = first.take()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let min_remaining = RefreshConfig::default().min_remaining;
        expires
            .is_none_or(|at| !too_soon_to_use(at, now, min_remaining))
            .then_some(options)
    }

    fn operation(&self) -> String {
        format!(
            "load credentials of table {} at {}",
            self.table, self.endpoint
        )
    }

    fn fail(&self, e: CatalogError) -> Error {
        Error::Provider {
            provider: self.id.clone(),
            message: e.to_string(),
            retryable: e.is_retryable(),
            source: Some(Arc::new(e)),
        }
    }

    /// Calls `loadCredentials` once and returns the mapped options of the best-matching
    /// storage credential.
    ///
    /// # Errors
    /// [`Error::Provider`] with a [`CatalogError`] source: non-2xx answers (status, and the
    /// catalog's `error.message` and `error.type`), timeouts, connection failures, an answer
    /// that is not a `LoadCredentialsResponse`, no `storage-credentials`, or no credential whose
    /// prefix matches the location (the message lists the prefixes).
    pub async fn load_credentials(&self) -> Result<StorageOptions> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let operation = self.operation();
        let url = match &self.url {
            Ok(url) => url.clone(),
            Err(missing) => {
                return Err(Error::Provider {
                    provider: self.id.clone(),
                    message: format!(
                        "cannot refresh the credentials of {}: {missing}, and no namespace and \
                         table were given to call loadCredentials (its first answer was served or \
                         is expired)",
                        self.table
                    ),
                    retryable: false,
                    source: None,
                })
            }
        };
        let request = self.http.client().get(url);
        let answer: LoadCredentialsResponse = self
            .http
            .send_json(request, &operation, RESPONSE, iceberg_error_body)
            .await
            .map_err(|mut e| {
                if !(self.staged && e.kind == CatalogErrorKind::NotFound) {
                    return self.fail(e);
                }
                e.message = format!(
                    "table {} is staged (stage-create, not committed yet) and the catalog \
                     vends no credentials for it until the create is committed \
                     (apache/iceberg#13554); its stage-create credentials are used until \
                     they expire: {}",
                    self.table, e.message
                );
                // Heals when the create commits: retried at the refresher's fast pace.
                let text = e.to_string();
                let text = text.strip_suffix(" [not retryable]").unwrap_or(&text);
                Error::Provider {
                    provider: self.id.clone(),
                    message: format!("{text} [retryable while the table is staged]"),
                    retryable: true,
                    source: Some(Arc::new(e)),
                }
            })?;
        select_credentials(answer, &self.location).map_err(|(kind, message)| {
            let uncovered = kind == CatalogErrorKind::MissingField && message.starts_with(NO_MATCH);
            let e = CatalogError {
                kind,
                catalog: CATALOG,
                operation,
                status: Some(200),
                code: None,
                message,
            };
            if !uncovered {
                return self.fail(e);
            }
            // An answer that covers nothing is retried at the refresher's pace (backoff while
            // a credential serves, about once a second once none does), not as a permanent
            // failure (C28).
            let text = e.to_string();
            let text = text
                .strip_suffix(" [not retryable]")
                .unwrap_or(&text)
                .to_string();
            Error::Provider {
                provider: self.id.clone(),
                message: text,
                retryable: true,
                source: Some(Arc::new(e)),
            }
        })
    }
}

#[async_trait]
impl StorageOptionsProvider for IcebergRestCredentialsProvider {
    /// The first answer from the table's `LoadTableResult` (once, if not expired), then
    /// [`IcebergRestCredentialsProvider::load_credentials`].
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        if let Some(first) = self.take_first() {
            return Ok(Some(first));
        }
        self.load_credentials().await.map(Some)
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

#[cfg(test)]
mod tests;
