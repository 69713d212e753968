//! Cloud adapters: one per kind of store, each behind [`CloudAdapter`].
//!
//! An adapter knows its cloud's option keys, how options map to the cloud's credential type,
//! which answers mean "the endpoint rejected the credential", and how to build the
//! `object_store` store (with a refreshing credential provider when there is a
//! [`StorageOptionsProvider`]). Nothing cloud-specific lives outside its folder: the registry,
//! the store and the URI parser only ask the adapter. Every cloud store is wrapped in a
//! [`located::LocatedStore`], so that its errors name the location in the store's own terms
//! (`s3://`, `az://`, `gs://`) and tell a missing bucket from a missing object.
//!
//! | scheme | adapter |
//! |---|---|
//! | `s3://`, `s3a://` | [`aws::S3Adapter`] |
//! | `az://`, `azure://`, `adl://`, `abfs[s]://` | [`azure::AzureAdapter`] |
//! | `gs://` | [`gcp::GcsAdapter`] |
//! | `file://`, `memory://` | [`local::LocalAdapter`] |

pub mod aws;
pub mod azure;
pub mod gcp;
pub mod http;
pub mod integrity;
pub mod local;
pub mod located;
pub mod refreshing;
pub mod requests;
pub mod secrets;
pub mod status;

use std::sync::Arc;

use object_store::multipart::MultipartStore;
use object_store::ObjectStore;

#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::options::{is_credential_key, StorageOptions};
use crate::provider::StorageOptionsProvider;
use crate::refresh::{RefreshConfig, RefresherHandle};
use crate::uri::{Scheme, StoreUri};
use requests::RequestCounters;

/// A store an adapter built: the `object_store` store and, when its credentials come from a
/// provider, the refresher that keeps them fresh.
pub struct CloudStore {
    /// The store (not yet wrapped for auth-failure retries; the registry does that).
    pub store: Arc<dyn ObjectStore>,
    /// The same store's multipart API with upload ids, when it has one (not `file://`): the
    /// multipart writer uses it so that an upload it cannot abort can be named by its id, and
    /// aborted later.
    pub multipart: Option<Arc<dyn MultipartStore>>,
    /// The credential refresher, `None` for static credentials and stores without any.
    pub refresher: Option<Arc<dyn RefresherHandle>>,
    /// The counters of the store's HTTP requests (all 0 for `file://` and `memory://`).
    pub counters: Arc<RequestCounters>,
}

/// What the rest of the library needs to know about one cloud.
pub trait CloudAdapter: Send + Sync + std::fmt::Debug {
    /// A short name for messages, e.g. `"S3"`.
    fn name(&self) -> &'static str;

    /// Whether `key` is a credential option (key id, secret, token, expiry) rather than a
    /// property of where data lives. Credential options are left out of store identity (the
    /// credential source stands in for them) and replaced as a set on refresh.
    fn is_credential_key(&self, key: &str) -> bool {
        is_credential_key(key)
    }

    /// Checks `options` for everything that can be checked without a request (unknown or
    /// misspelled keys, credential characters, endpoint URL, region...). The registry calls it
    /// before [`build`](Self::build) on every open; a cloud applies the same rules to a
    /// provider's answers in its credential mapper. The default accepts everything (stores
    /// without options of their own, such as `file://` and `memory://`).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the first bad key, never quoting a secret value.
    fn validate(&self, options: &StorageOptions) -> Result<()> {
        let _ = options;
        Ok(())
    }

    /// Builds the store for `uri` from `options`; with a `provider`, `options` seed its
    /// credential cache and `refresh` sets the timing.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the key for options the cloud rejects, and
    /// [`Error::InvalidUri`] for a location it cannot open.
    fn build(
        &self,
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<CloudStore>;

    /// Whether `error` means the endpoint rejected the credential (expired, revoked,
    /// malformed), so that a freshly fetched credential may succeed.
    fn is_auth_failure(&self, error: &object_store::Error) -> bool;
}

/// The adapter for `scheme`.
///
/// # Errors
/// None today: every [`Scheme`] has an adapter (the `Result` leaves room for clouds a build
/// leaves out).
pub fn adapter_for(scheme: Scheme) -> Result<&'static dyn CloudAdapter> {
    match scheme {
        Scheme::S3 => Ok(&aws::S3Adapter),
        Scheme::Azure => Ok(&azure::AzureAdapter),
        Scheme::Gcs => Ok(&gcp::GcsAdapter),
        Scheme::File | Scheme::Memory => Ok(&local::LocalAdapter),
    }
}
