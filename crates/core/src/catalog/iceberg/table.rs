//! What the catalog returned with the table (`loadTable`, a stage-create, a scan plan) and how
//! it says to refresh: the first answer of the provider, the refresh endpoint of the location's
//! cloud, the scan plan id and the staged flag (see the module documentation of
//! [`iceberg`](super)).

use std::collections::BTreeMap;
use std::fmt;

use super::credentials::{covering_prefix, map_config, no_match};
use super::IcebergRestCredentialsProviderBuilder;
use crate::error::{Error, Result};
use crate::options::{parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS};

/// `client.refresh-credentials-endpoint`: where S3 credentials are refreshed
/// (Iceberg's `AwsClientProperties.REFRESH_CREDENTIALS_ENDPOINT`).
pub const S3_REFRESH_ENDPOINT: &str = "client.refresh-credentials-endpoint";
/// `adls.refresh-credentials-endpoint`: where ADLS SAS tokens are refreshed
/// (Iceberg's `AzureProperties.ADLS_REFRESH_CREDENTIALS_ENDPOINT`).
pub const ADLS_REFRESH_ENDPOINT: &str = "adls.refresh-credentials-endpoint";
/// `gcs.oauth2.refresh-credentials-endpoint`: where GCS tokens are refreshed
/// (Iceberg's `GCPProperties.GCS_OAUTH2_REFRESH_CREDENTIALS_ENDPOINT`).
pub const GCS_REFRESH_ENDPOINT: &str = "gcs.oauth2.refresh-credentials-endpoint";

/// What the catalog returned with a table, as the provider's first answer, and how to refresh
/// it. Every field is optional: [`Default`] is a provider that asks `loadCredentials` from the
/// start. `Debug` prints config keys and credential prefixes, never a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct IcebergTableCredentials {
    /// The `config` map of the `LoadTableResult` (from `loadTable` or a stage-create): FileIO
    /// keys, possibly credentials (`s3.access-key-id`...), and the refresh endpoint of each
    /// cloud ([`S3_REFRESH_ENDPOINT`], [`ADLS_REFRESH_ENDPOINT`], [`GCS_REFRESH_ENDPOINT`]).
    pub config: BTreeMap<String, String>,
    /// The `storage-credentials` list of the same answer (or of a scan plan): `(prefix,
    /// config)`. When not empty, it is the first answer (the most specific prefix covering the
    /// location); `config`'s own credential keys are then not used.
    pub storage_credentials: Vec<(String, BTreeMap<String, String>)>,
    /// The id of the scan plan (`planTableScan`) that vended the credentials: refreshes send it
    /// as `?planId=`.
    pub plan_id: Option<String>,
    /// The table was stage-created and is not committed yet.
    pub staged: bool,
}

impl fmt::Debug for IcebergTableCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefixes: Vec<&str> = self
            .storage_credentials
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        f.debug_struct("IcebergTableCredentials")
            .field("config", &self.config.keys().collect::<Vec<_>>())
            .field("storage_credentials", &prefixes)
            .field("plan_id", &self.plan_id)
            .field("staged", &self.staged)
            .finish()
    }
}

/// What the catalog returned with the table (see the [module documentation](super)).
impl IcebergRestCredentialsProviderBuilder {
    /// Starts from what the catalog returned with the table (see [`IcebergTableCredentials`]);
    /// replaces what [`load_table_config`](Self::load_table_config),
    /// [`storage_credential`](Self::storage_credential), [`plan_id`](Self::plan_id) and
    /// [`staged`](Self::staged) set before.
    pub fn table_credentials(mut self, vended: IcebergTableCredentials) -> Self {
        self.vended = vended;
        self
    }

    /// The `config` map of the table's `LoadTableResult` (`loadTable` or stage-create): its
    /// credential keys are the first answer when there are no storage credentials, and its
    /// refresh endpoint for the location's cloud ([`S3_REFRESH_ENDPOINT`],
    /// [`ADLS_REFRESH_ENDPOINT`], [`GCS_REFRESH_ENDPOINT`]; absolute, or relative to the catalog
    /// URI) is where refreshes go instead of `loadCredentials`. Replaces an earlier config.
    pub fn load_table_config<I, K, V>(mut self, config: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.vended.config = config
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// Adds one entry of the `storage-credentials` of the table's `LoadTableResult` (or of a
    /// scan plan): the most specific prefix covering the location is the first answer.
    pub fn storage_credential<I, K, V>(mut self, prefix: impl Into<String>, config: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let config = config
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.vended
            .storage_credentials
            .push((prefix.into(), config));
        self
    }

    /// The scan plan (`planTableScan`'s `plan-id`) whose answer vended the credentials:
    /// refreshes send `?planId={id}`. Empty means none.
    pub fn plan_id(mut self, plan_id: impl Into<String>) -> Self {
        self.vended.plan_id = Some(plan_id.into()).filter(|p| !p.is_empty());
        self
    }

    /// The table is stage-created (a create transaction not committed yet): a `404` on refresh
    /// then says so (the stage-create credentials are used until they expire, and the refresh
    /// is tried again, succeeding once the create is committed).
    pub fn staged(mut self, staged: bool) -> Self {
        self.vended.staged = staged;
        self
    }
}

/// The refresh endpoint key of the location's cloud: `s3`/`s3a`/`s3n` [`S3_REFRESH_ENDPOINT`],
/// `abfs`/`abfss`/`wasb`/`wasbs`/`az`/`azure`/`adl` [`ADLS_REFRESH_ENDPOINT`], `gs`
/// [`GCS_REFRESH_ENDPOINT`]; none for other schemes.
pub(super) fn refresh_endpoint_key(location: &str) -> Option<&'static str> {
    let scheme = location.split_once("://")?.0.to_ascii_lowercase();
    match scheme.as_str() {
        "s3" | "s3a" | "s3n" => Some(S3_REFRESH_ENDPOINT),
        "abfs" | "abfss" | "wasb" | "wasbs" | "az" | "azure" | "adl" => Some(ADLS_REFRESH_ENDPOINT),
        "gs" => Some(GCS_REFRESH_ENDPOINT),
        _ => None,
    }
}

/// Resolves a refresh endpoint: an absolute `http(s)` URL as is; anything else relative to the
/// catalog URI *as a directory*: `base` with a trailing `/`, joined (the `url` crate's join)
/// with the endpoint without its leading `/`. So `v1/t/credentials` and `/v1/t/credentials`
/// both give `{uri}/v1/t/credentials` also when the catalog URI has a path
/// (`https://h/api/catalog`), which is what Iceberg's `RESTUtil.resolveEndpoint` does and what
/// servers that send `/v1/...` mean (apache/iceberg#17810: a relative `credentials.uri` was
/// sent unresolved).
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` (not the value) when the result is not an `http(s)`
/// URL; [`Error::InvalidOption`] (key `uri`) when the endpoint is a path and there is no catalog URI
/// (`base` is `None`).
pub(super) fn resolve_endpoint(
    base: Option<&url::Url>,
    key: &str,
    endpoint: &str,
) -> Result<url::Url> {
    let endpoint = endpoint.trim();
    let bad = |why: &str| Error::invalid_option(key, format!("the refresh endpoint {why}"));
    if endpoint.is_empty() {
        return Err(bad("is empty"));
    }
    let lower = endpoint.to_ascii_lowercase();
    let url = if lower.starts_with("http://") || lower.starts_with("https://") {
        url::Url::parse(endpoint).map_err(|e| bad(&format!("is not a URL ({e})")))?
    } else if endpoint.contains("://") {
        return Err(bad("must be an http:// or https:// URL or a path"));
    } else {
        let Some(base) = base else {
            return Err(Error::invalid_option(
                "uri",
                format!("the refresh endpoint ({key}) is a path, which needs the catalog URI"),
            ));
        };
        let mut dir = base.clone();
        dir.set_query(None);
        dir.set_fragment(None);
        if !dir.path().ends_with('/') {
            let path = format!("{}/", dir.path());
            dir.set_path(&path);
        }
        dir.join(endpoint.trim_start_matches('/'))
            .map_err(|e| bad(&format!("cannot be resolved against the catalog URI ({e})")))?
    };
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(bad("must be an http:// or https:// URL or a path"));
    }
    Ok(url)
}

/// The first answer: the most specific storage credential covering `location` when the list is
/// not empty, else the credential keys of `config`, if any. Returns the mapped options and
/// their expiry (epoch ms), if they have one.
///
/// # Errors
/// [`Error::InvalidOption`]: no storage credential covers the location (key
/// `storage_credentials`, the prefixes listed), or the chosen expiry is malformed (the message
/// names the Iceberg key, never the value).
pub(super) fn first_answer(
    table: &IcebergTableCredentials,
    location: &str,
) -> Result<Option<(StorageOptions, Option<i64>)>> {
    let (key, config) = if table.storage_credentials.is_empty() {
        ("config", &table.config)
    } else {
        let prefixes: Vec<&str> = table
            .storage_credentials
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        let Some(best) = covering_prefix(&prefixes, location) else {
            return Err(Error::invalid_option(
                "storage_credentials",
                no_match(location, &prefixes),
            ));
        };
        ("storage_credentials", &table.storage_credentials[best].1)
    };
    let config: StorageOptions = config.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let options = map_config(&config, location).map_err(|m| Error::invalid_option(key, m))?;
    if options.keys().all(|k| k == EXPIRES_AT_MILLIS) {
        return Ok(None);
    }
    let expires = match options.get(EXPIRES_AT_MILLIS) {
        Some(v) => Some(parse_expires_at_millis(v)?),
        None => None,
    };
    Ok(Some((options, expires)))
}
