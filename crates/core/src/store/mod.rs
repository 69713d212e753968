//! Stores handed to users: [`VendedStore`] (a shared [`StoreEntry`] plus a base path, with
//! simple byte-level calls) and [`AuthRetryStore`] (retries once with a fresh credential after
//! the endpoint rejects one).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::TryStreamExt;
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt, PutPayload};

use crate::cloud::requests::{RequestCounters, RequestStats};
use crate::error::{Error, Result};
use crate::key::StoreKey;
pub use crate::object::ObjectInfo;
use crate::refresh::{RefreshStats, RefresherHandle};
use crate::session::Session;

mod auth_retry;
mod body_retry;
mod checked;
mod list_resume;
#[cfg(test)]
mod retry_tests;

pub(crate) use auth_retry::classify;
pub use auth_retry::AuthRetryStore;

/// A shared store: the `object_store` store, its credential refresher, and how many
/// [`VendedStore`]s use it. The registry creates entries; when the last `VendedStore` of an
/// entry whose provider has an exact object identity is dropped, `on_last_release` runs (the
/// registry forgets the entry, releasing the provider).
pub struct StoreEntry {
    pub(crate) key: Arc<StoreKey>,
    pub(crate) store: Arc<dyn ObjectStore>,
    /// The store's multipart API with upload ids (see [`crate::cloud::CloudStore::multipart`]);
    /// not wrapped for auth retries: the writer retries its parts itself.
    pub(crate) multipart: Option<Arc<dyn MultipartStore>>,
    pub(crate) refresher: Option<Arc<dyn RefresherHandle>>,
    pub(crate) counters: Arc<RequestCounters>,
    /// Whether the endpoint honours create-only PUTs, probed before the store's first commit
    /// (`VendedStore::put_commit`); unset until then.
    pub(crate) create_only_honoured: tokio::sync::OnceCell<bool>,
    handles: AtomicUsize,
    on_last_release: Option<Box<dyn Fn() + Send + Sync>>,
}

impl StoreEntry {
    pub(crate) fn new(
        key: Arc<StoreKey>,
        store: Arc<dyn ObjectStore>,
        multipart: Option<Arc<dyn MultipartStore>>,
        refresher: Option<Arc<dyn RefresherHandle>>,
        counters: Arc<RequestCounters>,
        on_last_release: Option<Box<dyn Fn() + Send + Sync>>,
    ) -> Self {
        Self {
            key,
            store,
            multipart,
            refresher,
            counters,
            create_only_honoured: tokio::sync::OnceCell::new(),
            handles: AtomicUsize::new(0),
            on_last_release,
        }
    }

    pub(crate) fn acquire_handle(&self) {
        self.handles.fetch_add(1, Ordering::AcqRel);
    }

    fn release_handle(&self) {
        if self.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Some(release) = &self.on_last_release {
                release();
            }
        }
    }
}

/// A store opened from a URI: a shared registry entry (the `object_store` and its credential
/// refresher) plus the URI's prefix. Paths given to its methods are relative to that prefix.
/// Dropping the last `VendedStore` of an entry whose provider has an exact object identity
/// removes that entry from the registry (releasing the provider).
pub struct VendedStore {
    pub(crate) entry: Arc<StoreEntry>,
    pub(crate) base: Path,
    pub(crate) uri: String,
    pub(crate) session: Option<Arc<Session>>,
}

impl fmt::Debug for VendedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VendedStore")
            .field("uri", &self.uri)
            .field("key", &self.entry.key)
            .finish()
    }
}

impl Drop for VendedStore {
    fn drop(&mut self) {
        self.entry.release_handle();
    }
}

impl VendedStore {
    /// Uses `session`'s caches for [`head`](Self::head) and small
    /// [`get_range`](Self::get_range) reads; writes and deletes through this store drop the
    /// object's entries.
    pub fn with_session(mut self, session: Arc<Session>) -> Self {
        self.session = Some(session);
        self
    }

    /// The session this store caches in, if any.
    pub fn session(&self) -> Option<&Arc<Session>> {
        self.session.as_ref()
    }

    /// The underlying `object_store` (shared with every store of the same key), for use with
    /// other `object_store`-based libraries. Its paths are not prefixed.
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        self.entry.store.clone()
    }

    /// The URI this store was opened with.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The store's cache identity (prints no secret).
    pub fn key(&self) -> &StoreKey {
        &self.entry.key
    }

    /// The full path of `relative` under the URI's prefix.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `path`) for an empty path or one with empty, `.` or `..`
    /// segments.
    pub fn path(&self, relative: &str) -> Result<Path> {
        let rel = relative.trim_start_matches('/');
        if rel.is_empty() {
            return Err(Error::invalid_option(
                "path",
                "an object path must not be empty",
            ));
        }
        let rel = Path::parse(rel).map_err(|e| Error::invalid_option("path", e.to_string()))?;
        Ok(self.base.parts().chain(rel.parts()).collect())
    }

    fn prefix(&self, relative: Option<&str>) -> Result<Option<Path>> {
        match relative
            .map(|r| r.trim_matches('/'))
            .filter(|r| !r.is_empty())
        {
            Some(r) => Ok(Some(self.path(r)?)),
            None if self.base.as_ref().is_empty() => Ok(None),
            None => Ok(Some(self.base.clone())),
        }
    }

    fn forget(&self, full: &Path) {
        if let Some(s) = &self.session {
            s.forget_object(&self.entry.key, full.as_ref());
        }
    }

    fn relative(&self, full: &Path) -> String {
        match full.prefix_match(&self.base) {
            Some(parts) => parts
                .map(|p| p.as_ref().to_string())
                .collect::<Vec<_>>()
                .join("/"),
            None => full.to_string(),
        }
    }

    fn info(&self, meta: ObjectMeta) -> ObjectInfo {
        ObjectInfo {
            path: self.relative(&meta.location),
            size: meta.size,
            last_modified_millis: meta.last_modified.timestamp_millis(),
            e_tag: meta.e_tag,
            version: meta.version,
        }
    }

    /// Reads a whole object. With checksums on (option `checksums`, the default), the bytes
    /// are checked against the checksum the service stores for the object, when it returns
    /// one; a mismatch is read once more.
    ///
    /// # Errors
    /// Not found, permission/credential, provider and I/O errors (see [`Error`]);
    /// [`Error::ChecksumMismatch`] (kind `Integrity`) when both reads mismatched.
    pub async fn get(&self, path: &str) -> Result<Bytes> {
        let p = self.path(path)?;
        self.get_checked(&p).await
    }

    /// Reads bytes `range` (start inclusive, end exclusive; a range running past the end is cut
    /// at the end) of an object: [`open_range`](Self::open_range)'s bytes in one buffer.
    ///
    /// # Errors
    /// As [`open_range`](Self::open_range): an empty or inverted range, or one starting at or
    /// past the end of the object, is [`Error::InvalidOption`] (key `range`).
    pub async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        self.open_range(path, range).await?.into_bytes().await
    }

    /// A non-empty range short enough for the session's cache: from the cache, or one GET whose
    /// bytes the cache then keeps.
    pub(crate) async fn get_range_cached(
        &self,
        path: &str,
        range: Range<u64>,
        session: &Session,
    ) -> Result<Bytes> {
        let p = self.path(path)?;
        if let Some(bytes) = session.cached_range(&self.entry.key, p.as_ref(), range.clone()) {
            return Ok(bytes);
        }
        let bytes = self.entry.store.get_range(&p, range.clone()).await?;
        session.put_range(&self.entry.key, p.as_ref(), range, bytes.clone());
        Ok(bytes)
    }

    /// Writes a whole object (atomically replacing any previous one).
    ///
    /// # Errors
    /// Permission/credential, provider and I/O errors.
    pub async fn put(&self, path: &str, data: Bytes) -> Result<()> {
        let p = self.path(path)?;
        // Dropped before and after: a read racing the write cannot re-cache the old bytes
        // for longer than the write takes.
        self.forget(&p);
        let result = self.entry.store.put(&p, PutPayload::from(data)).await;
        self.forget(&p);
        result?;
        Ok(())
    }

    /// Reads an object's metadata.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub async fn head(&self, path: &str) -> Result<ObjectInfo> {
        let p = self.path(path)?;
        if let Some(s) = &self.session {
            if let Some(mut info) = s.cached_head(&self.entry.key, p.as_ref()) {
                // The entry is shared by every store of this key, whatever its prefix: the path
                // it was cached with is relative to the store that read it, not to this one.
                info.path = self.relative(&p);
                return Ok(info);
            }
        }
        let info = self.info(self.entry.store.head(&p).await?);
        if let Some(s) = &self.session {
            s.put_head(&self.entry.key, p.as_ref(), info.clone());
        }
        Ok(info)
    }

    /// Lists every object under `prefix` (relative; `None` for everything under the URI).
    ///
    /// # Errors
    /// Permission/credential, provider and I/O errors.
    pub async fn list(&self, prefix: Option<&str>) -> Result<Vec<ObjectInfo>> {
        let p = self.prefix(prefix)?;
        let metas: Vec<ObjectMeta> = self.entry.store.list(p.as_ref()).try_collect().await?;
        Ok(metas.into_iter().map(|m| self.info(m)).collect())
    }

    /// Deletes an object (deleting a missing object is not an error on S3).
    ///
    /// # Errors
    /// Permission/credential, provider and I/O errors.
    pub async fn delete(&self, path: &str) -> Result<()> {
        let p = self.path(path)?;
        let result = self.entry.store.delete(&p).await;
        self.forget(&p);
        result?;
        Ok(())
    }

    /// The credential refresher's counters, or `None` for stores without a provider.
    pub fn refresh_stats(&self) -> Option<RefreshStats> {
        self.entry.refresher.as_ref().map(|r| r.stats())
    }

    /// The counters of this store's HTTP requests and credential refreshes, shared by every
    /// `VendedStore` of the same registry entry (the same store key); see [`RequestStats`] for
    /// what each counts.
    pub fn stats(&self) -> RequestStats {
        let refreshes = self.refresh_stats().map_or(0, |s| s.fetches);
        self.entry.counters.snapshot(refreshes)
    }

    /// The credential refresher, or `None` for stores without a provider.
    pub fn refresher(&self) -> Option<&Arc<dyn RefresherHandle>> {
        self.entry.refresher.as_ref()
    }
}
