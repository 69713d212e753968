//! One multipart upload of an [`ObjectWriter`](super::ObjectWriter): the parts in flight (at
//! most the writer's concurrency, each retried once with a fresh credential when the endpoint
//! rejects it), the part being filled, and the upload's [`Target`], which completes or aborts
//! it and names it in messages.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartUpload, PutPayload, PutPayloadMut, PutResult};
use tokio::task::JoinSet;

use super::WriteMode;
use crate::cloud::http::condition::{self, Require};
use crate::cloud::CloudAdapter;
use crate::error::{Error, Result};
use crate::refresh::RefresherHandle;
use crate::uri::Scheme;

/// What an upload needs to know about its store, shared by its parts and a background abort.
pub(super) struct Ctx {
    /// The object's full path in the store.
    pub path: Path,
    /// The object's location for messages, e.g. `s3://bucket/path`.
    pub location: String,
    pub scheme: Scheme,
    pub refresher: Option<Arc<dyn RefresherHandle>>,
    pub adapter: Option<&'static dyn CloudAdapter>,
}

impl Ctx {
    /// Runs `call`; when the endpoint rejects the credential it signed with, invalidates that
    /// credential generation and runs `call` once more (signed with a freshly fetched one),
    /// telling the refresher whether the new one was accepted. A rejection that remains is
    /// reported as `Unauthenticated` (kind [`crate::ErrorKind::Credentials`]).
    async fn with_auth_retry<T, F, Fut>(&self, call: F) -> object_store::Result<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = object_store::Result<T>>,
    {
        let rejected = |e: &object_store::Error| self.adapter.is_some_and(|a| a.is_auth_failure(e));
        let generation = self.refresher.as_ref().map_or(0, |r| r.generation());
        let result = match (call().await, &self.refresher) {
            (Err(e), Some(r)) if rejected(&e) => {
                log::debug!(
                    "a multipart request for {} was rejected ({e}); retrying once with a fresh credential",
                    self.location
                );
                r.invalidate(generation);
                let result = call().await;
                r.report_auth_retry(r.generation(), !matches!(&result, Err(e) if rejected(e)));
                result
            }
            (result, _) => result,
        };
        match (result, self.adapter) {
            (Err(e), Some(a)) => Err(crate::store::classify(a, e)),
            (other, _) => other,
        }
    }
}

/// Where an upload's parts go.
#[derive(Clone)]
enum Kind {
    /// The store's multipart API: the upload has an id and can be completed or aborted by it at
    /// any time, from anywhere.
    Ids {
        store: Arc<dyn MultipartStore>,
        id: String,
        /// Each part's id by index, as uploaded.
        parts: Arc<Mutex<Vec<Option<PartId>>>>,
    },
    /// `object_store`'s upload object, for stores without the multipart API (`file://`).
    Upload(Arc<tokio::sync::Mutex<Box<dyn MultipartUpload>>>),
}

/// An upload's identity and the means to complete or abort it; cheap to clone (a background
/// abort keeps one).
#[derive(Clone)]
pub(super) struct Target {
    pub ctx: Arc<Ctx>,
    kind: Kind,
}

impl Target {
    /// Starts an upload: with the store's multipart API when it has one, else through
    /// `object_store`'s upload object from `fallback`.
    pub(super) async fn start(
        ctx: Ctx,
        multipart: Option<Arc<dyn MultipartStore>>,
        fallback: &dyn object_store::ObjectStore,
    ) -> Result<Target> {
        let kind = match multipart {
            Some(store) => {
                let id = ctx
                    .with_auth_retry(|| store.create_multipart(&ctx.path))
                    .await?;
                Kind::Ids {
                    store,
                    id,
                    parts: Arc::default(),
                }
            }
            None => {
                let upload = fallback.put_multipart_opts(&ctx.path, Default::default());
                Kind::Upload(Arc::new(tokio::sync::Mutex::new(upload.await?)))
            }
        };
        Ok(Target {
            ctx: Arc::new(ctx),
            kind,
        })
    }

    /// The upload id, if the store gives one (Azure's is empty: `None`).
    pub(super) fn upload_id(&self) -> Option<&str> {
        match &self.kind {
            Kind::Ids { id, .. } if !id.is_empty() => Some(id),
            _ => None,
        }
    }

    /// Whether aborting removes the uploaded parts: not on Azure, where staged blocks stay
    /// uncommitted until Azure discards them.
    pub(super) fn abort_removes_parts(&self) -> bool {
        self.ctx.scheme != Scheme::Azure
    }

    fn put_part(&self, index: usize, data: PutPayload) -> PartFuture {
        match &self.kind {
            Kind::Ids { store, id, parts } => {
                let (ctx, store, id, parts) =
                    (self.ctx.clone(), store.clone(), id.clone(), parts.clone());
                Box::pin(async move {
                    let part = ctx
                        .with_auth_retry(|| store.put_part(&ctx.path, &id, index, data.clone()))
                        .await?;
                    let mut parts = parts.lock().unwrap_or_else(PoisonError::into_inner);
                    if parts.len() <= index {
                        parts.resize(index + 1, None);
                    }
                    parts[index] = Some(part);
                    Ok(())
                })
            }
            Kind::Upload(upload) => {
                // Uncontended: parts are started only by the writer, never during complete or
                // abort.
                let part = match upload.try_lock() {
                    Ok(mut u) => u.put_part(data),
                    Err(_) => return Box::pin(async { Err(Error::Closed("multipart upload")) }),
                };
                Box::pin(async move { Ok(part.await?) })
            }
        }
    }

    /// An upload started earlier (possibly by another process) with the store's multipart
    /// API, known by its id and the ids of its parts in order.
    pub(super) fn resume(
        ctx: Ctx,
        store: Arc<dyn MultipartStore>,
        id: String,
        parts: Vec<PartId>,
    ) -> Target {
        Target {
            ctx: Arc::new(ctx),
            kind: Kind::Ids {
                store,
                id,
                parts: Arc::new(Mutex::new(parts.into_iter().map(Some).collect())),
            },
        }
    }

    /// The raw upload id (empty on Azure), or `None` without the store's multipart API.
    pub(super) fn raw_upload_id(&self) -> Option<&str> {
        match &self.kind {
            Kind::Ids { id, .. } => Some(id),
            Kind::Upload(_) => None,
        }
    }

    /// The ids of the parts uploaded so far, in order (all of them have ended).
    ///
    /// # Errors
    /// A part missing in between; kind `Io` without the store's multipart API.
    pub(super) fn part_ids(&self) -> Result<Vec<PartId>> {
        let Kind::Ids { parts, .. } = &self.kind else {
            return Err(Error::from(object_store::Error::NotSupported {
                source: "this store has no multipart API with upload ids".into(),
            }));
        };
        let parts = parts.lock().unwrap_or_else(PoisonError::into_inner);
        parts.iter().cloned().collect::<Option<_>>().ok_or_else(|| {
            Error::from(object_store::Error::Generic {
                store: "vended-storage",
                source: "a part of the upload is missing".into(),
            })
        })
    }

    /// Completes the upload with every part uploaded so far (all of them have ended), under
    /// `mode`: a create-only or if-match completion request carries its condition where the
    /// store takes one (see [`condition`]), so that the store refuses it atomically; a refusal
    /// is the writer's ([`WriteMode::refusal`]). Without the store's multipart API (`file://`)
    /// the completion is unconditional.
    pub(super) async fn complete(&self, mode: &WriteMode) -> Result<PutResult> {
        match &self.kind {
            Kind::Ids { store, id, .. } => {
                let parts = self.part_ids()?;
                let ctx = &self.ctx;
                let require = match mode {
                    WriteMode::Overwrite => None,
                    WriteMode::Create => Some(Require::Absent),
                    WriteMode::IfMatch(e_tag) => Some(Require::ETag(e_tag.clone())),
                };
                let complete =
                    ctx.with_auth_retry(|| store.complete_multipart(&ctx.path, id, parts.clone()));
                condition::completing(ctx.scheme, require, ctx.path.as_ref(), complete)
                    .await
                    .map_err(|e| Error::from(mode.refusal(e)))
            }
            Kind::Upload(upload) => Ok(upload.lock().await.complete().await?),
        }
    }

    /// Aborts the upload once (after one retry with a fresh credential if the endpoint
    /// rejects the first attempt). An upload the endpoint no longer knows counts as aborted.
    pub(super) async fn abort(&self) -> Result<()> {
        let result = match &self.kind {
            Kind::Ids { store, id, .. } => {
                let ctx = &self.ctx;
                ctx.with_auth_retry(|| store.abort_multipart(&ctx.path, id))
                    .await
            }
            Kind::Upload(upload) => upload.lock().await.abort().await,
        };
        match result {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

type PartFuture = std::pin::Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// The parts of one upload: those in flight and the one being filled. Dropped before it was
/// completed or handed to [`super::abandon`] (a `finish` future dropped half-way), it hands its
/// parts in flight to a background abort (on `runtime`) like a dropped writer.
pub(super) struct Upload {
    pub target: Target,
    tasks: JoinSet<Result<()>>,
    buffer: PutPayloadMut,
    part_size: usize,
    started: usize,
    runtime: Option<tokio::runtime::Handle>,
    /// Completed, or handed to [`super::abandon`]: dropping it starts nothing.
    handled: bool,
}

impl Upload {
    pub(super) fn new(
        target: Target,
        part_size: usize,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Self {
        Self {
            target,
            tasks: JoinSet::new(),
            buffer: PutPayloadMut::new(),
            part_size,
            started: 0,
            runtime,
            handled: false,
        }
    }

    /// Marks the upload as completed or taken care of: its drop starts nothing.
    pub(super) fn handled(&mut self) {
        self.handled = true;
    }

    /// How many parts were handed to the store so far.
    pub(super) fn parts_started(&self) -> usize {
        self.started
    }

    /// Appends `data` (copied), starting a part each time one is full. No back pressure: call
    /// [`wait_for_capacity`](Self::wait_for_capacity) first.
    pub(super) fn write(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let room = self.part_size - self.buffer.content_length();
            let n = room.min(data.len());
            self.buffer.extend_from_slice(&data[..n]);
            data = &data[n..];
            self.start_full_part();
        }
    }

    /// Appends `data` without copying it.
    pub(super) fn put(&mut self, mut data: Bytes) {
        while !data.is_empty() {
            let room = self.part_size - self.buffer.content_length();
            let n = room.min(data.len());
            self.buffer.push(data.split_to(n));
            self.start_full_part();
        }
    }

    fn start_full_part(&mut self) {
        if self.buffer.content_length() == self.part_size {
            self.start_part();
        }
    }

    fn start_part(&mut self) {
        let part = std::mem::take(&mut self.buffer).freeze();
        let future = self.target.put_part(self.started, part);
        self.started += 1;
        self.tasks.spawn(future);
    }

    /// Waits until fewer than `n` parts are in flight (`0`: until none is).
    ///
    /// # Errors
    /// The first failed part's error (the other parts keep running).
    pub(super) async fn wait_for_capacity(&mut self, n: usize) -> Result<()> {
        while !self.tasks.is_empty() && self.tasks.len() >= n.max(1) {
            match self.tasks.join_next().await {
                Some(Ok(Ok(()))) | None => {}
                Some(Ok(Err(e))) => return Err(e),
                Some(Err(join)) => return Err(join_error(join)),
            }
        }
        Ok(())
    }

    /// Waits until every part in flight has ended, whatever its outcome. Each is bounded by
    /// the request timeout and retries. Aborting only after that matters: S3 documents that a
    /// part in progress during an abort may still succeed, leaving a part nobody aborts.
    pub(super) async fn settle(&mut self) {
        while self.tasks.join_next().await.is_some() {}
    }

    /// Uploads the part being filled (an empty one if no part was started, so that an empty
    /// object can be completed too), waits for every part and returns their ids without
    /// completing the upload; afterwards dropping this starts nothing.
    ///
    /// # Errors
    /// The first failed part's error. The upload is not aborted here.
    pub(super) async fn finish_parts(&mut self) -> Result<Vec<PartId>> {
        if !self.buffer.is_empty() || self.started == 0 {
            self.start_part();
        }
        self.wait_for_capacity(0).await?;
        let parts = self.target.part_ids()?;
        self.handled = true;
        Ok(parts)
    }

    /// Uploads the part being filled, waits for every part and completes the upload under
    /// `mode` (see [`Target::complete`]).
    ///
    /// # Errors
    /// The first failed part's error, or the completion's. The upload is not aborted here.
    pub(super) async fn finish(&mut self, mode: &WriteMode) -> Result<PutResult> {
        if !self.buffer.is_empty() {
            self.start_part();
        }
        self.wait_for_capacity(0).await?;
        let done = self.target.complete(mode).await?;
        self.handled = true;
        Ok(done)
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if self.handled {
            return;
        }
        self.handled = true;
        let orphan = Upload {
            target: self.target.clone(),
            tasks: std::mem::take(&mut self.tasks),
            buffer: PutPayloadMut::new(),
            part_size: self.part_size,
            started: self.started,
            runtime: self.runtime.clone(),
            handled: false,
        };
        super::abandon::dropped(orphan, self.runtime.clone());
    }
}

fn join_error(e: tokio::task::JoinError) -> Error {
    Error::from(object_store::Error::Generic {
        store: "vended-storage",
        source: format!("a part upload task ended abnormally: {e}").into(),
    })
}
