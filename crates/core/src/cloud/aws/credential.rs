//! S3 credentials: storage options to [`AwsCredential`], and the refreshing
//! `object_store::CredentialProvider` that signs every request with the refresher's current
//! credential.

use std::sync::Arc;

use object_store::aws::AwsCredential;

use super::keys::{
    validate_s3_options, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
};
use crate::cloud::refreshing::RefreshingCredentialProvider;
use crate::error::{Error, Result};
use crate::options::StorageOptions;
use crate::refresh::CredentialMapper;

/// Builds an [`AwsCredential`] from `aws_access_key_id`, `aws_secret_access_key` and the
/// optional `aws_session_token` (values trimmed), after checking all of `options` with
/// [`validate_s3_options`]. The refresher builds every credential generation through this
/// function, so a provider's answers obey exactly the rules the options given at open do.
///
/// # Errors
/// [`Error::InvalidOption`] naming the key: any option [`validate_s3_options`] rejects (unknown
/// or misspelled `aws_` key, a credential with control or non-ASCII characters, a bad
/// endpoint or region...), or `aws_access_key_id` / `aws_secret_access_key` missing or empty.
/// The message never contains a secret.
pub fn aws_credential_from_options(options: &StorageOptions) -> Result<AwsCredential> {
    validate_s3_options(options)?;
    let get = |k: &str| options.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let key_id = get(AWS_ACCESS_KEY_ID)
        .ok_or_else(|| Error::invalid_option(AWS_ACCESS_KEY_ID, "missing or empty"))?;
    let secret = get(AWS_SECRET_ACCESS_KEY)
        .ok_or_else(|| Error::invalid_option(AWS_SECRET_ACCESS_KEY, "missing or empty"))?;
    Ok(AwsCredential {
        key_id: key_id.to_string(),
        secret_key: secret.to_string(),
        token: get(AWS_SESSION_TOKEN).map(str::to_string),
    })
}

/// The [`CredentialMapper`] for S3.
pub fn aws_mapper() -> CredentialMapper<AwsCredential> {
    Arc::new(aws_credential_from_options)
}

/// The refreshing `object_store` credential provider of S3 stores.
pub type RefreshingAwsCredentialProvider = RefreshingCredentialProvider<AwsCredential>;

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
    fn c09_missing_secret_is_a_clear_error_without_secrets() {
        let e = aws_credential_from_options(&opts(&[(AWS_ACCESS_KEY_ID, "AKID")])).unwrap_err();
        assert!(e.to_string().contains("aws_secret_access_key"), "{e}");
        let e =
            aws_credential_from_options(&opts(&[(AWS_SECRET_ACCESS_KEY, "hunter2")])).unwrap_err();
        assert!(e.to_string().contains("aws_access_key_id") && !e.to_string().contains("hunter2"));
        let c = aws_credential_from_options(&opts(&[
            (AWS_ACCESS_KEY_ID, "AKID"),
            (AWS_SECRET_ACCESS_KEY, "s"),
            (AWS_SESSION_TOKEN, "t"),
        ]))
        .unwrap();
        assert_eq!((c.key_id.as_str(), c.token.as_deref()), ("AKID", Some("t")));
    }
}
