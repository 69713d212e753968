//! The body of a GET, its errors located: a body that ends before its announced end names the
//! object, the range and the byte reached (case A2).
//!
//! `object_store` reads a GET's body as a stream; when the connection fails part way (the
//! endpoint closed it before `content-length` bytes, a reset, a timeout) it asks again for the
//! rest, as often as its retries allow (one budget, `max_retries` and `retry_timeout`, shared
//! with the request's own retries), then fails with its bare transport error (`Generic S3 error:
//! HTTP error: request or response body error`). Such a failure becomes a [`RequestFailure`]
//! with a [`BodyCut`]: `GET s3://b/k: the body of bytes 0..1000 ended early at byte 300 (300 of
//! 1000 bytes received; the connection ended: ...)`, same variant (`Generic`), so the kind is the
//! transport failure's (`Transient` for a connection that ended). A failed request of a retry
//! (a 403, a changed ETag) is located like any request's.

use std::ops::Range;
use std::sync::Arc;

use futures::stream::StreamExt;
use object_store::client::HttpError;
use object_store::path::Path;
use object_store::{GetResult, GetResultPayload};

use super::{failure_mut, parts, Place};
use crate::error::{BodyCut, RequestFailure, Scrubbed};

/// Replaces `result`'s body (a stream; a local file is left as it is) by one whose errors are
/// located (see the module docs).
pub(super) fn locate_body(place: &Arc<Place>, result: &mut GetResult, location: &Path) {
    let GetResultPayload::Stream(body) = &mut result.payload else {
        return;
    };
    let taken = std::mem::replace(body, futures::stream::empty().boxed());
    let place = place.clone();
    let path = location.as_ref().to_string();
    let range = result.range.clone();
    let mut reached = range.start;
    *body = taken
        .map(move |item| match item {
            Ok(bytes) => {
                reached += bytes.len() as u64;
                Ok(bytes)
            }
            Err(e) => Err(body_error(&place, e, &path, range.clone(), reached)),
        })
        .boxed();
}

/// The error of a body that failed at `reached` of `range`.
fn body_error(
    place: &Place,
    e: object_store::Error,
    path: &str,
    range: Range<u64>,
    reached: u64,
) -> object_store::Error {
    let mut e = place.locate(e, path, None);
    let cut = BodyCut { range, reached };
    if let Some(f) = failure_mut(&mut e) {
        // A request of `object_store`'s retry failed: an answer (a 403, a 404) is reported as
        // such; a transport failure says how far the body got.
        if f.status.is_none() {
            f.body = Some(cut);
        }
        return e;
    }
    let scrubber = place.scrubber();
    let mut transport = None;
    let mut innermost = None;
    if let Some((_, source)) = parts(&mut e) {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
        while let Some(c) = current {
            if let Some(h) = c.downcast_ref::<HttpError>() {
                transport = Some(h.kind());
            }
            if c.source().is_none() {
                innermost = Some(scrubber.scrub(&c.to_string()));
            }
            current = c.source();
        }
        let at = place.terms.location(&place.bucket, path);
        let original = Scrubbed::of(source.as_ref(), &|t| scrubber.scrub(t));
        let failure = RequestFailure::body_ended(at, cut, transport, innermost)
            .with_source(Box::new(original));
        *source = Box::new(failure);
    }
    e
}
