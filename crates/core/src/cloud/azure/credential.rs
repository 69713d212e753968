//! Azure credentials: storage options to [`AzureCredential`] (SAS token, bearer token or account
//! key), the SAS expiry (`se`) as `expires_at_millis`, and the `object_store` credential
//! providers (refreshing, and static with a redacted `Debug`).
//!
//! SAS format: the query string of a shared access signature
//! (<https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas>), parsed with
//! `url::form_urlencoded`; `se` is ISO 8601 UTC (`2026-01-01`, `2026-01-01T00:00Z`,
//! `2026-01-01T00:00:00Z`, fractional seconds allowed).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use object_store::azure::{AzureAccessKey, AzureCredential};
use object_store::CredentialProvider;

use super::keys::{
    AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_KEY, AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_TOKEN,
};
use crate::cloud::refreshing::RefreshingCredentialProvider;
use crate::error::{Error, Result};
use crate::options::{parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS};
use crate::provider::{ProviderIdentity, StorageOptionsProvider};
use crate::refresh::CredentialMapper;

/// Parses the SAS token held in option `key` into `object_store`'s (name, value) pairs
/// (percent-decoded; a literal `+` is kept as `+`, as in a base64 signature, not read as a
/// space).
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` (never the value) when the token is empty, is not a
/// query string, has a control character, or lacks the signature `sig` or the expiry `se`.
pub fn parse_sas_token(key: &str, value: &str) -> Result<Vec<(String, String)>> {
    let query = value.trim().trim_start_matches('?');
    if query.is_empty() {
        return Err(Error::invalid_option(key, "empty SAS token"));
    }
    if query.chars().any(|c| c.is_control() || c == ' ') {
        return Err(Error::invalid_option(
            key,
            "the SAS token contains a space or a control character",
        ));
    }
    // form_urlencoded reads '+' as a space; in a SAS it is a base64 character left unescaped.
    let query = query.replace('+', "%2B");
    let mut pairs = Vec::new();
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        if k.is_empty() || v.chars().any(char::is_control) {
            return Err(Error::invalid_option(
                key,
                "the SAS token is not a query string of name=value pairs",
            ));
        }
        pairs.push((k.into_owned(), v.into_owned()));
    }
    for required in ["sig", "se"] {
        if !pairs.iter().any(|(k, v)| k == required && !v.is_empty()) {
            return Err(Error::invalid_option(
                key,
                format!("the SAS token has no '{required}' parameter"),
            ));
        }
    }
    Ok(pairs)
}

/// The signed expiry `se` of parsed SAS `pairs` as epoch milliseconds.
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` when `se` is missing or not an ISO 8601 UTC time.
pub fn sas_expires_at_millis(key: &str, pairs: &[(String, String)]) -> Result<i64> {
    let se = pairs
        .iter()
        .find(|(k, _)| k == "se")
        .map(|(_, v)| v.trim())
        .ok_or_else(|| Error::invalid_option(key, "the SAS token has no 'se' parameter"))?;
    let parsed = DateTime::parse_from_rfc3339(se)
        .map(|d| d.timestamp_millis())
        .or_else(|_| {
            NaiveDateTime::parse_from_str(se, "%Y-%m-%dT%H:%MZ")
                .map(|d| d.and_utc().timestamp_millis())
        })
        .or_else(|_| {
            NaiveDate::parse_from_str(se, "%Y-%m-%d").map(|d| {
                d.and_time(chrono::NaiveTime::MIN)
                    .and_utc()
                    .timestamp_millis()
            })
        });
    parsed.map_err(|_| {
        Error::invalid_option(
            key,
            format!(
                "the SAS expiry 'se' is not an ISO 8601 UTC time such as 2026-01-01T00:00:00Z (got {:?})",
                se.chars().take(40).collect::<String>()
            ),
        )
    })
}

/// Checks that the bearer token in option `key` can go into an HTTP header: visible ASCII
/// only (RFC 6750 `b64token` and the JWT alphabet are subsets).
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` (never the value) for an empty token or one with
/// spaces, control or non-ASCII characters.
pub fn check_bearer_token<'a>(key: &str, value: &'a str) -> Result<&'a str> {
    let token = value.trim();
    if token.is_empty() {
        return Err(Error::invalid_option(key, "empty token"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid_option(
            key,
            "the token contains a space, a control character or a non-ASCII character",
        ));
    }
    Ok(token)
}

fn non_empty<'a>(options: &'a StorageOptions, key: &str) -> Option<&'a str> {
    options
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.trim().is_empty())
}

/// The SAS token of `options` and the key it came from: `azure_storage_sas_token`, or its
/// alias `azure_storage_sas_key`.
///
/// # Errors
/// [`Error::InvalidOption`] when both keys are set to different values.
fn sas_of(options: &StorageOptions) -> Result<Option<(&'static str, &str)>> {
    match (
        non_empty(options, AZURE_STORAGE_SAS_TOKEN),
        non_empty(options, AZURE_STORAGE_SAS_KEY),
    ) {
        (Some(a), Some(b)) if a.trim() != b.trim() => Err(Error::invalid_option(
            AZURE_STORAGE_SAS_TOKEN,
            format!("{AZURE_STORAGE_SAS_TOKEN} and {AZURE_STORAGE_SAS_KEY} name different SAS tokens; give one"),
        )),
        (Some(a), _) => Ok(Some((AZURE_STORAGE_SAS_TOKEN, a))),
        (None, Some(b)) => Ok(Some((AZURE_STORAGE_SAS_KEY, b))),
        (None, None) => Ok(None),
    }
}

/// Builds an [`AzureCredential`] from exactly one of: a SAS token
/// (`azure_storage_sas_token` / `azure_storage_sas_key`), a bearer token
/// (`azure_storage_token`), or a shared account key (`azure_storage_account_key`, base64).
///
/// # Errors
/// [`Error::InvalidOption`] naming the key (never a secret) for a malformed SAS (see
/// [`parse_sas_token`]), a token that cannot go into a header, an account key that is not
/// base64, none of the keys, or more than one kind of credential.
pub fn azure_credential_from_options(options: &StorageOptions) -> Result<AzureCredential> {
    let sas = sas_of(options)?;
    let token = non_empty(options, AZURE_STORAGE_TOKEN);
    let account_key = non_empty(options, AZURE_STORAGE_ACCOUNT_KEY);
    let given: Vec<&str> = [
        sas.map(|(k, _)| k),
        token.map(|_| AZURE_STORAGE_TOKEN),
        account_key.map(|_| AZURE_STORAGE_ACCOUNT_KEY),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        return Err(Error::invalid_option(
            given[0],
            format!(
                "more than one kind of Azure credential is set ({}); give one",
                given.join(", ")
            ),
        ));
    }
    if let Some((key, value)) = sas {
        return Ok(AzureCredential::SASToken(parse_sas_token(key, value)?));
    }
    if let Some(value) = token {
        return Ok(AzureCredential::BearerToken(
            check_bearer_token(AZURE_STORAGE_TOKEN, value)?.to_string(),
        ));
    }
    if let Some(value) = account_key {
        let key = AzureAccessKey::try_new(value.trim()).map_err(|_| {
            Error::invalid_option(AZURE_STORAGE_ACCOUNT_KEY, "the account key is not base64")
        })?;
        return Ok(AzureCredential::AccessKey(key));
    }
    Err(Error::invalid_option(
        AZURE_STORAGE_SAS_TOKEN,
        format!(
            "no Azure credential: give {AZURE_STORAGE_SAS_TOKEN}, {AZURE_STORAGE_TOKEN} or {AZURE_STORAGE_ACCOUNT_KEY}"
        ),
    ))
}

/// The [`CredentialMapper`] for Azure: a provider's (merged) answer must pass the same checks
/// as the options a store is opened with ([`super::validate_options`]), then yields its
/// credential.
pub fn azure_mapper() -> CredentialMapper<AzureCredential> {
    Arc::new(|options: &StorageOptions| {
        super::builder::validate_options(options)?;
        azure_credential_from_options(options)
    })
}

/// `options` with `expires_at_millis` no later than the SAS token's own expiry `se`: a SAS
/// vended without `expires_at_millis` is then refreshed before `se` instead of being used until
/// the endpoint rejects it, and one whose `expires_at_millis` is later than `se` is refreshed
/// by `se`. Options without a SAS token are returned unchanged.
///
/// # Errors
/// [`Error::InvalidOption`] for a malformed SAS token or `expires_at_millis` (named by key).
pub fn with_sas_expiry(mut options: StorageOptions) -> Result<StorageOptions> {
    let Some((key, value)) = sas_of(&options)? else {
        return Ok(options);
    };
    let se = sas_expires_at_millis(key, &parse_sas_token(key, value)?)?;
    let effective = match options.get(EXPIRES_AT_MILLIS) {
        Some(v) => parse_expires_at_millis(v)?.min(se),
        None => se,
    };
    options.insert(EXPIRES_AT_MILLIS.to_string(), effective.to_string());
    Ok(options)
}

/// A provider whose answers pass through [`with_sas_expiry`]; identity and id are the wrapped
/// provider's.
#[derive(Debug)]
pub struct SasExpiryProvider {
    inner: Arc<dyn StorageOptionsProvider>,
}

impl SasExpiryProvider {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn StorageOptionsProvider>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl StorageOptionsProvider for SasExpiryProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.inner
            .fetch_storage_options()
            .await?
            .map(with_sas_expiry)
            .transpose()
    }
    fn provider_id(&self) -> String {
        self.inner.provider_id()
    }
    fn identity(&self) -> ProviderIdentity {
        self.inner.identity()
    }
}

/// The refreshing `object_store` credential provider of Azure stores.
pub type RefreshingAzureCredentialProvider = RefreshingCredentialProvider<AzureCredential>;

/// A fixed credential whose `Debug` shows only its kind (`object_store`'s
/// `StaticCredentialProvider` would print the SAS signature or token).
pub struct StaticAzureCredentialProvider(Arc<AzureCredential>);

impl StaticAzureCredentialProvider {
    /// Serves `credential` for ever.
    pub fn new(credential: AzureCredential) -> Self {
        Self(Arc::new(credential))
    }
}

impl fmt::Debug for StaticAzureCredentialProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.0.as_ref() {
            AzureCredential::SASToken(_) => "SASToken",
            AzureCredential::BearerToken(_) => "BearerToken",
            AzureCredential::AccessKey(_) => "AccessKey",
        };
        write!(f, "StaticAzureCredentialProvider({kind}: ***)")
    }
}

#[async_trait]
impl CredentialProvider for StaticAzureCredentialProvider {
    type Credential = AzureCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AzureCredential>> {
        Ok(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const SAS: &str =
        "?sv=2021-08-06&ss=b&srt=sco&sp=rwdlac&se=2030-01-01T00:00:00Z&sig=ab+c%2Fd%3D";

    #[test]
    fn sas_is_parsed_with_its_expiry() {
        let pairs = parse_sas_token(AZURE_STORAGE_SAS_TOKEN, SAS).unwrap();
        let sig = pairs.iter().find(|(k, _)| k == "sig").unwrap();
        assert_eq!(sig.1, "ab+c/d=");
        assert_eq!(
            sas_expires_at_millis(AZURE_STORAGE_SAS_TOKEN, &pairs).unwrap(),
            1_893_456_000_000
        );
        for (se, ms) in [
            ("2030-01-01", 1_893_456_000_000),
            ("2030-01-01T00:01Z", 1_893_456_060_000),
            ("2030-01-01T00:00:01.5000000Z", 1_893_456_001_500),
        ] {
            let p = vec![("se".to_string(), se.to_string())];
            assert_eq!(sas_expires_at_millis("k", &p).unwrap(), ms, "{se}");
        }
    }

    #[test]
    fn bad_sas_tokens_are_clear_errors_without_the_secret() {
        for (value, why) in [
            ("", "empty"),
            ("sv=2021&sig=SECRETSIG", "'se'"),
            ("sv=2021&se=2030-01-01", "'sig'"),
            ("se=2030-01-01&sig=SECRET\nSIG", "control"),
            ("se=2030-01-01&sig=SECRETSIG&=x", "query string"),
        ] {
            let e = parse_sas_token(AZURE_STORAGE_SAS_TOKEN, value).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains(AZURE_STORAGE_SAS_TOKEN) && text.contains(why),
                "{text}"
            );
            assert!(!text.contains("SECRET"), "{text}");
        }
        let e = with_sas_expiry(opts(&[(
            AZURE_STORAGE_SAS_TOKEN,
            "se=next-tuesday&sig=SECRETSIG",
        )]))
        .unwrap_err();
        assert!(e.to_string().contains("ISO 8601") && !e.to_string().contains("SECRET"));
    }

    #[test]
    fn one_kind_of_credential_is_required() {
        let c = azure_credential_from_options(&opts(&[(AZURE_STORAGE_SAS_KEY, SAS)])).unwrap();
        assert!(matches!(c, AzureCredential::SASToken(_)));
        let c =
            azure_credential_from_options(&opts(&[(AZURE_STORAGE_TOKEN, "eyJ0.x-y_z")])).unwrap();
        assert_eq!(c, AzureCredential::BearerToken("eyJ0.x-y_z".into()));
        let c =
            azure_credential_from_options(&opts(&[(AZURE_STORAGE_ACCOUNT_KEY, "a2V5")])).unwrap();
        assert!(matches!(c, AzureCredential::AccessKey(_)));

        let e = azure_credential_from_options(&opts(&[
            (AZURE_STORAGE_TOKEN, "SECRET1"),
            (AZURE_STORAGE_SAS_TOKEN, SAS),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("more than one") && !e.contains("SECRET1"), "{e}");
        let e = azure_credential_from_options(&opts(&[(AZURE_STORAGE_TOKEN, "SECRET\n1")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(AZURE_STORAGE_TOKEN) && !e.contains("SECRET"),
            "{e}"
        );
        let e = azure_credential_from_options(&opts(&[(AZURE_STORAGE_ACCOUNT_KEY, "SECRET!!")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(AZURE_STORAGE_ACCOUNT_KEY) && !e.contains("SECRET"),
            "{e}"
        );
        let e = azure_credential_from_options(&opts(&[
            (AZURE_STORAGE_SAS_TOKEN, SAS),
            (AZURE_STORAGE_SAS_KEY, "se=2030-01-01&sig=OTHER"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("different") && !e.contains("OTHER"), "{e}");
    }

    #[test]
    fn sas_expiry_caps_expires_at_millis() {
        let o = with_sas_expiry(opts(&[(AZURE_STORAGE_SAS_TOKEN, SAS)])).unwrap();
        assert_eq!(o[EXPIRES_AT_MILLIS], "1893456000000");
        let o = with_sas_expiry(opts(&[
            (AZURE_STORAGE_SAS_TOKEN, SAS),
            (EXPIRES_AT_MILLIS, "1893455000000"),
        ]))
        .unwrap();
        assert_eq!(o[EXPIRES_AT_MILLIS], "1893455000000", "earlier expiry kept");
        let o = with_sas_expiry(opts(&[
            (AZURE_STORAGE_SAS_TOKEN, SAS),
            (EXPIRES_AT_MILLIS, "1893457000000"),
        ]))
        .unwrap();
        assert_eq!(o[EXPIRES_AT_MILLIS], "1893456000000", "capped at se");
        let o = with_sas_expiry(opts(&[(AZURE_STORAGE_TOKEN, "t")])).unwrap();
        assert!(!o.contains_key(EXPIRES_AT_MILLIS));
    }

    #[test]
    fn static_provider_debug_hides_the_secret() {
        let c = azure_credential_from_options(&opts(&[(AZURE_STORAGE_SAS_TOKEN, SAS)])).unwrap();
        let text = format!("{:?}", StaticAzureCredentialProvider::new(c));
        assert!(
            text.contains("SASToken") && !text.contains("ab+c"),
            "{text}"
        );
    }
}
