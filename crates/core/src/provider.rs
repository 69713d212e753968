//! The provider SPI: where fresh storage options come from.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::options::{Redacted, StorageOptions};

/// A source of storage options with vended, expiring credentials (a catalog client, a Java
/// `StorageOptionsProvider`, or static options).
///
/// Implementations must be cheap to call concurrently; the refresher calls
/// [`fetch_storage_options`](Self::fetch_storage_options) at most once at a time per store.
#[async_trait]
pub trait StorageOptionsProvider: Send + Sync + fmt::Debug {
    /// Returns the complete storage options to use now, or `None` for "nothing new".
    ///
    /// Keys follow `object_store`'s names plus `expires_at_millis` (epoch milliseconds, decimal
    /// string; see [`crate::options`]). Options the answer omits keep their current values.
    ///
    /// # Errors
    /// Any error is treated as a failed refresh: the refresher keeps a still-valid credential,
    /// backs off and retries; the error (with its source) reaches callers only once the
    /// credential has expired.
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>>;

    /// Names the credential source for cache keys and messages: providers with equal ids share
    /// one store and one credential cache. Must not contain secrets.
    fn provider_id(&self) -> String;

    /// The identity used in store keys. Defaults to [`ProviderIdentity::Named`] with
    /// [`provider_id`](Self::provider_id); providers that have an exact object identity (Java
    /// providers that do not override `providerId()`) return [`ProviderIdentity::Object`].
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity::Named(self.provider_id())
    }
}

/// An exact, non-string identity of a provider object (for example a Java object compared
/// through `IsSameObject`). `hash_code` may collide; `same_object` must not.
pub trait ObjectIdentity: Send + Sync + fmt::Debug {
    /// A hash of the identity (may collide between different objects).
    fn hash_code(&self) -> u64;
    /// Whether `other` denotes exactly the same object.
    fn same_object(&self, other: &dyn ObjectIdentity) -> bool;
    /// For downcasting in `same_object`.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// How a provider is identified in cache keys.
#[derive(Clone, Debug)]
pub enum ProviderIdentity {
    /// Providers with equal names are the same credential source.
    Named(String),
    /// Only exactly the same object is the same credential source.
    Object(Arc<dyn ObjectIdentity>),
}

impl PartialEq for ProviderIdentity {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ProviderIdentity::Named(a), ProviderIdentity::Named(b)) => a == b,
            (ProviderIdentity::Object(a), ProviderIdentity::Object(b)) => {
                Arc::ptr_eq(a, b) || (a.hash_code() == b.hash_code() && a.same_object(b.as_ref()))
            }
            _ => false,
        }
    }
}
impl Eq for ProviderIdentity {}

impl std::hash::Hash for ProviderIdentity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            ProviderIdentity::Named(n) => {
                0u8.hash(state);
                n.hash(state)
            }
            ProviderIdentity::Object(o) => {
                1u8.hash(state);
                o.hash_code().hash(state)
            }
        }
    }
}

/// A provider that always answers with the same options (no refresh). Useful for tests and
/// for credentials that do not expire.
pub struct StaticProvider {
    id: String,
    options: StorageOptions,
}

impl StaticProvider {
    /// Creates a provider named `id` that always returns `options`.
    pub fn new(id: impl Into<String>, options: StorageOptions) -> Self {
        Self {
            id: id.into(),
            options,
        }
    }
}

impl fmt::Debug for StaticProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticProvider")
            .field("id", &self.id)
            .field("options", &Redacted(&self.options))
            .finish()
    }
}

#[async_trait]
impl StorageOptionsProvider for StaticProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        Ok(Some(self.options.clone()))
    }
    fn provider_id(&self) -> String {
        self.id.clone()
    }
}
