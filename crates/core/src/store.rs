//! Stores handed to users: [`VendedStore`] (a shared [`StoreEntry`] plus a base path, with
//! simple byte-level calls) and [`AuthRetryStore`] (retries once with a fresh credential after
//! the endpoint rejects one).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use crate::cloud::CloudAdapter;
use crate::error::{Error, Result};
use crate::key::StoreKey;
pub use crate::object::ObjectInfo;
use crate::refresh::{RefreshStats, RefresherHandle};
use crate::session::Session;

/// A shared store: the `object_store` store, its credential refresher, and how many
/// [`VendedStore`]s use it. The registry creates entries; when the last `VendedStore` of an
/// entry whose provider has an exact object identity is dropped, `on_last_release` runs (the
/// registry forgets the entry, releasing the provider).
pub struct StoreEntry {
    pub(crate) key: Arc<StoreKey>,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) refresher: Option<Arc<dyn RefresherHandle>>,
    handles: AtomicUsize,
    on_last_release: Option<Box<dyn Fn() + Send + Sync>>,
}

impl StoreEntry {
    pub(crate) fn new(
        key: Arc<StoreKey>,
        store: Arc<dyn ObjectStore>,
        refresher: Option<Arc<dyn RefresherHandle>>,
        on_last_release: Option<Box<dyn Fn() + Send + Sync>>,
    ) -> Self {
        Self {
            key,
            store,
            refresher,
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

/// Wraps a cloud store: when a request fails because the endpoint rejected the credential (as
/// the cloud's adapter judges it), the credential generation that was current is invalidated
/// and the request is retried once with a freshly fetched credential. A rejection that
/// remains is reported as `object_store::Error::Unauthenticated` (kind
/// [`crate::ErrorKind::Credentials`]), for static credentials too.
pub struct AuthRetryStore {
    inner: Arc<dyn ObjectStore>,
    refresher: Option<Arc<dyn RefresherHandle>>,
    adapter: &'static dyn CloudAdapter,
}

impl AuthRetryStore {
    /// Wraps `inner`, whose credentials come from `refresher` (none: static credentials, no
    /// retry) and whose rejections `adapter` recognises.
    pub fn new(
        inner: Arc<dyn ObjectStore>,
        refresher: Option<Arc<dyn RefresherHandle>>,
        adapter: &'static dyn CloudAdapter,
    ) -> Self {
        Self {
            inner,
            refresher,
            adapter,
        }
    }

    /// The generation to invalidate if the endpoint rejects the request about to be sent.
    fn generation(&self) -> u64 {
        self.refresher.as_ref().map_or(0, |r| r.generation())
    }

    /// After a rejection: invalidates `generation` and says whether a retry makes sense.
    fn invalidate(&self, generation: u64) -> bool {
        match &self.refresher {
            Some(r) => {
                r.invalidate(generation);
                true
            }
            None => false,
        }
    }

    /// After the one retry of a rejected request: tells the refresher whether the credential
    /// that signed the retry (generation `retried`) was accepted, so that an endpoint rejecting
    /// every freshly vended credential is backed off rather than asked again per request.
    fn report_retry(&self, retried: u64, result: &object_store::Result<impl Sized>) {
        if let Some(r) = &self.refresher {
            let rejected = matches!(result, Err(e) if self.adapter.is_auth_failure(e));
            r.report_auth_retry(retried, !rejected);
        }
    }

    fn parts(&self) -> RetryParts {
        RetryParts {
            inner: self.inner.clone(),
            refresher: self.refresher.clone(),
            adapter: self.adapter,
        }
    }

    /// Reports a remaining rejection as `Unauthenticated`.
    fn classify(&self, e: object_store::Error) -> object_store::Error {
        classify(self.adapter, e)
    }
}

fn classify(adapter: &dyn CloudAdapter, e: object_store::Error) -> object_store::Error {
    match e {
        object_store::Error::Unauthenticated { .. }
        | object_store::Error::PermissionDenied { .. } => e,
        e if adapter.is_auth_failure(&e) => object_store::Error::Unauthenticated {
            path: String::new(),
            source: Box::new(e),
        },
        e => e,
    }
}

/// What a retrying stream needs of an [`AuthRetryStore`], owned (streams are `'static`).
#[derive(Clone)]
struct RetryParts {
    inner: Arc<dyn ObjectStore>,
    refresher: Option<Arc<dyn RefresherHandle>>,
    adapter: &'static dyn CloudAdapter,
}

impl RetryParts {
    fn generation(&self) -> u64 {
        self.refresher.as_ref().map_or(0, |r| r.generation())
    }

    /// Invalidates `generation` if `e` is an auth failure; says whether a retry makes sense.
    fn invalidate_on(&self, e: &object_store::Error, generation: u64) -> bool {
        match &self.refresher {
            Some(r) if self.adapter.is_auth_failure(e) => {
                r.invalidate(generation);
                true
            }
            _ => false,
        }
    }

    /// Deletes `paths` (one request for one key); once more after an auth failure.
    async fn delete_chunk(&self, paths: Vec<Path>) -> Vec<object_store::Result<Path>> {
        if paths.is_empty() {
            return Vec::new();
        }
        let run = |paths: Vec<Path>| {
            self.inner
                .delete_stream(futures::stream::iter(paths.into_iter().map(Ok)).boxed())
                .collect::<Vec<_>>()
        };
        let generation = self.generation();
        let mut results = run(paths.clone()).await;
        let rejected = results.iter().find_map(|r| r.as_ref().err());
        if let Some(e) = rejected {
            if self.invalidate_on(e, generation) {
                log::debug!(
                    "delete rejected by the endpoint ({e}); retrying once with a fresh credential"
                );
                results = run(paths).await;
            }
        }
        let adapter = self.adapter;
        results
            .into_iter()
            .map(|r| r.map_err(|e| classify(adapter, e)))
            .collect()
    }

    /// A listing retried once when its first page is rejected (nothing was yielded yet); a
    /// rejection later in the listing invalidates the credential so the next request refetches.
    fn list_with_retry(
        self,
        open: impl Fn(&Arc<dyn ObjectStore>) -> BoxStream<'static, object_store::Result<ObjectMeta>>
            + Send
            + 'static,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let generation = self.generation();
        let mut first = open(&self.inner);
        futures::stream::once(async move {
            let listing = match first.next().await {
                Some(Err(e)) if self.invalidate_on(&e, generation) => {
                    log::debug!(
                        "list rejected by the endpoint ({e}); retrying once with a fresh credential"
                    );
                    open(&self.inner)
                }
                Some(item) => futures::stream::once(async move { item })
                    .chain(first)
                    .boxed(),
                None => futures::stream::empty().boxed(),
            };
            let generation = self.generation();
            listing.map_err(move |e| {
                self.invalidate_on(&e, generation);
                classify(self.adapter, e)
            })
        })
        .flatten()
        .boxed()
    }
}

impl fmt::Debug for AuthRetryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthRetryStore")
            .field("inner", &self.inner)
            .field(
                "provider",
                &self.refresher.as_ref().map(|r| r.provider_id().to_string()),
            )
            .finish()
    }
}

impl fmt::Display for AuthRetryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AuthRetry({})", self.inner)
    }
}

/// Runs `$call` (an expression using `self.inner`); on an auth failure invalidates the
/// generation that was current and runs it once more.
macro_rules! with_auth_retry {
    ($self:ident, $call:expr) => {{
        let generation = $self.generation();
        match $call.await {
            Err(e) if $self.adapter.is_auth_failure(&e) && $self.invalidate(generation) => {
                log::debug!(
                    "request rejected by the endpoint ({e}); retrying once with a fresh credential"
                );
                let result = $call.await;
                $self.report_retry($self.generation(), &result);
                result.map_err(|e| $self.classify(e))
            }
            other => other.map_err(|e| $self.classify(e)),
        }
    }};
}

#[async_trait]
impl ObjectStore for AuthRetryStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        with_auth_retry!(
            self,
            self.inner.put_opts(location, payload.clone(), opts.clone())
        )
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        with_auth_retry!(self, self.inner.put_multipart_opts(location, opts.clone()))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        with_auth_retry!(self, self.inner.get_opts(location, options.clone()))
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        with_auth_retry!(self, self.inner.get_ranges(location, ranges))
    }

    /// Deletes in chunks of up to 1,000 keys (the inner store decides how: one `DELETE` per
    /// single key, a bulk request for more); a chunk with an auth failure among its results is
    /// sent once more, whole, after the credential is invalidated (deleting is idempotent).
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let retry = self.parts();
        locations
            .try_chunks(1_000)
            .map(move |chunk| {
                let retry = retry.clone();
                async move {
                    let (paths, error) = match chunk {
                        Ok(paths) => (paths, None),
                        Err(futures::stream::TryChunksError(paths, e)) => (paths, Some(e)),
                    };
                    let mut results = retry.delete_chunk(paths).await;
                    results.extend(error.map(Err));
                    futures::stream::iter(results)
                }
            })
            .buffered(10)
            .flatten()
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let prefix = prefix.cloned();
        self.parts()
            .list_with_retry(move |inner| inner.list(prefix.as_ref()))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let prefix = prefix.cloned();
        let offset = offset.clone();
        self.parts()
            .list_with_retry(move |inner| inner.list_with_offset(prefix.as_ref(), &offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        with_auth_retry!(self, self.inner.list_with_delimiter(prefix))
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        with_auth_retry!(self, self.inner.copy_opts(from, to, options.clone()))
    }

    // `rename_opts`: the trait's default, `copy_opts` then `delete` through this store, each
    // retried on its own (retrying a whole rename would fail its second copy in create mode).
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

    /// Reads a whole object.
    ///
    /// # Errors
    /// Not found, permission/credential, provider and I/O errors (see [`Error`]).
    pub async fn get(&self, path: &str) -> Result<Bytes> {
        let p = self.path(path)?;
        Ok(self.entry.store.get(&p).await?.bytes().await?)
    }

    /// Reads bytes `range` (start inclusive, end exclusive) of an object.
    ///
    /// # Errors
    /// As [`get`](Self::get); an empty or inverted range is [`Error::InvalidOption`].
    pub async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        if range.start >= range.end {
            return Err(Error::invalid_option(
                "range",
                format!("start {} must be below end {}", range.start, range.end),
            ));
        }
        let p = self.path(path)?;
        let session = self.session.as_ref().filter(|s| s.caches_range(&range));
        if let Some(s) = session {
            if let Some(bytes) = s.cached_range(&self.entry.key, p.as_ref(), range.clone()) {
                return Ok(bytes);
            }
        }
        let bytes = self.entry.store.get_range(&p, range.clone()).await?;
        if let Some(s) = session {
            s.put_range(&self.entry.key, p.as_ref(), range, bytes.clone());
        }
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

    /// The credential refresher, or `None` for stores without a provider.
    pub fn refresher(&self) -> Option<&Arc<dyn RefresherHandle>> {
        self.entry.refresher.as_ref()
    }
}
