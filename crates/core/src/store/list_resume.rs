//! Listings that survive a connection lost while a page's body was being read.
//!
//! `object_store` retries a request until its answer's headers arrive (`send_retry`), but not
//! the reading of the answer's body: a listing page whose connection is reset half way fails
//! with `Error getting list response body: HTTP error: ...` and ends the listing. A listing is
//! idempotent and ordered (S3, Azure and GCS list keys in ascending order), so it resumes after
//! the last key it yielded (`list_with_offset`), at most [`MAX_RESUMES`] times per listing;
//! `list_with_delimiter` (one call) is run again. Errors that are answers of the endpoint (any
//! HTTP status) or that `object_store` already retried are never resumed here.

use std::future::Future;

use futures::stream::{BoxStream, StreamExt};
use object_store::client::HttpError;
use object_store::path::Path;
use object_store::{ListResult, ObjectMeta};

use crate::error::RequestFailure;

/// How many times one listing resumes after a lost body (each after the last key it yielded).
pub(crate) const MAX_RESUMES: u32 = 3;

/// Whether `e` is a transport failure while reading an answer's body: an `HttpError` among its
/// sources, and not `object_store`'s request error (which it retried already and which carries
/// the endpoint's status when there was an answer).
pub(crate) fn is_lost_body(e: &object_store::Error) -> bool {
    if RequestFailure::find(e).is_some() || RequestFailure::parse(e).is_some() {
        return false;
    }
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = current {
        if c.downcast_ref::<HttpError>().is_some() {
            return true;
        }
        current = c.source();
    }
    false
}

/// A listing opened by `open(offset)` (`None`: from the start; `Some(k)`: keys after `k`) that
/// is opened again after the last key it yielded when a page's body is lost (see
/// [`is_lost_body`]). `start` is the caller's own offset, if any.
pub(crate) fn resumable(
    start: Option<Path>,
    open: impl Fn(Option<Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> + Send + 'static,
) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
    struct State<F> {
        listing: Option<BoxStream<'static, object_store::Result<ObjectMeta>>>,
        last: Option<Path>,
        resumes: u32,
        open: F,
    }
    let first = open(start.clone());
    let state = State {
        listing: Some(first),
        last: start,
        resumes: 0,
        open,
    };
    futures::stream::unfold(state, |mut s| async move {
        loop {
            let item = s.listing.as_mut()?.next().await;
            match item {
                None => return None,
                Some(Ok(meta)) => {
                    s.last = Some(meta.location.clone());
                    return Some((Ok(meta), s));
                }
                Some(Err(e)) if s.resumes < MAX_RESUMES && is_lost_body(&e) => {
                    s.resumes += 1;
                    log::debug!(
                        "listing lost its connection ({e}); resuming after {:?} ({} of {MAX_RESUMES})",
                        s.last.as_ref().map(|p| p.as_ref()),
                        s.resumes
                    );
                    s.listing = Some((s.open)(s.last.clone()));
                }
                Some(Err(e)) => {
                    // An error ends the listing, as `object_store`'s own listings do.
                    s.listing = None;
                    return Some((Err(e), s));
                }
            }
        }
    })
    .boxed()
}

/// Runs `call` (one `list_with_delimiter`) again after a lost body, at most [`MAX_RESUMES`]
/// more times.
pub(crate) async fn list_with_delimiter<F>(call: impl Fn() -> F) -> object_store::Result<ListResult>
where
    F: Future<Output = object_store::Result<ListResult>>,
{
    let mut result = call().await;
    for attempt in 1..=MAX_RESUMES {
        match &result {
            Err(e) if is_lost_body(e) => {
                log::debug!("listing lost its connection ({e}); running it again ({attempt} of {MAX_RESUMES})");
                result = call().await;
            }
            _ => break,
        }
    }
    result
}
