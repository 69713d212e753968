//! The multipart writer's part-upload machinery: starting the upload, the retry policy that
//! refetches the credential when a part is rejected, the upload wrapper that tags each part
//! with its credential generation, and the chunks handed to parts.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use object_store::retry::{RetryContext, RetryFailure, RetryPolicy};
use object_store::{
    MultipartUpload, PutMultipartOptions, PutPayload, PutPayloadMut, PutResult, UploadPart,
    WriteMultipart,
};

use super::ObjectWriter;
use crate::cloud::{adapter_for, CloudAdapter};
use crate::error::Result;
use crate::refresh::RefresherHandle;

tokio::task_local! {
    /// The credential generation current when the part being uploaded was handed to the
    /// store: the one to invalidate if the endpoint rejects the part.
    static PART_GENERATION: u64;
}

/// Retries a part once after the endpoint answered 400 or 403 (S3's `ExpiredToken`,
/// `InvalidToken`, `InvalidAccessKeyId`), invalidating the credential generation the part
/// started with, so that the retry is signed with a freshly fetched one. `object_store` calls
/// it for each part after its own retries (5xx, timeouts) are exhausted; its context carries
/// the status only, not the error code, so a part refused for another reason costs one
/// extra attempt.
#[derive(Debug)]
struct RefetchOnRejection {
    refresher: Arc<dyn RefresherHandle>,
}

#[async_trait]
impl RetryPolicy for RefetchOnRejection {
    async fn retry(&self, context: RetryContext) -> bool {
        let rejected =
            matches!(context.failure, RetryFailure::Status(s) if matches!(s.as_u16(), 400 | 403));
        if !rejected || context.attempt > 1 {
            return false;
        }
        let generation = PART_GENERATION
            .try_with(|g| *g)
            .unwrap_or_else(|_| self.refresher.generation());
        log::debug!(
            "a part upload was rejected ({:?}); retrying once with a fresh credential",
            context.failure
        );
        self.refresher.invalidate(generation);
        true
    }
}

/// Wraps an upload so each part knows the credential generation it started with (for
/// [`RefetchOnRejection`]) and an abort rejected by the endpoint is retried once.
#[derive(Debug)]
struct GenerationTaggedUpload {
    inner: Box<dyn MultipartUpload>,
    refresher: Option<Arc<dyn RefresherHandle>>,
    adapter: Option<&'static dyn CloudAdapter>,
}

#[async_trait]
impl MultipartUpload for GenerationTaggedUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let part = self.inner.put_part(data);
        match &self.refresher {
            Some(r) => Box::pin(PART_GENERATION.scope(r.generation(), part)),
            None => part,
        }
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        // Not retried here: `object_store` hands over the part list once per upload.
        self.inner.complete().await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        let generation = self.refresher.as_ref().map_or(0, |r| r.generation());
        match self.inner.abort().await {
            Err(e) if self.adapter.is_some_and(|a| a.is_auth_failure(&e)) => {
                if let Some(r) = &self.refresher {
                    r.invalidate(generation);
                }
                self.inner.abort().await
            }
            other => other,
        }
    }
}

impl ObjectWriter {
    pub(super) async fn start_multipart(&self, buffered: PutPayload) -> Result<WriteMultipart> {
        let mut opts = PutMultipartOptions::default();
        if let Some(r) = &self.entry.refresher {
            opts = opts.with_retry_policy(Arc::new(RefetchOnRejection {
                refresher: r.clone(),
            }));
        }
        let inner = self.store.put_multipart_opts(&self.path, opts).await?;
        let upload = GenerationTaggedUpload {
            inner,
            refresher: self.entry.refresher.clone(),
            adapter: adapter_for(self.entry.key.scheme).ok(),
        };
        let mut upload =
            WriteMultipart::new_with_chunk_size(Box::new(upload), self.options.part_size);
        for chunk in buffered {
            upload.put(chunk);
        }
        Ok(upload)
    }
}

/// Data handed to the writer: borrowed (copied into the part) or owned (kept by reference).
pub(super) enum Chunk<'a> {
    Slice(&'a [u8]),
    Owned(Bytes),
}

impl Chunk<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Chunk::Slice(s) => s.len(),
            Chunk::Owned(b) => b.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` bytes; `self` keeps the rest.
    pub(super) fn split_to(&mut self, n: usize) -> Self {
        match self {
            Chunk::Slice(s) => {
                let (head, tail) = s.split_at(n);
                *s = tail;
                Chunk::Slice(head)
            }
            Chunk::Owned(b) => Chunk::Owned(b.split_to(n)),
        }
    }

    pub(super) fn append_to(self, buffer: &mut PutPayloadMut) {
        match self {
            Chunk::Slice(s) => buffer.extend_from_slice(s),
            Chunk::Owned(b) => buffer.push(b),
        }
    }

    pub(super) fn append_to_upload(self, upload: &mut WriteMultipart) {
        match self {
            Chunk::Slice(s) => upload.write(s),
            Chunk::Owned(b) => upload.put(b),
        }
    }
}
