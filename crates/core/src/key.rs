//! Store identity: the [`StoreKey`] under which the registry shares a store and the session
//! caches its data.
//!
//! A key holds everything that decides *who* may read *what*: scheme, bucket/container (and
//! account), the non-credential options (endpoint, region...), and the credential source: the
//! provider's identity, or for static credentials a keyed fingerprint of them. Secrets never
//! appear in a key or its `Debug`.

use std::fmt;

use crate::access::AccessMode;
use crate::cloud::CloudAdapter;
use crate::fingerprint::fingerprint;
use crate::options::{is_secret_key, StorageOptions};
use crate::provider::{ProviderIdentity, StorageOptionsProvider};
use crate::uri::{Scheme, StoreUri};

/// Where a store's credentials come from, as far as cache identity is concerned.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum CredentialSource {
    /// No credentials (local files, memory, unsigned requests).
    None,
    /// Static credentials, by a keyed fingerprint (see [`crate::fingerprint`]) of the
    /// credential options. Rotated static keys get a new store.
    Static(u64),
    /// A provider, by its identity.
    Provider(ProviderIdentity),
}

impl fmt::Debug for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialSource::None => f.write_str("None"),
            CredentialSource::Static(fp) => write!(f, "Static(fingerprint={fp:016x})"),
            CredentialSource::Provider(ProviderIdentity::Named(n)) => write!(f, "Provider({n:?})"),
            CredentialSource::Provider(ProviderIdentity::Object(o)) => {
                write!(f, "Provider(object#{:x})", o.hash_code())
            }
        }
    }
}

/// The identity of a shared store.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct StoreKey {
    /// The store kind.
    pub scheme: Scheme,
    /// Bucket (S3, GCS), container (Azure), root directory (file) or name (memory).
    pub authority: String,
    /// The account an `abfs[s]` URI names (Azure); `None` otherwise.
    pub account: Option<String>,
    /// Non-credential options, sorted by key; a secret that configures the data (an SSE-C
    /// key) appears only as `fingerprint:<hex>`.
    pub options: Vec<(String, String)>,
    /// The credential source.
    pub source: CredentialSource,
    /// Read or read-write (see [`crate::access`]): stores of different modes never share
    /// credentials.
    pub access: AccessMode,
}

impl StoreKey {
    /// The key of a store for `uri` opened with `options` and `provider`, whose credential
    /// options `adapter` names.
    pub fn new(
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<&dyn StorageOptionsProvider>,
        adapter: &dyn CloudAdapter,
    ) -> Self {
        let source = match provider {
            Some(p) => CredentialSource::Provider(p.identity()),
            None => {
                let mut creds: Vec<(&String, &String)> = options
                    .iter()
                    .filter(|(k, _)| adapter.is_credential_key(k))
                    .collect();
                if creds.is_empty() {
                    CredentialSource::None
                } else {
                    creds.sort();
                    CredentialSource::Static(fingerprint(&creds))
                }
            }
        };
        let mut non_secret: Vec<(String, String)> = options
            .iter()
            .filter(|(k, _)| !adapter.is_credential_key(k))
            .map(|(k, v)| {
                if is_secret_key(k) {
                    (k.clone(), format!("fingerprint:{:016x}", fingerprint(v)))
                } else {
                    (k.clone(), v.clone())
                }
            })
            .collect();
        non_secret.sort();
        StoreKey {
            scheme: uri.scheme,
            authority: uri.authority.clone(),
            account: uri.account.clone(),
            options: non_secret,
            source,
            access: AccessMode::default(),
        }
    }

    /// This key with access mode `access`.
    pub fn with_access(mut self, access: AccessMode) -> Self {
        self.access = access;
        self
    }

    /// `scheme://authority` (with `@account` for Azure URIs that name one): the root the
    /// session uses for prefix invalidation.
    pub fn root(&self) -> String {
        match &self.account {
            Some(a) => format!("{}://{}@{a}", self.scheme.as_str(), self.authority),
            None => format!("{}://{}", self.scheme.as_str(), self.authority),
        }
    }
}

impl fmt::Debug for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreKey")
            .field("scheme", &self.scheme.as_str())
            .field("authority", &self.authority)
            .field("account", &self.account)
            .field("options", &self.options)
            .field("source", &self.source)
            .field("access", &self.access)
            .finish()
    }
}
