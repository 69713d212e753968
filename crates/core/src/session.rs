//! Session caches: object metadata (`head`) and small byte ranges (`get_range`), shared by the
//! stores a process opens.
//!
//! Entries hold **portable data only** (bytes, metadata), never a store handle or anything
//! bound to a credential, so a rotation can never leave a cached reader on expired
//! credentials. They are keyed by the full [`StoreKey`] (which includes the credential source,
//! so one table's cached bytes never answer another table's reads) plus the object path (and
//! range). Writes and deletes through a store drop that path's entries.

use std::fmt;
use std::hash::Hash;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use moka::notification::RemovalCause;
use moka::sync::Cache;

use crate::error::{Error, Result};
use crate::key::StoreKey;
use crate::object::ObjectInfo;

/// Session cache settings.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Most metadata entries kept. Default 100,000.
    pub metadata_capacity: u64,
    /// Most bytes of cached ranges kept (sum of range lengths). Default 64 MiB.
    pub range_capacity_bytes: u64,
    /// Ranges longer than this many bytes are never cached. Default 1 MiB.
    pub max_range_bytes: u64,
    /// How long an entry lives after it was written. Default 5 minutes.
    pub ttl: Duration,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            metadata_capacity: 100_000,
            range_capacity_bytes: 64 << 20,
            max_range_bytes: 1 << 20,
            ttl: Duration::from_secs(300),
        }
    }
}

/// Hit, miss and eviction counts of a session (both caches together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that went to the store.
    pub misses: u64,
    /// Entries removed for capacity or TTL (not explicit invalidations).
    pub evictions: u64,
    /// Entries now held (approximate).
    pub entries: u64,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct EntryKey {
    store: Arc<StoreKey>,
    /// `scheme://authority/path`, for prefix invalidation.
    uri: Arc<str>,
    range: Option<(u64, u64)>,
}

impl fmt::Debug for EntryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uri)?;
        if let Some((s, e)) = self.range {
            write!(f, "[{s}..{e})")?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: Arc<AtomicU64>,
}

/// Caches shared by the stores opened with it. Create one per process (or per job) and pass it
/// to [`crate::VendedStore::with_session`].
pub struct Session {
    metadata: Cache<EntryKey, ObjectInfo>,
    ranges: Cache<EntryKey, Bytes>,
    config: SessionConfig,
    counters: Counters,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish()
    }
}

fn counting_listener<V>(
    evictions: Arc<AtomicU64>,
) -> impl Fn(Arc<EntryKey>, V, RemovalCause) + Send + Sync + 'static {
    move |_k, _v, cause| {
        if matches!(cause, RemovalCause::Expired | RemovalCause::Size) {
            evictions.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Session {
    /// A session with `config`.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when a capacity or the TTL is zero.
    pub fn new(config: SessionConfig) -> Result<Self> {
        if config.metadata_capacity == 0 || config.range_capacity_bytes == 0 || config.ttl.is_zero()
        {
            return Err(Error::invalid_option(
                "session",
                "metadata_capacity, range_capacity_bytes and ttl must be greater than zero",
            ));
        }
        let counters = Counters::default();
        let metadata = Cache::builder()
            .max_capacity(config.metadata_capacity)
            .time_to_live(config.ttl)
            .support_invalidation_closures()
            .eviction_listener(counting_listener(counters.evictions.clone()))
            .build();
        let ranges = Cache::builder()
            .max_capacity(config.range_capacity_bytes)
            .weigher(|_k: &EntryKey, v: &Bytes| v.len().try_into().unwrap_or(u32::MAX))
            .time_to_live(config.ttl)
            .support_invalidation_closures()
            .eviction_listener(counting_listener(counters.evictions.clone()))
            .build();
        Ok(Self {
            metadata,
            ranges,
            config,
            counters,
        })
    }

    /// The settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    fn key(store: &Arc<StoreKey>, full_path: &str, range: Option<Range<u64>>) -> EntryKey {
        EntryKey {
            store: store.clone(),
            uri: format!("{}/{}", store.root(), full_path).into(),
            range: range.map(|r| (r.start, r.end)),
        }
    }

    fn count<T>(&self, found: Option<T>) -> Option<T> {
        let counter = if found.is_some() {
            &self.counters.hits
        } else {
            &self.counters.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    pub(crate) fn cached_head(&self, store: &Arc<StoreKey>, path: &str) -> Option<ObjectInfo> {
        self.count(self.metadata.get(&Self::key(store, path, None)))
    }

    pub(crate) fn put_head(&self, store: &Arc<StoreKey>, path: &str, info: ObjectInfo) {
        self.metadata.insert(Self::key(store, path, None), info);
    }

    /// Whether a range of this length is cached at all.
    pub(crate) fn caches_range(&self, range: &Range<u64>) -> bool {
        range.end - range.start <= self.config.max_range_bytes
    }

    pub(crate) fn cached_range(
        &self,
        store: &Arc<StoreKey>,
        path: &str,
        range: Range<u64>,
    ) -> Option<Bytes> {
        self.count(self.ranges.get(&Self::key(store, path, Some(range))))
    }

    pub(crate) fn put_range(
        &self,
        store: &Arc<StoreKey>,
        path: &str,
        range: Range<u64>,
        bytes: Bytes,
    ) {
        self.ranges
            .insert(Self::key(store, path, Some(range)), bytes);
    }

    /// Drops every entry of one object of one store (after a write or delete through it).
    pub(crate) fn forget_object(&self, store: &Arc<StoreKey>, path: &str) {
        self.metadata.invalidate(&Self::key(store, path, None));
        let uri = Self::key(store, path, None).uri;
        let store = store.clone();
        // Predicates are only rejected when invalidation closures are unsupported, which
        // `new` always enables.
        let _ = self
            .ranges
            .invalidate_entries_if(move |k, _| k.store == store && k.uri == uri);
    }

    /// Drops exactly the entries whose URI is `uri_prefix` or lies under it as a path prefix
    /// (`s3://bucket/t1` drops `s3://bucket/t1/...` but not `s3://bucket/t10/...`), for every
    /// store.
    ///
    /// # Errors
    /// [`Error::InvalidUri`] for an empty prefix (use [`invalidate_all`](Self::invalidate_all)).
    pub fn invalidate(&self, uri_prefix: &str) -> Result<()> {
        if uri_prefix.is_empty() {
            return Err(Error::InvalidUri {
                uri: String::new(),
                message: "an invalidation prefix must not be empty".into(),
            });
        }
        let dir: Arc<str> = if uri_prefix.ends_with('/') {
            uri_prefix.into()
        } else {
            format!("{uri_prefix}/").into()
        };
        let exact: Arc<str> = uri_prefix.trim_end_matches('/').into();
        let matches = move |k: &EntryKey| k.uri.starts_with(&*dir) || k.uri == exact;
        let m2 = matches.clone();
        let _ = self.metadata.invalidate_entries_if(move |k, _| matches(k));
        let _ = self.ranges.invalidate_entries_if(move |k, _| m2(k));
        Ok(())
    }

    /// Drops every entry.
    pub fn invalidate_all(&self) {
        self.metadata.invalidate_all();
        self.ranges.invalidate_all();
    }

    /// Hits, misses, evictions and the number of entries.
    pub fn stats(&self) -> SessionStats {
        self.metadata.run_pending_tasks();
        self.ranges.run_pending_tasks();
        SessionStats {
            hits: self.counters.hits.load(Ordering::Relaxed),
            misses: self.counters.misses.load(Ordering::Relaxed),
            evictions: self.counters.evictions.load(Ordering::Relaxed),
            entries: self.metadata.entry_count() + self.ranges.entry_count(),
        }
    }
}
