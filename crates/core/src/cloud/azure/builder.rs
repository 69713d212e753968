//! The Azure Blob store builder: non-credential options to `MicrosoftAzureBuilder` settings,
//! the account from the URI or the options, the emulator's URLs, and credentials from the
//! options, a refresher, or none.

use std::sync::Arc;

use object_store::azure::{AzureConfigKey, AzureCredential, MicrosoftAzureBuilder};
use object_store::client::HttpConnector;
use object_store::ClientOptions;

use super::credential::{
    azure_credential_from_options, with_sas_expiry, RefreshingAzureCredentialProvider,
    StaticAzureCredentialProvider,
};
use super::keys::*;
use super::store::{AzureCredentialSource, AzureStore, SingleDelete};
use crate::cloud::located::{CloudTerms, LocatedStore};
use crate::cloud::secrets::StoreSecrets;
use crate::error::{Error, Result};
use crate::options::{is_credential_key, parse_bool, StorageOptions, EXPIRES_AT_MILLIS};
use crate::refresh::CredentialRefresher;

/// Where an Azure store gets its credentials.
pub enum AzureCredentials {
    /// A fixed credential from the options (never refreshed).
    Static(AzureCredential),
    /// Credentials kept fresh by a refresher.
    Refreshing(CredentialRefresher<AzureCredential>),
    /// Unsigned requests (`azure_skip_signature=true`).
    None,
}

/// Checks an Azure storage account name: 3 to 24 lowercase letters and digits
/// (<https://learn.microsoft.com/en-us/azure/storage/common/storage-account-overview#storage-account-name>).
///
/// # Errors
/// [`Error::InvalidOption`] naming `key` otherwise.
pub fn check_account_name(key: &str, name: &str) -> Result<()> {
    let ok = (3..=24).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_option(
            key,
            "an Azure storage account name has 3 to 24 lowercase letters and digits",
        ))
    }
}

/// The account a store for `uri_account` (from an `abfss://` URI) and `options` uses.
///
/// # Errors
/// [`Error::InvalidOption`] naming `azure_storage_account_name` when the URI and the option
/// name different accounts, when a name is malformed, or when neither names one (outside the
/// emulator, whose default is `devstoreaccount1`).
pub fn resolve_account(
    uri_account: Option<&str>,
    options: &StorageOptions,
    emulator: bool,
) -> Result<String> {
    let option = options
        .get(AZURE_STORAGE_ACCOUNT_NAME)
        .map(String::as_str)
        .filter(|v| !v.is_empty());
    if let Some(a) = option {
        check_account_name(AZURE_STORAGE_ACCOUNT_NAME, a)?;
    }
    if let Some(a) = uri_account {
        check_account_name(AZURE_STORAGE_ACCOUNT_NAME, a).map_err(|_| {
            Error::invalid_option(
                AZURE_STORAGE_ACCOUNT_NAME,
                "the account in the abfss URI host is not 3 to 24 lowercase letters and digits",
            )
        })?;
    }
    match (uri_account, option) {
        (Some(u), Some(o)) if u != o => Err(Error::invalid_option(
            AZURE_STORAGE_ACCOUNT_NAME,
            format!("the URI names account '{u}' but {AZURE_STORAGE_ACCOUNT_NAME} is '{o}'"),
        )),
        (Some(a), _) | (None, Some(a)) => Ok(a.to_string()),
        (None, None) if emulator => Ok(EMULATOR_ACCOUNT.to_string()),
        (None, None) => Err(Error::invalid_option(
            AZURE_STORAGE_ACCOUNT_NAME,
            "an Azure store needs a storage account: set azure_storage_account_name or use an abfss://container@account.dfs.core.windows.net URI",
        )),
    }
}

/// Checks an endpoint URL option: `http` or `https`, a host, no user info, query or fragment.
fn check_endpoint(key: &str, value: &str) -> Result<url::Url> {
    let url = url::Url::parse(value.trim())
        .map_err(|e| Error::invalid_option(key, format!("not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(Error::invalid_option(
            key,
            "expected an http(s)://host[:port] URL",
        ));
    }
    if !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(Error::invalid_option(
            key,
            "the endpoint URL must not carry user info, a query or a fragment (put credentials in their own options)",
        ));
    }
    Ok(url)
}

/// Whether `azure_storage_use_emulator` is set to true.
///
/// # Errors
/// [`Error::InvalidOption`] naming the key for a value that is not a boolean.
pub fn use_emulator(options: &StorageOptions) -> Result<bool> {
    Ok(options
        .get(AZURE_STORAGE_USE_EMULATOR)
        .map(|v| parse_bool(AZURE_STORAGE_USE_EMULATOR, v))
        .transpose()?
        .unwrap_or(false))
}

/// Checks Azure `options` without building a store: every `azure_` key known to
/// `object_store` (credential keys included: a misspelled one is an error, never silently
/// ignored), booleans, the account name and endpoint when given, and the credential when
/// there is one (see [`azure_credential_from_options`] and [`with_sas_expiry`]). Keys of other
/// layers (not starting with `azure_`) are left alone, except the client timeouts and retry
/// keys shared by every cloud ([`crate::options::client::validate_client_options`]).
///
/// # Errors
/// [`Error::InvalidOption`] naming the first bad key, never quoting a secret value.
pub fn validate_options(options: &StorageOptions) -> Result<()> {
    crate::options::client::validate_client_options(options)?;
    let mut keys: Vec<_> = options.keys().collect();
    keys.sort();
    for key in keys {
        let lower = key.to_ascii_lowercase();
        if key == EXPIRES_AT_MILLIS || !lower.starts_with("azure_") {
            continue;
        }
        if key.parse::<AzureConfigKey>().is_err() {
            let what = if is_credential_key(key) {
                "credential "
            } else {
                ""
            };
            return Err(Error::invalid_option(
                key,
                format!("unknown Azure {what}storage option"),
            ));
        }
    }
    use_emulator(options)?;
    if let Some(v) = options.get(AZURE_SKIP_SIGNATURE) {
        parse_bool(AZURE_SKIP_SIGNATURE, v)?;
    }
    if let Some(a) = options.get(AZURE_STORAGE_ACCOUNT_NAME) {
        check_account_name(AZURE_STORAGE_ACCOUNT_NAME, a)?;
    }
    if let Some(e) = options.get(AZURE_STORAGE_ENDPOINT) {
        check_endpoint(AZURE_STORAGE_ENDPOINT, e)?;
    }
    if AZURE_CREDENTIAL_KEYS
        .iter()
        .any(|k| options.contains_key(*k))
    {
        azure_credential_from_options(options)?;
        with_sas_expiry(options.clone())?;
    }
    Ok(())
}

/// How Azure locations are named in messages (`az://container/path`, never the request URL,
/// which may carry a SAS) and what its 404 answers say is missing
/// ([`super::auth::container_missing`]).
pub const TERMS: CloudTerms = CloudTerms {
    scheme: "az",
    container: "container",
    container_missing: super::auth::container_missing,
    rejects_credential: super::auth::is_auth_failure,
};

/// Builds an Azure Blob store for `container` in the account of `uri_account` (an `abfss://`
/// URI's) or `azure_storage_account_name`, from the non-credential `options` and
/// `credentials`. Never falls back to environment, CLI or managed-identity credentials.
///
/// With `azure_storage_use_emulator=true` the store talks to Azurite at
/// `azure_storage_endpoint` (else `$AZURITE_BLOB_STORAGE_URL`, else `http://127.0.0.1:10000`)
/// with path-style URLs `<endpoint>/<account>/<container>`, using `credentials` like any other
/// store (`object_store`'s own emulator mode would ignore them).
///
/// The store is an [`AzureStore`] (a delete of one blob is one `DELETE` request) in a
/// [`LocatedStore`] (errors name `az://container/path`).
///
/// # Errors
/// [`Error::InvalidOption`] naming the key for an unknown `azure_` option (other keys are
/// ignored as belonging to other layers), a bad account name or endpoint, or an option
/// `object_store` rejects.
pub fn build_azure_store(
    container: &str,
    uri_account: Option<&str>,
    options: &StorageOptions,
    credentials: AzureCredentials,
) -> Result<Arc<LocatedStore<AzureStore>>> {
    validate_options(options)?;
    let emulator = use_emulator(options)?;
    let account = resolve_account(uri_account, options, emulator)?;
    let observer: Option<Arc<dyn crate::refresh::RefresherHandle>> = match &credentials {
        AzureCredentials::Refreshing(r) => Some(Arc::new(r.clone())),
        _ => None,
    };
    let secrets = StoreSecrets::new(options, observer.clone());
    let mut connector = crate::cloud::http::SharedHttpConnector::new(observer);
    if crate::options::checksums_on(options)? {
        connector = connector.with_integrity(&super::integrity::RULES);
    }
    let mut client_options = ClientOptions::new();
    let mut builder = MicrosoftAzureBuilder::new()
        .with_http_connector(connector.clone())
        .with_container_name(container)
        .with_account(&account)
        .with_retry(crate::options::client::retry_config(options)?);
    for (key, value) in options {
        if is_credential_key(key) || crate::options::client::is_retry_key(key) {
            continue;
        }
        match key.parse::<AzureConfigKey>() {
            Ok(
                AzureConfigKey::ContainerName
                | AzureConfigKey::AccountName
                | AzureConfigKey::UseEmulator
                | AzureConfigKey::Endpoint,
            ) => {}
            Ok(k) => {
                if let AzureConfigKey::Client(c) = k {
                    client_options = client_options.with_config(c, value);
                }
                builder = builder.with_config(k, value)
            }
            Err(_) => log::debug!("ignoring storage option '{key}' unknown to the Azure store"),
        }
    }
    let endpoint = options
        .get(AZURE_STORAGE_ENDPOINT)
        .map(|v| check_endpoint(AZURE_STORAGE_ENDPOINT, v))
        .transpose()?;
    let account_url = if emulator {
        let base = match endpoint {
            Some(url) => url,
            None => {
                let from_env = std::env::var(EMULATOR_URL_ENV).ok();
                let base = from_env.as_deref().unwrap_or(DEFAULT_EMULATOR_URL);
                check_endpoint(EMULATOR_URL_ENV, base)?
            }
        };
        let account_url = format!("{}/{account}", base.as_str().trim_end_matches('/'));
        builder = builder
            .with_endpoint(account_url.clone())
            .with_allow_http(true);
        client_options = client_options.with_allow_http(true);
        account_url
    } else if let Some(url) = endpoint {
        let account_url = url.as_str().trim_end_matches('/').to_string();
        builder = builder.with_endpoint(account_url.clone());
        account_url
    } else {
        service_url(&account, options)?
    };
    let source: Option<AzureCredentialSource> = match credentials {
        AzureCredentials::Static(c) => Some(Arc::new(StaticAzureCredentialProvider::new(c))),
        AzureCredentials::Refreshing(r) => {
            Some(Arc::new(RefreshingAzureCredentialProvider::new(r)))
        }
        AzureCredentials::None => None,
    };
    builder = match &source {
        Some(s) => builder.with_credentials(s.clone()),
        None => builder.with_skip_signature(true),
    };
    let bad =
        |e: String| Error::invalid_option("azure", format!("cannot build the Azure store: {e}"));
    let store = builder.build().map_err(|e| bad(e.to_string()))?;
    let mut container_url = url::Url::parse(&account_url).map_err(|e| bad(e.to_string()))?;
    container_url
        .path_segments_mut()
        .map_err(|_| bad("the account URL cannot take a path".into()))?
        .pop_if_empty()
        .push(container);
    let single = SingleDelete {
        client: connector
            .connect(&client_options)
            .map_err(|e| bad(e.to_string()))?,
        credentials: source,
        account,
        container_url,
    };
    let multipart = Arc::new(store.clone());
    let store = AzureStore::new(container, store, single);
    Ok(Arc::new(
        LocatedStore::new(TERMS, container, store, multipart)
            .with_counters(connector.counters())
            .with_secrets(secrets),
    ))
}

/// The blob service URL of `account` without an endpoint option, as `object_store` 0.14.2
/// builds it (`MicrosoftAzureBuilder::build`): `https://<account>.blob.fabric.microsoft.com`
/// with `azure_use_fabric_endpoint=true`, else `https://<account>.blob.core.windows.net`.
fn service_url(account: &str, options: &StorageOptions) -> Result<String> {
    let fabric = options
        .iter()
        .find(|(k, _)| {
            matches!(
                k.parse::<AzureConfigKey>(),
                Ok(AzureConfigKey::UseFabricEndpoint)
            )
        })
        .map(|(k, v)| parse_bool(k, v))
        .transpose()?
        .unwrap_or(false);
    Ok(if fabric {
        format!("https://{account}.blob.fabric.microsoft.com")
    } else {
        format!("https://{account}.blob.core.windows.net")
    })
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

    fn err(uri_account: Option<&str>, o: &[(&str, &str)]) -> String {
        build_azure_store("c", uri_account, &opts(o), AzureCredentials::None)
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn account_comes_from_the_uri_or_the_options_and_must_agree() {
        assert_eq!(
            resolve_account(Some("acct"), &opts(&[]), false).unwrap(),
            "acct"
        );
        let o = opts(&[(AZURE_STORAGE_ACCOUNT_NAME, "acct")]);
        assert_eq!(resolve_account(None, &o, false).unwrap(), "acct");
        assert_eq!(resolve_account(Some("acct"), &o, false).unwrap(), "acct");
        let e = err(Some("other"), &[(AZURE_STORAGE_ACCOUNT_NAME, "acct")]);
        assert!(
            e.contains(AZURE_STORAGE_ACCOUNT_NAME) && e.contains("other"),
            "{e}"
        );
        let e = err(None, &[]);
        assert!(e.contains(AZURE_STORAGE_ACCOUNT_NAME), "{e}");
        assert_eq!(
            resolve_account(None, &opts(&[]), true).unwrap(),
            EMULATOR_ACCOUNT
        );
    }

    #[test]
    fn bad_account_names_and_options_are_rejected_by_name() {
        for bad in [
            "Acct",
            "a",
            "acct-1",
            "acct\n",
            "a.b",
            "abcdefghijklmnopqrstuvwxy",
        ] {
            let e = err(None, &[(AZURE_STORAGE_ACCOUNT_NAME, bad)]);
            assert!(e.contains(AZURE_STORAGE_ACCOUNT_NAME), "{bad:?}: {e}");
        }
        let e = err(Some("acct"), &[("azure_storage_endpont", "http://x")]);
        assert!(e.contains("azure_storage_endpont"), "{e}");
        let e = err(Some("acct"), &[("azure_storage_sas_tokn", "SECRET")]);
        assert!(
            e.contains("azure_storage_sas_tokn") && !e.contains("SECRET"),
            "{e}"
        );
        let e = err(
            Some("acct"),
            &[(AZURE_STORAGE_ENDPOINT, "http://127.0.0.1:1/?sig=SECRET")],
        );
        assert!(
            e.contains(AZURE_STORAGE_ENDPOINT) && !e.contains("SECRET"),
            "{e}"
        );
        let e = err(
            Some("acct"),
            &[(AZURE_STORAGE_ENDPOINT, "http://127.0.0.1:notaport")],
        );
        assert!(e.contains(AZURE_STORAGE_ENDPOINT), "{e}");
        let e = err(Some("acct"), &[(AZURE_STORAGE_USE_EMULATOR, "maybe")]);
        assert!(e.contains(AZURE_STORAGE_USE_EMULATOR), "{e}");
    }

    #[test]
    fn emulator_urls_are_path_style_with_the_account() {
        let store = build_azure_store(
            "c",
            None,
            &opts(&[
                (AZURE_STORAGE_USE_EMULATOR, "true"),
                (AZURE_STORAGE_ENDPOINT, "http://127.0.0.1:1234"),
            ]),
            AzureCredentials::None,
        )
        .unwrap();
        let text = format!("{store:?}");
        assert!(
            text.contains(r#"port: Some(1234), path: "/devstoreaccount1""#),
            "{text}"
        );
    }
}
