//! [`AuthRetryStore`]: retries a request once with a fresh credential after the endpoint
//! rejected the one it was signed with, and reports the outcome to the refresher.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use super::list_resume;
use crate::cloud::CloudAdapter;
use crate::refresh::RefresherHandle;

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

    /// Whether generation `generation` expired in flight (see
    /// [`RefresherHandle::expired_in_flight`]); never for static credentials.
    fn expired_in_flight(&self, generation: u64) -> bool {
        self.refresher
            .as_ref()
            .is_some_and(|r| r.expired_in_flight(generation))
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

    /// A listing of `prefix` (after `offset`, if given) retried once when its first page is
    /// rejected, and resumed after the last key it yielded when a page's body is lost (see
    /// [`list_resume`]).
    fn listing(
        &self,
        prefix: Option<&Path>,
        offset: Option<Path>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let prefix = prefix.cloned();
        let parts = self.parts();
        list_resume::resumable(offset, move |offset| {
            let prefix = prefix.clone();
            parts.clone().list_with_retry(move |inner| match &offset {
                None => inner.list(prefix.as_ref()),
                Some(offset) => inner.list_with_offset(prefix.as_ref(), offset),
            })
        })
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

/// Reports a rejection `adapter` recognises as `Unauthenticated` (kind
/// [`crate::ErrorKind::Credentials`]); other errors unchanged.
pub(crate) fn classify(adapter: &dyn CloudAdapter, e: object_store::Error) -> object_store::Error {
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
pub(super) struct RetryParts {
    pub(super) inner: Arc<dyn ObjectStore>,
    refresher: Option<Arc<dyn RefresherHandle>>,
    pub(super) adapter: &'static dyn CloudAdapter,
}

impl RetryParts {
    pub(super) fn generation(&self) -> u64 {
        self.refresher.as_ref().map_or(0, |r| r.generation())
    }

    /// After the one retry of a rejected request: tells the refresher whether the credential
    /// that signed it (the generation current now) was accepted.
    pub(super) fn report_retry(&self, result: &object_store::Result<impl Sized>) {
        if let Some(r) = &self.refresher {
            let rejected = matches!(result, Err(e) if self.adapter.is_auth_failure(e));
            r.report_auth_retry(r.generation(), !rejected);
        }
    }

    /// Invalidates `generation` if `e` is an auth failure; says whether a retry makes sense.
    pub(super) fn invalidate_on(&self, e: &object_store::Error, generation: u64) -> bool {
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

/// Retries after a rejection whose credential merely expired in flight (see
/// [`RefresherHandle::expired_in_flight`]), beyond the one retry every rejection gets.
const MAX_EXPIRED_IN_FLIGHT_RETRIES: u32 = 2;

/// Runs `$call` (an expression using `self.inner`); on an auth failure invalidates the
/// generation that was current and runs it once more. When that retry is rejected too but its
/// credential had expired by the time the answer came (the request spent longer in flight than
/// the credential had left), it runs again with a fresh credential, at most
/// [`MAX_EXPIRED_IN_FLIGHT_RETRIES`] more times; any other rejection of the retry is reported to
/// the refresher as a rejected fresh credential.
macro_rules! with_auth_retry {
    ($self:ident, $call:expr) => {{
        let generation = $self.generation();
        match $call.await {
            Err(e) if $self.adapter.is_auth_failure(&e) && $self.invalidate(generation) => {
                log::debug!(
                    "request rejected by the endpoint ({e}); retrying once with a fresh credential"
                );
                // Read before each call, not after its answer (by which time a background
                // refresh may have replaced it): the generation that signs the call is this one
                // or a newer one, so "expired in flight" errs only towards one more retry.
                let mut signed = $self.generation();
                let mut result = $call.await;
                for _ in 0..MAX_EXPIRED_IN_FLIGHT_RETRIES {
                    match &result {
                        Err(e) if $self.adapter.is_auth_failure(e) && $self.expired_in_flight(signed) => {
                            log::debug!(
                                "the retry's credential (generation {signed}) expired in flight ({e}); retrying with a fresh one"
                            );
                            signed = $self.generation();
                            result = $call.await;
                        }
                        _ => break,
                    }
                }
                $self.parts().report_retry(&result);
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
        let mut result = with_auth_retry!(self, self.inner.get_opts(location, options.clone()))?;
        if self.refresher.is_some() {
            super::body_retry::retry_body(&mut result, self.parts(), location, options);
        }
        Ok(result)
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
        self.listing(prefix, None)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listing(prefix, Some(offset.clone()))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        with_auth_retry!(
            self,
            list_resume::list_with_delimiter(|| self.inner.list_with_delimiter(prefix))
        )
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
