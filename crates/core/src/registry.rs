//! The object-store registry: shares stores (and their credential refreshers) between opens
//! whose [`StoreKey`] is equal (see [`crate::key`] for what a key holds).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use once_cell::sync::Lazy;

use crate::access::{AccessMode, ReadOnlyStore};
use crate::cloud::{adapter_for, CloudAdapter};
use crate::error::{Error, Result};
pub use crate::key::{CredentialSource, StoreKey};
use crate::options::{parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS};
use crate::provider::{ProviderIdentity, StorageOptionsProvider};
use crate::refresh::{Clock, RefreshConfig, SystemClock};
use crate::store::{AuthRetryStore, StoreEntry, VendedStore};
use crate::uri::{parse_store_uri, StoreUri};

/// Registry settings.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Entries unused for this long are dropped (stores still open stay valid). Default 10 min.
    pub time_to_idle: Duration,
    /// Most entries kept. Default 1,000.
    pub max_capacity: u64,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            time_to_idle: Duration::from_secs(600),
            max_capacity: 1_000,
        }
    }
}

/// Hands out shared stores by [`StoreKey`].
#[derive(Clone)]
pub struct ObjectStoreRegistry {
    cache: Cache<StoreKey, Arc<StoreEntry>>,
}

impl fmt::Debug for ObjectStoreRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreRegistry")
            .field("entries", &self.cache.entry_count())
            .finish()
    }
}

static GLOBAL: Lazy<ObjectStoreRegistry> =
    Lazy::new(|| ObjectStoreRegistry::new(RegistryConfig::default()));

impl ObjectStoreRegistry {
    /// A registry with `config`.
    pub fn new(config: RegistryConfig) -> Self {
        Self {
            cache: Cache::builder()
                .max_capacity(config.max_capacity)
                .time_to_idle(config.time_to_idle)
                .build(),
        }
    }

    /// The process-wide registry (used by the JNI binding).
    pub fn global() -> &'static ObjectStoreRegistry {
        &GLOBAL
    }

    /// Opens `uri` with `options`: returns a store sharing the cached entry of an equal key, or
    /// builds one. With a `provider`, `options` seed its credential cache (no provider call at
    /// open); when the entry exists already, newer credentials in `options` are adopted.
    /// `refresh` applies when the entry is created (an existing entry keeps its settings).
    ///
    /// Options are checked before anything is built or shared, by the cloud's
    /// [`CloudAdapter::validate`] (the same rules its credential mapper applies to a provider's
    /// answers). An `expires_at_millis` already in the past is an error without a provider; with
    /// one, the expired seed is not used and the first request fetches.
    ///
    /// The [`ACCESS_MODE`](crate::options::ACCESS_MODE) option (`read` / `read_write`, default
    /// `read_write`) is taken out of `options` and becomes part of the store's key; a `read`
    /// store refuses writes (see [`crate::access`]).
    ///
    /// # Errors
    /// [`Error::InvalidUri`] for a bad URI; [`Error::InvalidOption`] naming the key for bad
    /// options (an `access_mode` other than `read` or `read_write`, unknown or misspelled `aws_`
    /// key, a credential with control characters, a bad endpoint URL or region, partial
    /// credential, bad `expires_at_millis` (with or without a provider), expired static
    /// credentials, an S3 store with neither credentials nor a provider nor
    /// `aws_skip_signature=true`).
    pub fn open(
        &self,
        uri: &str,
        mut options: StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<VendedStore> {
        let access = AccessMode::take_from(&mut options)?.unwrap_or_default();
        let parsed = parse_store_uri(uri)?;
        let adapter = adapter_for(parsed.scheme)?;
        // The same rules the cloud's credential mapper applies to a provider's answers.
        adapter.validate(&options)?;
        if let Some(v) = options.get(EXPIRES_AT_MILLIS) {
            // Validated for static options too: a bad expiry is never "never expires".
            let exp = parse_expires_at_millis(v)?;
            // Static credentials that already expired can never work: say so now, worded like
            // the refresher's rejection of a provider answer. With a provider an expired seed
            // is simply not used: the first request fetches fresh credentials.
            let now = SystemClock.now_millis();
            if provider.is_none() && exp <= now {
                return Err(Error::invalid_option(
                    EXPIRES_AT_MILLIS,
                    format!(
                        "expired credentials: expires_at_millis={exp} is {} ms in the past (static options without a provider are never refreshed)",
                        now - exp
                    ),
                ));
            }
        }
        let key =
            StoreKey::new(&parsed, &options, provider.as_deref(), adapter).with_access(access);
        let mut created = false;
        let entry = self
            .cache
            .try_get_with(key.clone(), || {
                created = true;
                self.build_entry(key, adapter, &parsed, &options, provider, refresh)
            })
            .map_err(|e| (*e).clone())?;
        if !created {
            if let Some(r) = &entry.refresher {
                r.offer(options);
            }
        }
        entry.acquire_handle();
        Ok(VendedStore {
            entry,
            base: parsed.base,
            uri: crate::uri::printable_uri(uri),
            session: None,
        })
    }

    fn build_entry(
        &self,
        key: StoreKey,
        adapter: &'static dyn CloudAdapter,
        uri: &StoreUri,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<Arc<StoreEntry>> {
        let built = adapter.build(uri, options, provider, refresh)?;
        let mut store: Arc<dyn object_store::ObjectStore> = Arc::new(AuthRetryStore::new(
            built.store,
            built.refresher.clone(),
            adapter,
        ));
        let mut multipart = built.multipart;
        if !key.access.allows_writes() {
            // Outermost: a refused write reaches neither the refresher nor the endpoint.
            let root = key.root();
            store = Arc::new(ReadOnlyStore::new(store, root.clone()));
            multipart = multipart.map(|m| ReadOnlyStore::multipart(m, root));
        }
        let key = Arc::new(key);
        // Nobody else can ask for an exact provider object once its last store is closed: drop
        // the entry then, so the provider (a Java global reference) is released at once. moka
        // keeps removed values until its pending tasks run, so run them.
        let on_last_release: Option<Box<dyn Fn() + Send + Sync>> = match &key.source {
            CredentialSource::Provider(ProviderIdentity::Object(_)) => {
                let cache = self.cache.clone();
                let key = key.clone();
                Some(Box::new(move || {
                    cache.invalidate(&*key);
                    cache.run_pending_tasks();
                }))
            }
            _ => None,
        };
        Ok(Arc::new(StoreEntry::new(
            key,
            store,
            multipart,
            built.refresher,
            built.counters,
            on_last_release,
        )))
    }

    /// Drops every entry (open stores stay valid).
    pub fn clear(&self) {
        self.cache.invalidate_all();
        self.cache.run_pending_tasks();
    }

    /// How many entries the registry holds now.
    pub fn len(&self) -> u64 {
        self.cache.run_pending_tasks();
        self.cache.entry_count()
    }

    /// Whether the registry holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
