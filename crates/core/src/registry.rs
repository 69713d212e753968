//! The object-store registry: shares stores (and their credential refreshers) between opens
//! whose [`StoreKey`] is equal.
//!
//! A key holds everything that decides *who* may read *what*: scheme, bucket (or root),
//! the non-credential options (endpoint, region...), and the credential source: the provider's
//! identity, or for static credentials a keyed fingerprint of them. Secrets never appear in a
//! key or its `Debug`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use object_store::aws::AwsCredential;
use object_store::ObjectStore;
use once_cell::sync::Lazy;

use crate::cloud::aws::{aws_credential_from_options, aws_mapper, build_s3_store, AwsCredentials};
use crate::error::{Error, Result};
use crate::options::{
    is_credential_key, parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS,
};
use crate::provider::{ProviderIdentity, StorageOptionsProvider};
use crate::refresh::{CredentialRefresher, RefreshConfig, SystemClock};
use crate::store::{AuthRetryStore, VendedStore};
use crate::uri::{parse_store_uri, Scheme};

/// Where a store's credentials come from, as far as cache identity is concerned.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum CredentialSource {
    /// No credentials (local files, memory, unsigned requests).
    None,
    /// Static credentials, by a keyed fingerprint (SipHash with a per-process random key) of
    /// the key id, secret and token. Rotated static keys get a new store.
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
    /// Bucket (S3), root directory (file) or name (memory).
    pub authority: String,
    /// Non-credential options, sorted by key.
    pub options: Vec<(String, String)>,
    /// The credential source.
    pub source: CredentialSource,
}

impl fmt::Debug for StoreKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreKey")
            .field("scheme", &self.scheme.as_str())
            .field("authority", &self.authority)
            .field("options", &self.options)
            .field("source", &self.source)
            .finish()
    }
}

static FINGERPRINT_KEY: Lazy<(u64, u64)> = Lazy::new(|| (rand::random(), rand::random()));

/// A keyed fingerprint of the credential options (never reversible to the secret; the key is
/// random per process).
fn fingerprint(options: &StorageOptions) -> u64 {
    let mut creds: Vec<(&String, &String)> = options
        .iter()
        .filter(|(k, _)| is_credential_key(k))
        .collect();
    creds.sort();
    let (k0, k1) = *FINGERPRINT_KEY;
    let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
    creds.hash(&mut h);
    h.finish()
}

/// A shared store: the `object_store`, its refresher, and how many [`VendedStore`]s use it.
pub struct StoreEntry {
    pub(crate) key: Arc<StoreKey>,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) refresher: Option<CredentialRefresher<AwsCredential>>,
    handles: AtomicUsize,
    cache: Cache<StoreKey, Arc<StoreEntry>>,
}

impl StoreEntry {
    pub(crate) fn release_handle(&self) {
        let exact = matches!(
            self.key.source,
            CredentialSource::Provider(ProviderIdentity::Object(_))
        );
        if self.handles.fetch_sub(1, Ordering::AcqRel) == 1 && exact {
            // Nobody else can ask for this exact provider object once its last store is closed:
            // drop the entry so the provider (a Java global reference) is released now. moka
            // keeps removed values until its pending tasks run, so run them.
            self.cache.invalidate(&*self.key);
            self.cache.run_pending_tasks();
        }
    }
}

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
    /// # Errors
    /// [`Error::InvalidUri`] for a bad URI; [`Error::InvalidOption`] for bad options (unknown
    /// `aws_` key, partial credential, bad `expires_at_millis` (with or without a provider), an
    /// S3 store with neither
    /// credentials nor a provider nor `aws_skip_signature=true`).
    pub fn open(
        &self,
        uri: &str,
        options: StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<VendedStore> {
        let parsed = parse_store_uri(uri)?;
        if let Some(v) = options.get(EXPIRES_AT_MILLIS) {
            // Validated for static options too: a bad expiry is never "never expires".
            parse_expires_at_millis(v)?;
        }
        let source = match (&provider, parsed.scheme) {
            (Some(p), _) => CredentialSource::Provider(p.identity()),
            (None, Scheme::S3) if options.keys().any(|k| is_credential_key(k)) => {
                CredentialSource::Static(fingerprint(&options))
            }
            (None, _) => CredentialSource::None,
        };
        let mut non_secret: Vec<(String, String)> = options
            .iter()
            .filter(|(k, _)| !is_credential_key(k))
            .map(|(k, v)| {
                // A secret that configures the data (an SSE-C key) decides identity too, but
                // only as a keyed fingerprint: secrets never appear in a key or its Debug.
                if crate::options::is_secret_key(k) {
                    let (k0, k1) = *FINGERPRINT_KEY;
                    let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
                    v.hash(&mut h);
                    (k.clone(), format!("fingerprint:{:016x}", h.finish()))
                } else {
                    (k.clone(), v.clone())
                }
            })
            .collect();
        non_secret.sort();
        let key = StoreKey {
            scheme: parsed.scheme,
            authority: parsed.authority.clone(),
            options: non_secret,
            source,
        };
        let mut created = false;
        let entry = self
            .cache
            .try_get_with(key.clone(), || {
                created = true;
                self.build_entry(key, &parsed.authority, &options, provider, refresh)
            })
            .map_err(|e| (*e).clone())?;
        if !created {
            if let Some(r) = &entry.refresher {
                r.offer(options);
            }
        }
        entry.handles.fetch_add(1, Ordering::AcqRel);
        Ok(VendedStore {
            entry,
            base: parsed.base,
            uri: uri.to_string(),
            session: None,
        })
    }

    fn build_entry(
        &self,
        key: StoreKey,
        authority: &str,
        options: &StorageOptions,
        provider: Option<Arc<dyn StorageOptionsProvider>>,
        refresh: RefreshConfig,
    ) -> Result<Arc<StoreEntry>> {
        let (store, refresher): (Arc<dyn ObjectStore>, _) = match key.scheme {
            Scheme::S3 => {
                let skip = options
                    .get("aws_skip_signature")
                    .map(|v| crate::options::parse_bool("aws_skip_signature", v))
                    .transpose()?
                    .unwrap_or(false);
                match provider {
                    Some(p) => {
                        let refresher = CredentialRefresher::new(
                            p,
                            options.clone(),
                            aws_mapper(),
                            refresh,
                            Arc::new(SystemClock),
                        )?;
                        let s3 = build_s3_store(authority, options, AwsCredentials::Refreshing(refresher.clone()))?;
                        (Arc::new(AuthRetryStore::new(s3, refresher.clone())), Some(refresher))
                    }
                    None if options.keys().any(|k| is_credential_key(k)) => {
                        let c = aws_credential_from_options(options)?;
                        (build_s3_store(authority, options, AwsCredentials::Static(c))?, None)
                    }
                    None if skip => (build_s3_store(authority, options, AwsCredentials::None)?, None),
                    None => {
                        return Err(Error::invalid_option(
                            "aws_access_key_id",
                            "an S3 store needs credentials (aws_access_key_id and aws_secret_access_key), a provider, or aws_skip_signature=true",
                        ))
                    }
                }
            }
            Scheme::File => {
                std::fs::create_dir_all(authority).map_err(|e| Error::InvalidUri {
                    uri: format!("file://{authority}"),
                    message: format!("cannot create the directory: {e}"),
                })?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(authority).map_err(
                    |e| Error::InvalidUri {
                        uri: format!("file://{authority}"),
                        message: e.to_string(),
                    },
                )?;
                (Arc::new(fs), None)
            }
            Scheme::Memory => (Arc::new(object_store::memory::InMemory::new()), None),
        };
        Ok(Arc::new(StoreEntry {
            key: Arc::new(key),
            store,
            refresher,
            handles: AtomicUsize::new(0),
            cache: self.cache.clone(),
        }))
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
