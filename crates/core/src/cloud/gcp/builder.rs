//! The GCS store builder: non-credential options to `GoogleCloudStorageBuilder` settings,
//! credentials from the options, a refresher, or none. The store is wrapped in a
//! [`LocatedStore`]: its errors name `gs://bucket/path` (not the percent-encoded request URL)
//! and tell a missing bucket from a missing object.

use std::sync::Arc;

use object_store::gcp::{
    GcpCredential, GoogleCloudStorage, GoogleCloudStorageBuilder, GoogleConfigKey,
};

use super::credential::gcp_credential_from_options;
use super::credential::{RefreshingGcpCredentialProvider, StaticGcpCredentialProvider};
use super::keys::{
    GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_BASE_URL, GOOGLE_BEARER_TOKEN,
    GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_SKIP_SIGNATURE, GOOGLE_STORAGE_TOKEN,
};
use crate::cloud::located::{CloudTerms, LocatedStore};
use crate::cloud::secrets::StoreSecrets;
use crate::error::{Error, Result};
use crate::options::{is_credential_key, parse_bool, StorageOptions, EXPIRES_AT_MILLIS};
use crate::refresh::CredentialRefresher;

/// How GCS locations are named in messages (`gs://bucket/path`) and what its 404 answers say
/// is missing ([`super::auth::bucket_missing`]).
pub const TERMS: CloudTerms = CloudTerms {
    scheme: "gs",
    container: "bucket",
    container_missing: super::auth::bucket_missing,
    rejects_credential: super::auth::is_auth_failure,
};

/// Where a GCS store gets its credentials.
pub enum GcpCredentials {
    /// A fixed token from the options (never refreshed).
    Static(GcpCredential),
    /// Tokens kept fresh by a refresher.
    Refreshing(CredentialRefresher<GcpCredential>),
    /// A service account key or application-credentials file from the options:
    /// `object_store` fetches and renews tokens with it itself.
    ServiceAccount,
    /// Unsigned requests (`google_skip_signature=true`).
    None,
}

/// Checks GCS `options` without building a store: every `google_` key known to
/// `object_store` or this library (credential keys included: a misspelled one is an error,
/// never silently ignored), `google_skip_signature`, `google_base_url`, and the token when
/// there is one. Keys of other layers (not starting with `google_`) are left alone, except the
/// client timeouts and retry keys shared by every cloud
/// ([`crate::options::client::validate_client_options`]).
///
/// # Errors
/// [`Error::InvalidOption`] naming the first bad key, never quoting a secret value.
pub fn validate_options(options: &StorageOptions) -> Result<()> {
    crate::options::client::validate_client_options(options)?;
    let mut keys: Vec<_> = options.keys().collect();
    keys.sort();
    for key in keys {
        let lower = key.to_ascii_lowercase();
        if key == EXPIRES_AT_MILLIS || key == GOOGLE_STORAGE_TOKEN || !lower.starts_with("google_")
        {
            continue;
        }
        if key.parse::<GoogleConfigKey>().is_err() {
            let what = if is_credential_key(key) {
                "credential "
            } else {
                ""
            };
            return Err(Error::invalid_option(
                key,
                format!("unknown GCS {what}storage option"),
            ));
        }
    }
    if let Some(v) = options.get(GOOGLE_SKIP_SIGNATURE) {
        parse_bool(GOOGLE_SKIP_SIGNATURE, v)?;
    }
    if let Some(value) = options.get(GOOGLE_BASE_URL) {
        let ok = url::Url::parse(value.trim()).ok().is_some_and(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some()
                && u.username().is_empty()
                && u.password().is_none()
                && u.query().is_none()
        });
        if !ok {
            return Err(Error::invalid_option(
                GOOGLE_BASE_URL,
                "expected an http(s)://host[:port] URL without user info or query",
            ));
        }
    }
    if options.contains_key(GOOGLE_STORAGE_TOKEN) || options.contains_key(GOOGLE_BEARER_TOKEN) {
        gcp_credential_from_options(options)?;
    }
    Ok(())
}

/// Builds a GCS store for `bucket` from the non-credential `options` (base URL, client
/// options...) and `credentials`. Never falls back to application-default or instance-metadata
/// credentials.
///
/// # Errors
/// [`Error::InvalidOption`] naming the key for an unknown `google_` option (other keys are
/// ignored as belonging to other layers), a base URL that is not an http(s) URL, or an option
/// `object_store` rejects.
pub fn build_gcs_store(
    bucket: &str,
    options: &StorageOptions,
    credentials: GcpCredentials,
) -> Result<Arc<LocatedStore<GoogleCloudStorage>>> {
    let observer: Option<Arc<dyn crate::refresh::RefresherHandle>> = match &credentials {
        GcpCredentials::Refreshing(r) => Some(Arc::new(r.clone())),
        _ => None,
    };
    let secrets = StoreSecrets::new(options, observer.clone());
    let mut connector = crate::cloud::http::SharedHttpConnector::new(observer);
    if crate::options::checksums_on(options)? {
        connector = connector.with_integrity(&super::integrity::RULES);
    }
    let counters = connector.counters();
    let mut builder = GoogleCloudStorageBuilder::new()
        .with_http_connector(connector)
        .with_bucket_name(bucket)
        .with_retry(crate::options::client::retry_config(options)?);
    validate_options(options)?;
    let service_account = matches!(credentials, GcpCredentials::ServiceAccount);
    for (key, value) in options {
        let passes_secret = service_account
            && (key == GOOGLE_SERVICE_ACCOUNT_KEY || key == GOOGLE_APPLICATION_CREDENTIALS);
        if (is_credential_key(key) && !passes_secret) || crate::options::client::is_retry_key(key) {
            continue;
        }
        match key.parse::<GoogleConfigKey>() {
            Ok(GoogleConfigKey::Bucket) => {}
            Ok(GoogleConfigKey::BaseUrl) => {
                builder = builder.with_base_url(value.trim().trim_end_matches('/'))
            }
            Ok(k) => builder = builder.with_config(k, value),
            Err(_) => log::debug!("ignoring storage option '{key}' unknown to the GCS store"),
        }
    }
    builder = match credentials {
        GcpCredentials::Static(c) => {
            builder.with_credentials(Arc::new(StaticGcpCredentialProvider::new(c)))
        }
        GcpCredentials::Refreshing(r) => {
            builder.with_credentials(Arc::new(RefreshingGcpCredentialProvider::new(r)))
        }
        GcpCredentials::ServiceAccount => builder,
        // A credential is set so that object_store reads no application-default credentials.
        GcpCredentials::None => builder
            .with_credentials(Arc::new(StaticGcpCredentialProvider::new(GcpCredential {
                bearer: String::new(),
            })))
            .with_skip_signature(true),
    };
    let store = builder
        .build()
        .map_err(|e| Error::invalid_option("gcs", format!("cannot build the GCS store: {e}")))?;
    let multipart = Arc::new(store.clone());
    Ok(Arc::new(
        LocatedStore::new(TERMS, bucket, store, multipart)
            .with_counters(counters)
            .with_secrets(secrets),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(o: &[(&str, &str)]) -> String {
        let o: StorageOptions = o
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        build_gcs_store("b", &o, GcpCredentials::None)
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn bad_options_are_rejected_by_name() {
        let e = err(&[("google_base_ulr", "http://x")]);
        assert!(e.contains("google_base_ulr"), "{e}");
        let e = err(&[("google_storage_tokn", "SECRET")]);
        assert!(
            e.contains("google_storage_tokn") && !e.contains("SECRET"),
            "{e}"
        );
        for bad in [
            "127.0.0.1:4443",
            "ftp://x",
            "http://u:SECRET@x",
            "http://x/?t=SECRET",
        ] {
            let e = err(&[(GOOGLE_BASE_URL, bad)]);
            assert!(e.contains(GOOGLE_BASE_URL) && !e.contains("SECRET"), "{e}");
        }
    }
}
