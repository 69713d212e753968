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
    // Fused: callers such as `ObjectBody` may poll again after the end, as a network body allows.
    *body = futures::stream::unfold(state, next_chunk).fuse().boxed();
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
