//! Google Cloud Storage (`gs://`).
//!
//! - [`keys`]: the option keys this library reads itself;
//! - [`credential`]: options to [`GcpCredential`] (an OAuth2 bearer token), and the credential
//!   providers;
//! - [`auth`]: which answers mean "credential rejected";
//! - [`builder`]: the `GoogleCloudStorage` store builder;
//! - [`GcsAdapter`]: the [`CloudAdapter`] tying them together.
//!
//! Catalogs vend an OAuth2 access token as `google_storage_token` (Lance) or
//! `google_bearer_token` (Iceberg's `gcs.oauth2.token`, mapped by the Iceberg catalog), with
//! `expires_at_millis` (Iceberg's `gcs.oauth2.token-expires-at`). A token without
//! `expires_at_millis` is an [`Error::InvalidOption`] naming the token key and
//! `expires_at_millis` (never the token): an OAuth2 access token expires, typically within an
//! hour, and without its expiry it cannot be refreshed before it does (unlike an S3 session
//! token without one, case C08, which is used until rejected). The check is the same for the
//! options a store is opened with and for a provider's answer (case C20); a provider answer
//! failing it is a failed refresh (case C09): the previous token keeps serving until it
//! expires, and the error after that carries the reason.

pub mod auth;
pub mod builder;
pub mod credential;
pub mod integrity;
pub mod keys;

use std::sync::Arc;

use object_store::gcp::GcpCredential;

pub use auth::is_auth_failure;
pub use builder::{build_gcs_store, validate_options, GcpCredentials};
pub use credential::{
    gcp_credential_from_options, gcp_mapper, RefreshingGcpCredentialProvider,
    StaticGcpCredentialProvider,
};
pub use keys::*;

use super::{CloudAdapter, CloudStore};
use crate::error::{Error, Result};
use crate::options::{parse_bool, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::{CredentialRefresher, RefreshConfig, RefresherHandle, SystemClock};
use crate::uri::StoreUri;

/// The [`CloudAdapter`] for `gs://` URIs.
#[derive(Debug)]
pub struct GcsAdapter;

impl CloudAdapter for GcsAdapter {
    fn name(&self) -> &'static str {
        "GCS"
    }

    /// Tokens from a provider (refreshed), a token from the options (static), a service
    /// account key or application-credentials file from the options (`object_store` renews
    /// those tokens itself), or none with `google_skip_signature=true`. Never from the
    /// environment or instance metadata.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for an unknown `google_` key, a malformed token or base URL,
    /// a token without `expires_at_millis`, or a GCS store with neither credentials nor a provider nor
    /// `google_skip_signature=true`.
    fn build(
        &self,
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<CloudStore> {
        let bucket = &uri.authority;
        let skip = options
            .get(GOOGLE_SKIP_SIGNATURE)
            .map(|v| parse_bool(GOOGLE_SKIP_SIGNATURE, v))
            .transpose()?
            .unwrap_or(false);
        if let Some(p) = provider {
            validate_options(options)?;
            let refresher: CredentialRefresher<GcpCredential> = CredentialRefresher::new(
                p,
                options.clone(),
                gcp_mapper(),
                refresh,
                Arc::new(SystemClock),
            )?;
            let store = build_gcs_store(
                bucket,
                options,
                GcpCredentials::Refreshing(refresher.clone()),
            )?;
            let handle: Arc<dyn RefresherHandle> = Arc::new(refresher);
            return Ok(CloudStore {
                counters: store.counters(),
                store: store.clone(),
                multipart: Some(store),
                refresher: Some(handle),
            });
        }
        let has = |k: &str| options.get(k).is_some_and(|v| !v.trim().is_empty());
        let credentials = if has(GOOGLE_STORAGE_TOKEN) || has(GOOGLE_BEARER_TOKEN) {
            GcpCredentials::Static(gcp_credential_from_options(options)?)
        } else if has(GOOGLE_SERVICE_ACCOUNT_KEY) || has(GOOGLE_APPLICATION_CREDENTIALS) {
            GcpCredentials::ServiceAccount
        } else if options.keys().any(|k| self.is_credential_key(k)) {
            // Some other credential key (expires_at_millis alone, a misspelled token...).
            GcpCredentials::Static(gcp_credential_from_options(options)?)
        } else if skip {
            GcpCredentials::None
        } else {
            return Err(Error::invalid_option(
                GOOGLE_STORAGE_TOKEN,
                "a GCS store needs credentials (google_storage_token or google_bearer_token with expires_at_millis, or google_service_account_key), a provider, or google_skip_signature=true",
            ));
        };
        let store = build_gcs_store(bucket, options, credentials)?;
        Ok(CloudStore {
            counters: store.counters(),
            store: store.clone(),
            multipart: Some(store),
            refresher: None,
        })
    }

    fn validate(&self, options: &StorageOptions) -> Result<()> {
        validate_options(options)
    }

    fn is_auth_failure(&self, error: &object_store::Error) -> bool {
        auth::is_auth_failure(error)
    }
}
