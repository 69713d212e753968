//! Fault injection: bit flips armed per object and side, used in the order armed (arming
//! twice flips the next two bodies). A flip armed for the **request**
//! side changes one bit of the next PutObject or UploadPart body for that key after the
//! endpoint received it and before its checksums are computed, so the endpoint's own
//! verification must refuse it (`BadDigest` when the client sent a checksum). A flip armed for
//! the **response** side changes one bit of the body the next GetObject of that key sends; the
//! headers (the stored checksum among them) are unchanged, so the client must notice.
//!
//! The flipped bit is the lowest bit (`^ 0x01`) of the byte at the armed offset (default: the
//! middle byte of the body, `len / 2`; the first byte of a request body whose length is not
//! known in advance). A flip stays armed until a body of that key is long enough to hold its
//! offset (an empty body or a HEAD does not use it), then it is used once.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;
use s3s::dto::StreamingBlob;
use s3s::stream::{ByteStream, RemainingLength};
use s3s::StdError;

/// Which body an armed flip changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlipSide {
    /// The next PutObject / UploadPart body received for the key, before verification.
    Request,
    /// The next GetObject body sent for the key (headers unchanged).
    Response,
}

impl FlipSide {
    /// `request` or `response` (the admin API's `where=`).
    pub fn parse(text: &str) -> Option<FlipSide> {
        match text {
            "request" => Some(FlipSide::Request),
            "response" => Some(FlipSide::Response),
            _ => None,
        }
    }
}

/// How many bit flips happened, by side, and how many are armed and not used yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlipCounts {
    /// Request bodies that had a bit flipped.
    pub request: u64,
    /// Response bodies that had a bit flipped.
    pub response: u64,
    /// Flips armed and not used yet.
    pub armed: usize,
}

type Target = (FlipSide, String, String);

/// Armed flips (by side, bucket and key: the byte offsets in the order armed, `None` = the
/// middle) and counters.
#[derive(Default)]
pub(crate) struct Faults {
    armed: Mutex<HashMap<Target, VecDeque<Option<u64>>>>,
    request: Arc<AtomicU64>,
    response: Arc<AtomicU64>,
}

impl Faults {
    fn lock(&self) -> MutexGuard<'_, HashMap<Target, VecDeque<Option<u64>>>> {
        self.armed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Arms one more flip for the side and object (after those already armed for it).
    pub fn arm(&self, side: FlipSide, bucket: &str, key: &str, offset: Option<u64>) {
        self.lock()
            .entry((side, bucket.to_owned(), key.to_owned()))
            .or_default()
            .push_back(offset);
    }

    pub fn counts(&self) -> FlipCounts {
        FlipCounts {
            request: self.request.load(Ordering::SeqCst),
            response: self.response.load(Ordering::SeqCst),
            armed: self.lock().values().map(VecDeque::len).sum(),
        }
    }

    /// Takes the flip armed for `side` of `bucket`/`key` if a body of `len` bytes (`None`:
    /// unknown) can hold its offset; the offset to flip.
    fn take(&self, side: FlipSide, bucket: &str, key: &str, len: Option<u64>) -> Option<u64> {
        let mut armed = self.lock();
        if armed.is_empty() {
            return None;
        }
        let target = (side, bucket.to_owned(), key.to_owned());
        let queue = armed.get_mut(&target)?;
        let offset = match (*queue.front()?, len) {
            (Some(offset), Some(len)) if offset >= len => return None,
            (None, Some(0)) => return None,
            (Some(offset), _) => offset,
            (None, Some(len)) => len / 2,
            // Unknown length and no offset: the first byte.
            (None, None) => 0,
        };
        queue.pop_front();
        if queue.is_empty() {
            armed.remove(&target);
        }
        Some(offset)
    }

    /// `body` of a PutObject or UploadPart of `bucket`/`key`, with a bit flipped if a
    /// request flip is armed for it.
    pub fn request_body(&self, bucket: &str, key: &str, body: StreamingBlob) -> StreamingBlob {
        let len = body.remaining_length().exact().map(|n| n as u64);
        match self.take(FlipSide::Request, bucket, key, len) {
            Some(offset) => flipped(body, offset, self.request.clone()),
            None => body,
        }
    }

    /// `body` (`len` bytes) of a GetObject of `bucket`/`key`, with a bit flipped if a
    /// response flip is armed for it.
    pub fn response_body(
        &self,
        bucket: &str,
        key: &str,
        body: StreamingBlob,
        len: u64,
    ) -> StreamingBlob {
        match self.take(FlipSide::Response, bucket, key, Some(len)) {
            Some(offset) => flipped(body, offset, self.response.clone()),
            None => body,
        }
    }
}

fn flipped(inner: StreamingBlob, offset: u64, count: Arc<AtomicU64>) -> StreamingBlob {
    StreamingBlob::new(Flip {
        inner,
        at: Some(offset),
        count,
    })
}

/// A body passed through with the lowest bit of byte `at` flipped.
struct Flip {
    inner: StreamingBlob,
    /// Offset of the byte to flip from the current position; `None` once flipped.
    at: Option<u64>,
    count: Arc<AtomicU64>,
}

impl Stream for Flip {
    type Item = Result<Bytes, StdError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        let Poll::Ready(Some(Ok(chunk))) = polled else {
            return polled;
        };
        let Some(at) = self.at else {
            return Poll::Ready(Some(Ok(chunk)));
        };
        let len = chunk.len() as u64;
        if at >= len {
            self.at = Some(at - len);
            return Poll::Ready(Some(Ok(chunk)));
        }
        let mut bytes = chunk.to_vec();
        bytes[at as usize] ^= 0x01;
        self.at = None;
        self.count.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(Some(Ok(Bytes::from(bytes))))
    }
}

impl ByteStream for Flip {
    fn remaining_length(&self) -> RemainingLength {
        self.inner.remaining_length()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    fn blob(chunks: &[&'static [u8]]) -> StreamingBlob {
        let total = chunks.iter().map(|c| c.len()).sum();
        let items: Vec<Result<Bytes, StdError>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        StreamingBlob::new(Exact(futures::stream::iter(items), total))
    }

    struct Exact<S>(S, usize);
    impl<S: Stream<Item = Result<Bytes, StdError>> + Unpin> Stream for Exact<S> {
        type Item = S::Item;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
            Pin::new(&mut self.0).poll_next(cx)
        }
    }
    impl<S: Stream<Item = Result<Bytes, StdError>> + Unpin> ByteStream for Exact<S> {
        fn remaining_length(&self) -> RemainingLength {
            RemainingLength::new_exact(self.1)
        }
    }

    async fn collect(body: StreamingBlob) -> Vec<u8> {
        let mut out = Vec::new();
        let mut body = body;
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk.unwrap());
        }
        out
    }

    #[tokio::test]
    async fn flips_the_middle_bit_once_across_chunks() {
        let faults = Faults::default();
        faults.arm(FlipSide::Request, "b", "k", None);
        assert_eq!(faults.counts().armed, 1);
        let out = collect(faults.request_body("b", "k", blob(&[b"aaaa", b"bbbb"]))).await;
        assert_eq!(out, b"aaaacbbb");
        assert_eq!(
            faults.counts(),
            FlipCounts {
                request: 1,
                response: 0,
                armed: 0
            }
        );
        let out = collect(faults.request_body("b", "k", blob(&[b"aaaa", b"bbbb"]))).await;
        assert_eq!(out, b"aaaabbbb", "one-shot");
    }

    #[tokio::test]
    async fn a_body_too_short_leaves_the_flip_armed() {
        let faults = Faults::default();
        faults.arm(FlipSide::Response, "b", "k", Some(5));
        let out = collect(faults.response_body("b", "k", blob(&[b"abc"]), 3)).await;
        assert_eq!(out, b"abc");
        let out = collect(faults.response_body("b", "other", blob(&[b"abcdefg"]), 7)).await;
        assert_eq!(out, b"abcdefg");
        assert_eq!(faults.counts().armed, 1);
        let out = collect(faults.response_body("b", "k", blob(&[b"abcdefg"]), 7)).await;
        assert_eq!(out, b"abcdegg", "'f' (0x66) became 'g' (0x67)");
        assert_eq!(faults.counts().response, 1);
    }
}
