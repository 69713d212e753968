//! The S3 store builder: non-credential options to `AmazonS3Builder` settings, credentials
//! from the options, a refresher, or none.

use std::sync::Arc;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, AwsCredential};
use object_store::{ObjectStore, StaticCredentialProvider};

use super::credential::RefreshingAwsCredentialProvider;
use crate::error::{Error, Result};
use crate::options::{is_credential_key, StorageOptions};
use crate::refresh::CredentialRefresher;

/// Where an S3 store gets its credentials.
pub enum AwsCredentials {
    /// Fixed credentials from the options (never refreshed).
    Static(AwsCredential),
    /// Credentials kept fresh by a refresher.
    Refreshing(CredentialRefresher<AwsCredential>),
    /// Unsigned requests (`aws_skip_signature=true`).
    None,
}

/// Builds an S3 store for `bucket` from the non-credential `options` (endpoint, region,
/// allow-http, client options...) and `credentials`. Never falls back to environment or
/// instance-metadata credentials.
///
/// # Errors
/// [`Error::InvalidOption`] for an option `object_store` does not know (only keys starting with
/// `aws_` are checked; other keys are ignored as belonging to other layers) or rejects.
pub fn build_s3_store(
    bucket: &str,
    options: &StorageOptions,
    credentials: AwsCredentials,
) -> Result<Arc<dyn ObjectStore>> {
    let mut builder = AmazonS3Builder::new().with_bucket_name(bucket);
    let mut keys: Vec<_> = options.keys().collect();
    keys.sort();
    for key in keys {
        if is_credential_key(key) {
            continue;
        }
        match key.parse::<AmazonS3ConfigKey>() {
            Ok(AmazonS3ConfigKey::Bucket) => {}
            Ok(k) => builder = builder.with_config(k, &options[key]),
            Err(_) if key.to_ascii_lowercase().starts_with("aws_") => {
                return Err(Error::invalid_option(key, "unknown S3 storage option"));
            }
            Err(_) => log::debug!("ignoring storage option '{key}' unknown to the S3 store"),
        }
    }
    builder = match credentials {
        AwsCredentials::Static(c) => {
            builder.with_credentials(Arc::new(StaticCredentialProvider::new(c)))
        }
        AwsCredentials::Refreshing(r) => {
            builder.with_credentials(Arc::new(RefreshingAwsCredentialProvider::new(r)))
        }
        AwsCredentials::None => builder.with_skip_signature(true),
    };
    let store = builder
        .build()
        .map_err(|e| Error::invalid_option("s3", format!("cannot build the S3 store: {e}")))?;
    Ok(Arc::new(store))
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

    #[test]
    fn unknown_aws_option_is_rejected_by_name() {
        let e = build_s3_store(
            "b",
            &opts(&[("aws_endpont", "http://x")]),
            AwsCredentials::None,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("aws_endpont"), "{e}");
    }
}
