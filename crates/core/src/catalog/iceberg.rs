//! Iceberg REST `loadCredentials` as a [`StorageOptionsProvider`].
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
//! location (as the spec says: "choose the most specific prefix"). Prefixes are compared as
//! plain strings, as Iceberg's own clients (`S3FileIO`) do, so `s3://b/wh` also matches
//! `s3://b/wh2/t`; `s3a://` and `s3n://` count as `s3://`. Its `config` is mapped to this crate's storage options:
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
//! The wire types are serde structs (`LoadCredentialsResponse`, `StorageCredential`,
//! `IcebergErrorResponse`); their fields are read through a shape that reports a wrong JSON
//! type by the field's name, never by its value.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Deserializer};

use super::http::{decode_error_body, CatalogHttp, Json, Scalar, ScalarMap};
use super::{auth_id, display_url, CatalogError, CatalogErrorKind, DEFAULT_CATALOG_TIMEOUT};
use crate::error::{Error, Result};
use crate::options::{StorageOptions, EXPIRES_AT_MILLIS};
use crate::provider::StorageOptionsProvider;

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

/// Builds an [`IcebergRestCredentialsProvider`].
#[derive(Clone)]
pub struct IcebergRestCredentialsProviderBuilder {
    uri: String,
    prefix: Option<String>,
    namespace: Vec<String>,
    table: String,
    location: String,
    separator: String,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl fmt::Debug for IcebergRestCredentialsProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("IcebergRestCredentialsProviderBuilder")
            .field("uri", &self.uri)
            .field("prefix", &self.prefix)
            .field("namespace", &self.namespace)
            .field("table", &self.table)
            .field("location", &self.location)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl IcebergRestCredentialsProviderBuilder {
    /// The catalog's path prefix (the `prefix` of its `/v1/config` answer), e.g. `warehouse1`.
    /// Empty means none.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        let p: String = prefix.into();
        self.prefix = Some(p).filter(|p| !p.trim_matches('/').is_empty());
        self
    }

    /// Sends `Authorization: Bearer {token}`.
    pub fn token(self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.header("Authorization", value)
    }

    /// Adds a header sent with every request. Its value is treated as a secret (see
    /// [`IcebergRestCredentialsProvider`]).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The separator of namespace parts in the path, as advertised by the catalog's
    /// `namespace-separator` (decoded, e.g. `"."`); default `0x1F`.
    pub fn namespace_separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// The timeout of one call, connection included (default [`DEFAULT_CATALOG_TIMEOUT`], 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds the provider. No request is sent.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the URI is not an `http`/`https` URL (key `uri`), the
    /// namespace is empty or has an empty part (key `namespace`), the table name or the
    /// location is empty, the separator is empty, a header is not valid HTTP (key `headers`;
    /// never quoting the value) or the timeout is zero.
    pub fn build(self) -> Result<IcebergRestCredentialsProvider> {
        let base = url::Url::parse(self.uri.trim())
            .map_err(|e| Error::invalid_option("uri", format!("not a URL ({e})")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(Error::invalid_option(
                "uri",
                "the catalog URI must be an http:// or https:// URL",
            ));
        }
        if self.namespace.is_empty() || self.namespace.iter().any(String::is_empty) {
            return Err(Error::invalid_option(
                "namespace",
                format!(
                    "{:?} must have at least one part and no empty part",
                    self.namespace
                ),
            ));
        }
        if self.separator.is_empty() {
            return Err(Error::invalid_option(
                "namespace_separator",
                "must not be empty",
            ));
        }
        if self.table.is_empty() {
            return Err(Error::invalid_option(
                "table",
                "the table name must not be empty",
            ));
        }
        if self.location.trim().is_empty() {
            return Err(Error::invalid_option(
                "location",
                "the table location must not be empty",
            ));
        }
        let namespace = self.namespace.join(&self.separator);
        let mut url = base.clone();
        url.set_query(None);
        url.set_fragment(None);
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|_| Error::invalid_option("uri", "the catalog URI cannot have a path"))?;
            segments.pop_if_empty().push("v1");
            if let Some(prefix) = &self.prefix {
                segments.extend(prefix.split('/').filter(|s| !s.is_empty()));
            }
            segments.extend([
                "namespaces",
                namespace.as_str(),
                "tables",
                self.table.as_str(),
                "credentials",
            ]);
        }
        let http = CatalogHttp::new(CATALOG, &self.headers, self.timeout)?;
        let shown = display_url(&base);
        let dotted = format!("{}.{}", self.namespace.join("."), self.table);
        let id = format!(
            "iceberg-rest:{shown}:{}:{dotted}:{}:auth={}",
            self.prefix.as_deref().unwrap_or(""),
            self.location,
            auth_id(&self.headers)
        );
        Ok(IcebergRestCredentialsProvider {
            endpoint: shown,
            table: dotted,
            location: self.location,
            url,
            http,
            id,
            calls: AtomicU64::new(0),
        })
    }
}

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
    url: url::Url,
    http: CatalogHttp,
    id: String,
    calls: AtomicU64,
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
        }
    }

    /// The URL this provider calls (prints no secret: tokens travel in headers).
    pub fn credentials_url(&self) -> &str {
        self.url.as_str()
    }

    /// The table location credentials are chosen for.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// How many `loadCredentials` calls this provider has sent (successful or not).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    fn operation(&self) -> String {
        format!(
            "load credentials of table '{}' at {}",
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
        let request = self.http.client().get(self.url.clone());
        let answer: LoadCredentialsResponse = self
            .http
            .send_json(request, &operation, RESPONSE, iceberg_error_body)
            .await
            .map_err(|e| self.fail(e))?;
        select_credentials(answer, &self.location).map_err(|(kind, message)| {
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
}

#[async_trait]
impl StorageOptionsProvider for IcebergRestCredentialsProvider {
    /// See [`IcebergRestCredentialsProvider::load_credentials`].
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.load_credentials().await.map(Some)
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

/// What the answer names in messages: "the answer is a JSON array, expected a
/// LoadCredentialsResponse object".
const RESPONSE: &str = "a LoadCredentialsResponse object";

/// A `LoadCredentialsResponse` (`{"storage-credentials": [StorageCredential...]}`).
#[derive(Deserialize)]
struct LoadCredentialsResponse {
    #[serde(rename = "storage-credentials", default)]
    storage_credentials: Json<serde::de::IgnoredAny, Json<StorageCredential>>,
}

/// One `StorageCredential` (`{"prefix": "s3://...", "config": {...}}`). `config` is `None`
/// only when the field is absent (`null` is kept, and rejected only if this entry is chosen).
#[derive(Deserialize)]
struct StorageCredential {
    #[serde(default)]
    prefix: Scalar,
    #[serde(default, deserialize_with = "present")]
    config: Option<Json<ScalarMap>>,
}

fn present<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Json<ScalarMap>>, D::Error> {
    Json::deserialize(d).map(Some)
}

/// An `IcebergErrorResponse` (`{"error": {"message", "type", "code"}}`); also accepted: an
/// `error` string, or a top-level `message`.
#[derive(Deserialize)]
struct IcebergErrorResponse {
    #[serde(default)]
    error: Json<ErrorModel>,
    #[serde(default)]
    message: Scalar,
}

/// The `ErrorModel` inside an [`IcebergErrorResponse`].
#[derive(Deserialize)]
struct ErrorModel {
    #[serde(default)]
    message: Scalar,
    #[serde(default, rename = "type")]
    kind: Scalar,
}

/// `(message, type)` of an `IcebergErrorResponse`.
fn iceberg_error_body(body: &[u8]) -> (Option<String>, Option<String>) {
    let Some(e) = decode_error_body::<IcebergErrorResponse>(body) else {
        return (None, None);
    };
    match e.error {
        Json::Object(model) => (model.message.text(), model.kind.text()),
        Json::String(s) => (Some(s), None),
        _ => (e.message.text(), None),
    }
}

type Failure = (CatalogErrorKind, String);

fn normalize_scheme(uri: &str) -> String {
    for alias in ["s3a://", "s3n://"] {
        if let Some(rest) = uri.strip_prefix(alias) {
            return format!("s3://{rest}");
        }
    }
    uri.to_string()
}

/// Picks the storage credential for `location` from a `LoadCredentialsResponse` and maps it.
fn select_credentials(
    answer: LoadCredentialsResponse,
    location: &str,
) -> std::result::Result<StorageOptions, Failure> {
    let malformed = |m: String| (CatalogErrorKind::MalformedResponse, m);
    let list = match answer.storage_credentials {
        Json::Null => {
            return Err((
                CatalogErrorKind::MissingField,
                "the answer has no storage-credentials".into(),
            ));
        }
        Json::Array(list) => list,
        other => {
            return Err(malformed(format!(
                "'storage-credentials' is a JSON {}, expected an array",
                other.kind()
            )))
        }
    };
    if list.is_empty() {
        return Err((
            CatalogErrorKind::MissingField,
            "the answer's storage-credentials list is empty".into(),
        ));
    }
    let target = normalize_scheme(location);
    let mut prefixes = Vec::new();
    let mut best: Option<(usize, Json<ScalarMap>)> = None;
    for (i, entry) in list.into_iter().enumerate() {
        let (prefix, config) = match entry {
            Json::Object(StorageCredential {
                prefix: Json::String(prefix),
                config,
            }) => (prefix, config),
            _ => {
                return Err(malformed(format!(
                    "storage-credentials[{i}] has no string 'prefix'"
                )))
            }
        };
        let config =
            config.ok_or_else(|| malformed(format!("storage-credentials[{i}] has no 'config'")))?;
        let p = normalize_scheme(&prefix);
        prefixes.push(prefix);
        if target.starts_with(&p) && best.as_ref().is_none_or(|(len, _)| p.len() > *len) {
            best = Some((p.len(), config));
        }
    }
    let Some((_, config)) = best else {
        return Err((
            CatalogErrorKind::MissingField,
            format!("no storage credential's prefix matches the table location {location} (prefixes: {prefixes:?})"),
        ));
    };
    let config = match config.string_map("config").map_err(malformed)? {
        Some(config) => config,
        None => {
            return Err(malformed(
                "'config' is a JSON null, expected an object of strings".into(),
            ))
        }
    };
    Ok(map_config(&config, location))
}

/// Maps Iceberg FileIO credential keys to storage options (see the module documentation).
fn map_config(config: &StorageOptions, location: &str) -> StorageOptions {
    let mut out = StorageOptions::new();
    for (iceberg, ours) in [
        ("s3.access-key-id", AWS_ACCESS_KEY_ID),
        ("s3.secret-access-key", AWS_SECRET_ACCESS_KEY),
        ("s3.session-token", AWS_SESSION_TOKEN),
        ("s3.session-token-expires-at-ms", EXPIRES_AT_MILLIS),
        ("gcs.oauth2.token", GOOGLE_BEARER_TOKEN),
        ("gcs.oauth2.token-expires-at", EXPIRES_AT_MILLIS),
    ] {
        if let Some(v) = config.get(iceberg) {
            out.insert(ours.to_string(), v.clone());
        }
    }
    const SAS: &str = "adls.sas-token.";
    const SAS_EXPIRES: &str = "adls.sas-token-expires-at-ms.";
    let mut accounts: Vec<&str> = config.keys().filter_map(|k| k.strip_prefix(SAS)).collect();
    accounts.sort_unstable();
    let host = url::Url::parse(location)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    let account_of = |a: &str| a.split('.').next().unwrap_or(a).to_string();
    let chosen = accounts
        .iter()
        .find(|a| {
            host.as_deref() == Some(**a) || host.as_deref().map(account_of) == Some(account_of(a))
        })
        .or(accounts.first())
        .copied();
    if let Some(account) = chosen {
        out.insert(
            AZURE_STORAGE_SAS_TOKEN.to_string(),
            config[&format!("{SAS}{account}")].clone(),
        );
        out.insert(AZURE_STORAGE_ACCOUNT_NAME.to_string(), account_of(account));
        if let Some(exp) = config.get(&format!("{SAS_EXPIRES}{account}")) {
            out.insert(EXPIRES_AT_MILLIS.to_string(), exp.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(v: &serde_json::Value) -> LoadCredentialsResponse {
        super::super::http::decode_object(v.to_string().as_bytes(), RESPONSE).unwrap()
    }

    #[test]
    fn a_bad_config_of_an_entry_that_is_not_chosen_is_ignored() {
        let answer = json!({"storage-credentials": [
            {"prefix": "s3://other/", "config": "not-an-object"},
            {"prefix": "s3://b/", "config": {"s3.access-key-id": "K"}}
        ]});
        let o = select_credentials(decode(&answer), "s3://b/t").unwrap();
        assert_eq!(o[AWS_ACCESS_KEY_ID], "K");
    }

    #[test]
    fn builds_the_credentials_url() {
        let p = IcebergRestCredentialsProvider::builder(
            "http://h:1/api/catalog/",
            ["a", "b c"],
            "t",
            "s3://b/t",
        )
        .prefix("wh/main")
        .build()
        .unwrap();
        assert_eq!(
            p.credentials_url(),
            "http://h:1/api/catalog/v1/wh/main/namespaces/a%1Fb%20c/tables/t/credentials"
        );
        let p = IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", "s3://b/t")
            .build()
            .unwrap();
        assert_eq!(
            p.credentials_url(),
            "http://h:1/v1/namespaces/db/tables/t/credentials"
        );
        assert_eq!(
            p.provider_id(),
            "iceberg-rest:http://h:1::db.t:s3://b/t:auth=none"
        );
    }

    #[test]
    fn longest_matching_prefix_wins_and_keys_are_mapped() {
        let answer = json!({"storage-credentials": [
            {"prefix": "s3://b/", "config": {"s3.access-key-id": "short"}},
            {"prefix": "s3://b/wh/db/orders", "config": {
                "s3.access-key-id": "long", "s3.secret-access-key": "s", "s3.session-token": "tok",
                "s3.session-token-expires-at-ms": "1767225600000", "s3.endpoint": "http://ignored"}},
            {"prefix": "s3://b/wh/db/orders_v2", "config": {"s3.access-key-id": "other-table"}},
            {"prefix": "s3://b/wh", "config": {"s3.access-key-id": "mid"}}
        ]});
        let o = select_credentials(decode(&answer), "s3a://b/wh/db/orders").unwrap();
        assert_eq!(o[AWS_ACCESS_KEY_ID], "long");
        assert_eq!(o[AWS_SESSION_TOKEN], "tok");
        assert_eq!(o[EXPIRES_AT_MILLIS], "1767225600000");
        assert!(!o.contains_key("aws_endpoint") && !o.contains_key("s3.endpoint"));
        let e = select_credentials(decode(&answer), "s3://other/x").unwrap_err();
        assert_eq!(e.0, CatalogErrorKind::MissingField);
        assert!(
            e.1.contains("s3://b/wh") && e.1.contains("s3://other/x"),
            "{}",
            e.1
        );
    }

    #[test]
    fn gcs_and_adls_keys_are_mapped() {
        let gcs = map_config(
            &[
                ("gcs.oauth2.token", "ya29"),
                ("gcs.oauth2.token-expires-at", "1767225600000"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            "gs://b/t",
        );
        assert_eq!(gcs[GOOGLE_BEARER_TOKEN], "ya29");
        assert_eq!(gcs[EXPIRES_AT_MILLIS], "1767225600000");
        let adls = map_config(
            &[
                ("adls.sas-token.aaa.dfs.core.windows.net", "sv=a"),
                ("adls.sas-token.acct.dfs.core.windows.net", "sv=b"),
                (
                    "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
                    "1767225600000",
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            "abfss://c@acct.dfs.core.windows.net/t",
        );
        assert_eq!(adls[AZURE_STORAGE_SAS_TOKEN], "sv=b");
        assert_eq!(adls[AZURE_STORAGE_ACCOUNT_NAME], "acct");
        assert_eq!(adls[EXPIRES_AT_MILLIS], "1767225600000");
    }

    #[test]
    fn malformed_answers_are_named() {
        let malformed = CatalogErrorKind::MalformedResponse;
        let missing = CatalogErrorKind::MissingField;
        for (answer, needle, kind) in [
            (json!([]), "array", malformed),
            (json!({}), "no storage-credentials", missing),
            (
                json!({"storage-credentials": null}),
                "no storage-credentials",
                missing,
            ),
            (json!({"storage-credentials": []}), "empty", missing),
            (
                json!({"storage-credentials": {}}),
                "expected an array",
                malformed,
            ),
            (
                json!({"storage-credentials": [{"config": {}}]}),
                "prefix",
                malformed,
            ),
            (
                json!({"storage-credentials": ["secret-entry"]}),
                "[0] has no string 'prefix'",
                malformed,
            ),
            (
                json!({"storage-credentials": [{"prefix": "s3://b"}]}),
                "config",
                malformed,
            ),
            (
                json!({"storage-credentials": [{"prefix": "s3://b", "config": []}]}),
                "'config' is a JSON array",
                malformed,
            ),
            (
                json!({"storage-credentials": [{"prefix": "s3://b", "config": null}]}),
                "'config' is a JSON null",
                malformed,
            ),
            (
                json!({"storage-credentials": [{"prefix": "s3://b", "config": {"s3.secret-access-key": ["secret-v"]}}]}),
                "'config.s3.secret-access-key' is a JSON array",
                malformed,
            ),
        ] {
            let e = super::super::http::decode_object::<LoadCredentialsResponse>(
                answer.to_string().as_bytes(),
                RESPONSE,
            )
            .and_then(|a| select_credentials(a, "s3://b/t"))
            .unwrap_err();
            assert!(e.1.contains(needle), "{answer}: {}", e.1);
            assert_eq!(e.0, kind, "{answer}");
        }
        let body = |v: serde_json::Value| iceberg_error_body(v.to_string().as_bytes());
        assert_eq!(
            body(json!({"error": "plain text"})),
            (Some("plain text".into()), None)
        );
        assert_eq!(
            body(json!({"error": 5, "message": "top"})),
            (Some("top".into()), None)
        );
        assert_eq!(body(json!(["x"])), (None, None));
        let (m, t) = body(
            json!({"error": {"message": "Table does not exist: db.t", "type": "NoSuchTableException", "code": 404}}),
        );
        assert_eq!(
            (m.as_deref(), t.as_deref()),
            (
                Some("Table does not exist: db.t"),
                Some("NoSuchTableException")
            )
        );
    }
}
