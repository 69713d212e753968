//! The body of a GET, retried after a rejected credential like the request that opened it.
//!
//! `object_store` reads a GET's body as a stream and, when the connection breaks part way,
//! requests the rest of the object again (a new ranged GET, signed with the credential current
//! then). When the endpoint rejects that request (the credential expired while the body was in
//! flight, or was revoked), the error surfaced from the body stream, outside
//! [`AuthRetryStore`](super::auth_retry::AuthRetryStore)'s retry of the request: it was reported
//! with the kind of an I/O error and the credential was never refetched. This stream gives the
//! body the same rule as every request: invalidate the generation, request the rest once more
//! with a fresh credential, pinned to the object's ETag so that bytes of two versions are never
//! mixed.

use std::ops::Range;

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResult, GetResultPayload};

use super::auth_retry::{classify, RetryParts};

/// What the retrying body stream carries between items.
struct BodyState {
    body: BoxStream<'static, object_store::Result<Bytes>>,
    parts: RetryParts,
    location: Path,
    options: GetOptions,
    /// Absolute offset of the next byte the caller expects.
    offset: u64,
    /// Absolute end (exclusive) of the range the GET returned.
    end: u64,
    retried: bool,
    done: bool,
}

/// Replaces `result`'s body (a stream; a local file is left as it is) by one that retries once,
/// with a fresh credential, when reading it fails because the endpoint rejected the credential.
/// `options` are the GET's own; the retry keeps them, asks for the bytes not yet read and, when
/// the object has an ETag, requires it (`If-Match`), so a replaced object fails with a
/// precondition error instead of splicing two versions.
pub(super) fn retry_body(
    result: &mut GetResult,
    parts: RetryParts,
    location: &Path,
    options: GetOptions,
) {
    let GetResultPayload::Stream(body) = &mut result.payload else {
        return;
    };
    let taken = std::mem::replace(body, futures::stream::empty().boxed());
    let Range { start, end } = result.range.clone();
    let options = GetOptions {
        if_match: result.meta.e_tag.clone().or(options.if_match),
        head: false,
        ..options
    };
    let state = BodyState {
        body: taken,
        parts,
        location: location.clone(),
        options,
        offset: start,
        end,
        retried: false,
        done: false,
    };
    *body = futures::stream::unfold(state, next_chunk).boxed();
}

async fn next_chunk(mut s: BodyState) -> Option<(object_store::Result<Bytes>, BodyState)> {
    if s.done {
        return None;
    }
    loop {
        let e = match s.body.next().await? {
            Ok(bytes) => {
                s.offset += bytes.len() as u64;
                return Some((Ok(bytes), s));
            }
            Err(e) => e,
        };
        let generation = s.parts.generation();
        if s.retried || s.offset >= s.end || !s.parts.invalidate_on(&e, generation) {
            s.done = true;
            let e = classify(s.parts.adapter, e);
            return Some((Err(e), s));
        }
        s.retried = true;
        log::debug!(
            "the rest of a GET body was rejected by the endpoint ({e}); requesting bytes {}..{} once more with a fresh credential",
            s.offset,
            s.end
        );
        let options = GetOptions {
            range: Some(GetRange::Bounded(s.offset..s.end)),
            ..s.options.clone()
        };
        let retried = s.parts.inner.get_opts(&s.location, options).await;
        s.parts.report_retry(&retried);
        match retried {
            Ok(r) => s.body = r.into_stream(),
            Err(e) => {
                s.done = true;
                let e = classify(s.parts.adapter, e);
                return Some((Err(e), s));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use futures::future::{BoxFuture, FutureExt};
    use futures::stream::TryStreamExt;
    use object_store::memory::InMemory;
    use object_store::{
        CopyOptions, ListResult, MultipartUpload, ObjectMeta, ObjectStore, ObjectStoreExt,
        PutMultipartOptions, PutOptions, PutPayload, PutResult,
    };

    use super::*;
    use crate::refresh::{RefreshStats, RefresherHandle};
    use crate::store::AuthRetryStore;
    use crate::uri::Scheme;
    use crate::StorageOptions;

    /// An error as `object_store` reports S3's answer to a rejected request.
    #[derive(Debug)]
    struct Text(&'static str);
    impl std::fmt::Display for Text {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Text {}

    fn expired() -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: Box::new(Text(
                "Error performing GET http://h/b/k in 2ms - Server returned non-2xx status code: \
                 400 Bad Request: <?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>ExpiredToken\
                 </Code><Message>The provided token has expired.</Message></Error>",
            )),
        }
    }

    /// An in-memory store whose bodies break half way with `ExpiredToken`, as a resumed GET
    /// rejected by the endpoint does, for the first `broken` GETs; records every GET's options.
    #[derive(Debug)]
    struct BreakingBodies {
        mem: InMemory,
        broken: AtomicUsize,
        gets: Mutex<Vec<GetOptions>>,
    }

    impl std::fmt::Display for BreakingBodies {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("BreakingBodies")
        }
    }

    #[async_trait]
    impl ObjectStore for BreakingBodies {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.mem.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.mem.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.gets.lock().unwrap().push(options.clone());
            let mut result = self.mem.get_opts(location, options).await?;
            let broken = self
                .broken
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if let (true, GetResultPayload::Stream(body)) = (broken, &mut result.payload) {
                let chunks: Vec<Bytes> = std::mem::replace(body, futures::stream::empty().boxed())
                    .try_collect()
                    .await?;
                let whole = Bytes::from(chunks.concat());
                let items = vec![Ok(whole.slice(..whole.len() / 2)), Err(expired())];
                *body = futures::stream::iter(items).boxed();
            }
            Ok(result)
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.mem.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.mem.list(prefix)
        }
        fn list_with_offset(
            &self,
            prefix: Option<&Path>,
            offset: &Path,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.mem.list_with_offset(prefix, offset)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.mem.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.mem.copy_opts(from, to, options).await
        }
    }

    /// A refresher that only counts invalidations (each one moves to a new generation).
    #[derive(Debug, Default)]
    struct CountingRefresher {
        generation: AtomicU64,
        invalidations: AtomicUsize,
    }

    impl RefresherHandle for CountingRefresher {
        fn generation(&self) -> u64 {
            self.generation.load(Ordering::SeqCst)
        }
        fn invalidate(&self, generation: u64) {
            if self
                .generation
                .compare_exchange(
                    generation,
                    generation + 1,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                self.invalidations.fetch_add(1, Ordering::SeqCst);
            }
        }
        fn report_auth_retry(&self, _generation: u64, _accepted: bool) {}
        fn observe_server_time(&self, _server: i64, _sent: i64, _received: i64) {}
        fn offer(&self, _options: StorageOptions) {}
        fn stats(&self) -> RefreshStats {
            RefreshStats::default()
        }
        fn provider_id(&self) -> &str {
            "counting"
        }
        fn current_options(&self) -> Arc<StorageOptions> {
            Arc::new(StorageOptions::default())
        }
        fn wait_idle(&self) -> BoxFuture<'_, Option<crate::Result<()>>> {
            async { None }.boxed()
        }
    }

    async fn setup(
        broken: usize,
    ) -> (
        Arc<BreakingBodies>,
        Arc<CountingRefresher>,
        AuthRetryStore,
        Bytes,
    ) {
        let inner = Arc::new(BreakingBodies {
            mem: InMemory::new(),
            broken: AtomicUsize::new(0),
            gets: Mutex::new(Vec::new()),
        });
        let data = Bytes::from((0..100_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        inner
            .mem
            .put(&Path::from("k"), data.clone().into())
            .await
            .unwrap();
        inner.broken.store(broken, Ordering::SeqCst);
        let refresher = Arc::new(CountingRefresher::default());
        let adapter = crate::cloud::adapter_for(Scheme::S3).unwrap();
        let store = AuthRetryStore::new(inner.clone(), Some(refresher.clone()), adapter);
        (inner, refresher, store, data)
    }

    #[tokio::test]
    async fn c18_a_body_whose_resumed_request_is_rejected_is_read_on_with_a_fresh_credential() {
        let (inner, refresher, store, data) = setup(1).await;
        let got = store
            .get(&Path::from("k"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(got, data, "every byte once, in order");
        assert_eq!(refresher.invalidations.load(Ordering::SeqCst), 1);
        let gets = inner.gets.lock().unwrap().clone();
        assert_eq!(gets.len(), 2, "the GET and one retry of the rest");
        assert_eq!(
            gets[1].range,
            Some(GetRange::Bounded(50_000..100_000)),
            "the retry asks for the bytes not yet read"
        );
        assert!(gets[1].if_match.is_some(), "pinned to the object's ETag");
    }

    #[tokio::test]
    async fn c18_a_body_rejected_again_after_its_retry_is_a_credentials_error() {
        let (inner, refresher, store, _) = setup(2).await;
        let e = store
            .get(&Path::from("k"))
            .await
            .unwrap()
            .into_stream()
            .try_collect::<Vec<_>>()
            .await
            .unwrap_err();
        assert!(
            matches!(e, object_store::Error::Unauthenticated { .. }),
            "a remaining rejection has the credentials kind, not I/O: {e:?}"
        );
        assert_eq!(
            refresher.invalidations.load(Ordering::SeqCst),
            1,
            "one refetch only"
        );
        assert_eq!(inner.gets.lock().unwrap().len(), 2);
    }
}
