//! GCS credentials: storage options to [`GcpCredential`] (an OAuth2 bearer token), and the
//! `object_store` credential providers (refreshing, and static with a redacted `Debug`).

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use object_store::gcp::GcpCredential;
use object_store::CredentialProvider;

use super::keys::{GOOGLE_BEARER_TOKEN, GOOGLE_STORAGE_TOKEN};
use crate::cloud::azure::check_bearer_token;
use crate::cloud::refreshing::RefreshingCredentialProvider;
use crate::error::{Error, Result};
use crate::options::{StorageOptions, EXPIRES_AT_MILLIS};
use crate::refresh::CredentialMapper;

/// Builds a [`GcpCredential`] from `google_storage_token` (Lance) or `google_bearer_token`
/// (`object_store`, Iceberg); both may be given only with the same value, and always with
/// `expires_at_millis` (epoch ms): an OAuth2 access token expires, typically within an hour,
/// and without its expiry it cannot be refreshed before it does. The same check runs on the
/// options a store is opened with and on every provider answer (through [`gcp_mapper`]).
///
/// # Errors
/// [`Error::InvalidOption`] naming the key (never the token) when neither is set, they differ,
/// the token cannot go into an HTTP header (spaces, control or non-ASCII characters), or
/// `expires_at_millis` is missing or empty.
pub fn gcp_credential_from_options(options: &StorageOptions) -> Result<GcpCredential> {
    let get = |k: &str| options.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let (key, token) = match (get(GOOGLE_STORAGE_TOKEN), get(GOOGLE_BEARER_TOKEN)) {
        (Some(a), Some(b)) if a != b => {
            return Err(Error::invalid_option(
                GOOGLE_STORAGE_TOKEN,
                format!(
                "{GOOGLE_STORAGE_TOKEN} and {GOOGLE_BEARER_TOKEN} name different tokens; give one"
            ),
            ))
        }
        (Some(a), _) => (GOOGLE_STORAGE_TOKEN, a),
        (None, Some(b)) => (GOOGLE_BEARER_TOKEN, b),
        (None, None) => {
            return Err(Error::invalid_option(
                GOOGLE_STORAGE_TOKEN,
                format!("no GCS token: give {GOOGLE_STORAGE_TOKEN} or {GOOGLE_BEARER_TOKEN}"),
            ))
        }
    };
    let bearer = check_bearer_token(key, token)?.to_string();
    if get(EXPIRES_AT_MILLIS).is_none() {
        return Err(Error::invalid_option(
            key,
            format!(
                "an OAuth2 bearer token for GCS needs {EXPIRES_AT_MILLIS} (epoch ms): such a \
                 token expires, typically within an hour, and without its expiry it cannot be \
                 refreshed before it does; vend {EXPIRES_AT_MILLIS} with {key} (Iceberg: \
                 gcs.oauth2.token-expires-at)"
            ),
        ));
    }
    Ok(GcpCredential { bearer })
}

/// The [`CredentialMapper`] for GCS: a provider's (merged) answer must pass the same checks as
/// the options a store is opened with ([`super::validate_options`]), then yields its token.
pub fn gcp_mapper() -> CredentialMapper<GcpCredential> {
    Arc::new(|options: &StorageOptions| {
        super::builder::validate_options(options)?;
        gcp_credential_from_options(options)
    })
}

/// The refreshing `object_store` credential provider of GCS stores.
pub type RefreshingGcpCredentialProvider = RefreshingCredentialProvider<GcpCredential>;

/// A fixed token whose `Debug` does not show it (`object_store`'s `StaticCredentialProvider`
/// would).
pub struct StaticGcpCredentialProvider(Arc<GcpCredential>);

impl StaticGcpCredentialProvider {
    /// Serves `credential` for ever.
    pub fn new(credential: GcpCredential) -> Self {
        Self(Arc::new(credential))
    }
}

impl fmt::Debug for StaticGcpCredentialProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticGcpCredentialProvider(***)")
    }
}

#[async_trait]
impl CredentialProvider for StaticGcpCredentialProvider {
    type Credential = GcpCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<GcpCredential>> {
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

    const EXP: (&str, &str) = (EXPIRES_AT_MILLIS, "1767225600000");

    #[test]
    fn both_token_keys_are_accepted() {
        let c =
            gcp_credential_from_options(&opts(&[(GOOGLE_STORAGE_TOKEN, "ya29.a"), EXP])).unwrap();
        assert_eq!(c.bearer, "ya29.a");
        let c =
            gcp_credential_from_options(&opts(&[(GOOGLE_BEARER_TOKEN, " ya29.b "), EXP])).unwrap();
        assert_eq!(c.bearer, "ya29.b");
        let c = gcp_credential_from_options(&opts(&[
            (GOOGLE_BEARER_TOKEN, "ya29.c"),
            (GOOGLE_STORAGE_TOKEN, "ya29.c"),
            EXP,
        ]))
        .unwrap();
        assert_eq!(c.bearer, "ya29.c");
    }

    #[test]
    fn bad_tokens_are_clear_errors_without_the_secret() {
        for (o, key) in [
            (opts(&[]), GOOGLE_STORAGE_TOKEN),
            (
                opts(&[(GOOGLE_STORAGE_TOKEN, "SECRET\0x")]),
                GOOGLE_STORAGE_TOKEN,
            ),
            (
                opts(&[(GOOGLE_BEARER_TOKEN, "SECRET x")]),
                GOOGLE_BEARER_TOKEN,
            ),
            (
                opts(&[
                    (GOOGLE_BEARER_TOKEN, "SECRETa"),
                    (GOOGLE_STORAGE_TOKEN, "SECRETb"),
                ]),
                GOOGLE_STORAGE_TOKEN,
            ),
        ] {
            let e = gcp_credential_from_options(&o).unwrap_err().to_string();
            assert!(e.contains(key) && !e.contains("SECRET"), "{e}");
        }
        for key in [GOOGLE_STORAGE_TOKEN, GOOGLE_BEARER_TOKEN] {
            for o in [
                opts(&[(key, "SECRET")]),
                opts(&[(key, "SECRET"), (EXPIRES_AT_MILLIS, " ")]),
            ] {
                let e = gcp_credential_from_options(&o).unwrap_err();
                let text = format!("{e} {e:?}");
                assert!(
                    matches!(e, Error::InvalidOption { .. })
                        && text.contains(key)
                        && text.contains(EXPIRES_AT_MILLIS)
                        && text.contains("gcs.oauth2.token-expires-at")
                        && !text.contains("SECRET"),
                    "{text}"
                );
            }
        }
        let s = StaticGcpCredentialProvider::new(GcpCredential {
            bearer: "SECRET".into(),
        });
        assert!(!format!("{s:?}").contains("SECRET"));
    }
}
