//! Amazon S3 and S3-compatible endpoints.
//!
//! - [`keys`]: the option keys this library reads itself;
//! - [`credential`]: options to [`AwsCredential`], and the refreshing credential provider;
//! - [`auth`]: which answers mean "credential rejected";
//! - [`builder`]: the `AmazonS3` store builder;
//! - [`S3Adapter`]: the [`CloudAdapter`] tying them together.

pub mod auth;
pub mod builder;
pub mod credential;
pub mod integrity;
pub mod keys;

use std::sync::Arc;

use object_store::aws::AwsCredential;

pub use auth::is_auth_failure;
pub use builder::{build_s3_store, AwsCredentials};
pub use credential::{aws_credential_from_options, aws_mapper, RefreshingAwsCredentialProvider};
pub use keys::*;

use super::{CloudAdapter, CloudStore};
use crate::error::{Error, Result};
use crate::options::{parse_bool, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::{CredentialRefresher, RefreshConfig, RefresherHandle, SystemClock};
use crate::uri::StoreUri;

/// The [`CloudAdapter`] for `s3://` and `s3a://` URIs.
#[derive(Debug)]
pub struct S3Adapter;

impl CloudAdapter for S3Adapter {
    fn name(&self) -> &'static str {
        "S3"
    }

    /// See [`keys::validate_s3_options`].
    fn validate(&self, options: &StorageOptions) -> Result<()> {
        keys::validate_s3_options(options)
    }

    /// Credentials from a provider (refreshed), from the options (static), or none with
    /// `aws_skip_signature=true`. Never from the environment or instance metadata.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for an unknown `aws_` key, a partial credential, or an S3
    /// store with neither credentials nor a provider nor `aws_skip_signature=true`.
    fn build(
        &self,
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<CloudStore> {
        let bucket = &uri.authority;
        let skip = options
            .get(AWS_SKIP_SIGNATURE)
            .map(|v| parse_bool(AWS_SKIP_SIGNATURE, v))
            .transpose()?
            .unwrap_or(false);
        if let Some(p) = provider {
            let refresher: CredentialRefresher<AwsCredential> = CredentialRefresher::new(
                p,
                options.clone(),
                aws_mapper(),
                refresh,
                Arc::new(SystemClock),
            )?;
            let store = build_s3_store(
                bucket,
                options,
                AwsCredentials::Refreshing(refresher.clone()),
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
            AwsCredentials::Static(aws_credential_from_options(options)?)
        } else if skip {
            AwsCredentials::None
        } else {
            return Err(Error::invalid_option(
                AWS_ACCESS_KEY_ID,
                "an S3 store needs credentials (aws_access_key_id and aws_secret_access_key), a provider, or aws_skip_signature=true",
            ));
        };
        let store = build_s3_store(bucket, options, credentials)?;
        Ok(CloudStore {
            counters: store.counters(),
            store: store.clone(),
            multipart: Some(store),
            refresher: None,
        })
    }

    fn is_auth_failure(&self, error: &object_store::Error) -> bool {
        auth::is_auth_failure(error)
    }
}
