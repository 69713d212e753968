//! The builder of [`IcebergRestCredentialsProvider`]: checks the table (or the location alone),
//! resolves where refreshes go and computes the provider id.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;
use std::time::Duration;

use super::table::{first_answer, refresh_endpoint_key, resolve_endpoint};
use super::{IcebergRestCredentialsProvider, IcebergTableCredentials, CATALOG};
use crate::catalog::http::CatalogHttp;
use crate::catalog::{auth_id, display_url};
use crate::error::{Error, Result};

/// Builds an [`IcebergRestCredentialsProvider`].
#[derive(Clone)]
pub struct IcebergRestCredentialsProviderBuilder {
    pub(super) uri: String,
    pub(super) prefix: Option<String>,
    pub(super) namespace: Vec<String>,
    pub(super) table: String,
    pub(super) location: String,
    pub(super) separator: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) timeout: Duration,
    pub(super) vended: IcebergTableCredentials,
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
            .field("vended", &self.vended)
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

    /// The timeout of one call, connection included (default
    /// [`DEFAULT_CATALOG_TIMEOUT`](crate::catalog::DEFAULT_CATALOG_TIMEOUT), 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Builds the provider. No request is sent.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the URI is not an `http`/`https` URL (key `uri`; it may be
    /// empty without namespace and table, unless the refresh endpoint is a path), the
    /// namespace is empty or has an empty part (key `namespace`) while a table is named, the
    /// table name is empty while a namespace is named, the location is empty, the separator is empty, a header is not valid HTTP (key `headers`;
    /// never quoting the value), the timeout is zero, the refresh endpoint of the location's
    /// cloud does not resolve to an `http(s)` URL (key: the endpoint's config key), no given
    /// storage credential covers the location (key `storage_credentials`), or the first
    /// answer's expiry is not epoch milliseconds (the message names the Iceberg key, never its
    /// value).
    pub fn build(self) -> Result<IcebergRestCredentialsProvider> {
        // Without namespace and table (`builder_for_location`) the refresh endpoint of the
        // table config is the whole address. The catalog URI is needed only to resolve a
        // relative endpoint or to call `loadCredentials`: a non-HTTP catalog URI (JDBC's
        // `jdbc:...`, Hive's `thrift://...`) is fine beside an absolute endpoint (C30).
        let tableless = self.namespace.is_empty() && self.table.is_empty();
        let base = if tableless && self.uri.trim().is_empty() {
            None
        } else {
            Some(catalog_base(self.uri.trim()))
        };
        if !tableless && (self.namespace.is_empty() || self.namespace.iter().any(String::is_empty))
        {
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
        if !tableless && self.table.is_empty() {
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
        let refresh_key = refresh_endpoint_key(&self.location);
        let refresh = refresh_key.and_then(|key| Some(key).zip(self.vended.config.get(key)));
        let mut url = match (refresh, &base) {
            (Some((key, endpoint)), _) => Some(resolve_refresh(base.as_ref(), key, endpoint)?),
            (None, Some(base)) if !tableless => {
                Some(self.load_credentials_url(base.as_ref().map_err(Clone::clone)?)?)
            }
            (None, _) => None,
        };
        // Only a usable catalog URI is shown in messages and the provider id.
        let base = base.and_then(Result::ok);
        if let (Some(url), Some(plan)) = (url.as_mut(), &self.vended.plan_id) {
            url.query_pairs_mut().append_pair("planId", plan);
        }
        let first = first_answer(&self.vended, &self.location)?;
        let http = CatalogHttp::new(CATALOG, &self.headers, self.timeout)?;
        let shown = base.as_ref().map(display_url).unwrap_or_default();
        let (table, named) = if tableless {
            let at = url
                .as_ref()
                .map_or_else(|| "no refresh endpoint".to_string(), display_url);
            (
                format!("at {} ({at})", self.location),
                format!("endpoint={at}"),
            )
        } else {
            let dotted = format!("{}.{}", self.namespace.join("."), self.table);
            (format!("'{dotted}'"), dotted)
        };
        let mut id = format!(
            "iceberg-rest:{shown}:{}:{named}:{}:auth={}",
            self.prefix.as_deref().unwrap_or(""),
            self.location,
            auth_id(&self.headers)
        );
        if let Some(plan) = &self.vended.plan_id {
            id.push_str(&format!(":plan={plan}"));
        }
        if self.vended.staged {
            id.push_str(":staged");
        }
        let missing = refresh_key.map_or_else(
            || format!("no refresh endpoint for the scheme of {}", self.location),
            |key| format!("the table config has no '{key}' (refresh endpoint)"),
        );
        Ok(IcebergRestCredentialsProvider {
            endpoint: url.as_ref().map(display_url).unwrap_or_default(),
            table,
            location: self.location,
            url: url.ok_or(missing),
            http,
            id,
            calls: AtomicU64::new(0),
            first: Mutex::new(first),
            staged: self.vended.staged,
        })
    }

    /// `{uri}/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials`.
    fn load_credentials_url(&self, base: &url::Url) -> Result<url::Url> {
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
        Ok(url)
    }
}

/// The catalog URI as a base URL, or why it cannot be one (key `uri`): checked only where it
/// is used (a relative refresh endpoint, `loadCredentials`).
fn catalog_base(uri: &str) -> Result<url::Url> {
    let base = url::Url::parse(uri)
        .map_err(|e| Error::invalid_option("uri", format!("not a URL ({e})")))?;
    if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
        return Err(Error::invalid_option(
            "uri",
            "the catalog URI must be an http:// or https:// URL",
        ));
    }
    Ok(base)
}

/// Resolves the refresh endpoint `endpoint` (config key `key`) against the catalog URI when
/// it is relative (see [`resolve_endpoint`]); an absolute endpoint needs no catalog URI at all.
///
/// # Errors
/// Those of [`resolve_endpoint`]; for a relative endpoint with a catalog URI that is not an
/// `http(s)` URL, [`Error::InvalidOption`] (key `uri`) naming both keys.
fn resolve_refresh(base: Option<&Result<url::Url>>, key: &str, endpoint: &str) -> Result<url::Url> {
    match base {
        Some(Err(_)) if !is_absolute(endpoint) => Err(Error::invalid_option(
            "uri",
            format!(
                "the refresh endpoint '{key}' is a relative path, which is resolved against the \
                 catalog URI 'uri', and the catalog URI is not an http:// or https:// URL (a \
                 JDBC or Hive catalog's URI cannot resolve it): give '{key}' as an absolute \
                 http(s) URL"
            ),
        )),
        Some(Ok(base)) => resolve_endpoint(Some(base), key, endpoint),
        _ => resolve_endpoint(None, key, endpoint),
    }
}

/// Whether a refresh endpoint has a scheme (`http://...`), so needs no catalog URI.
fn is_absolute(endpoint: &str) -> bool {
    endpoint.trim().contains("://")
}
