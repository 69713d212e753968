//! Azure Blob Storage and ADLS Gen2 (`az://`, `azure://`, `adl://`, `abfs[s]://`).
//!
//! - [`keys`]: the option keys this library reads itself;
//! - [`credential`]: options to [`AzureCredential`] (SAS, bearer token, account key), the SAS
//!   expiry, and the credential providers;
//! - [`auth`]: which answers mean "credential rejected";
//! - [`builder`]: the `MicrosoftAzure` store builder;
//! - [`store`]: [`AzureStore`], which sends a delete of one blob as one `DELETE` request
//!   (`object_store` 0.14.2 has only the batch delete for Azure; see case C21);
//! - [`AzureAdapter`]: the [`CloudAdapter`] tying them together.
//!
//! Vended options (Lance: `azure_storage_sas_token` + `azure_storage_account_name` +
//! `expires_at_millis`; Iceberg's `adls.sas-token.<host>` is mapped to the same keys by the
//! Iceberg catalog) refresh like S3 keys. A SAS token carries its own expiry `se`: the
//! refresher renews by the earlier of `se` and `expires_at_millis`, so a SAS vended without
//! `expires_at_millis` is still renewed before it expires.

pub mod auth;
pub mod builder;
pub mod credential;
pub mod integrity;
pub mod keys;
pub mod store;

use std::sync::Arc;

use object_store::azure::AzureCredential;

pub use auth::is_auth_failure;
pub use builder::{
    build_azure_store, check_account_name, resolve_account, use_emulator, validate_options,
    AzureCredentials,
};
pub use credential::{
    azure_credential_from_options, azure_mapper, check_bearer_token, parse_sas_token,
    sas_expires_at_millis, with_sas_expiry, RefreshingAzureCredentialProvider, SasExpiryProvider,
    StaticAzureCredentialProvider,
};
pub use keys::*;
pub use store::{AzureStore, SingleDelete};

use super::{CloudAdapter, CloudStore};
use crate::error::{Error, Result};
use crate::options::{parse_bool, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::{CredentialRefresher, RefreshConfig, RefresherHandle, SystemClock};
use crate::uri::StoreUri;

/// The [`CloudAdapter`] for Azure URIs.
#[derive(Debug)]
pub struct AzureAdapter;

impl CloudAdapter for AzureAdapter {
    fn name(&self) -> &'static str {
        "Azure"
    }

    /// Credentials from a provider (refreshed), from the options (static), or none with
    /// `azure_skip_signature=true`. Never from the environment, the Azure CLI or managed
    /// identity.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for an unknown `azure_` key, a malformed credential, account or
    /// endpoint, or an Azure store with neither credentials nor a provider nor
    /// `azure_skip_signature=true`.
    fn build(
        &self,
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<CloudStore> {
        let container = &uri.authority;
        let account = uri.account.as_deref();
        let skip = options
            .get(AZURE_SKIP_SIGNATURE)
            .map(|v| parse_bool(AZURE_SKIP_SIGNATURE, v))
            .transpose()?
            .unwrap_or(false);
        if let Some(p) = provider {
            // Check the location before the refresher exists, so a bad account is reported
            // as such and not as a credential problem later.
            validate_options(options)?;
            resolve_account(account, options, use_emulator(options)?)?;
            let provider: Arc<dyn StorageOptionsProvider> = Arc::new(SasExpiryProvider::new(p));
            let refresher: CredentialRefresher<AzureCredential> = CredentialRefresher::new(
                provider,
                with_sas_expiry(options.clone())?,
                azure_mapper(),
                refresh,
                Arc::new(SystemClock),
            )?;
            let store = build_azure_store(
                container,
                account,
                options,
                AzureCredentials::Refreshing(refresher.clone()),
            )?;
            let handle: Arc<dyn RefresherHandle> = Arc::new(refresher);
            return Ok(CloudStore {
                counters: store.counters(),
                store: store.clone(),
                multipart: Some(store),
                refresher: Some(handle),
            });
        }
        let credentials = if options.keys().any(|k| self.is_credential_key(k)) {
            AzureCredentials::Static(azure_credential_from_options(options)?)
        } else if skip {
            AzureCredentials::None
        } else {
            return Err(Error::invalid_option(
                AZURE_STORAGE_SAS_TOKEN,
                "an Azure store needs credentials (azure_storage_sas_token, azure_storage_token or azure_storage_account_key), a provider, or azure_skip_signature=true",
            ));
        };
        let store = build_azure_store(container, account, options, credentials)?;
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
