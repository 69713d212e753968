//! What becomes of a multipart upload that will not complete (a failed write, an explicit
//! abort, a writer dropped unfinished): its parts in flight are allowed to end, then the upload
//! is aborted. An abort that fails (typically because no credential can be had: the last one
//! expired and the provider fails) is retried in the background with whatever credential the
//! refresher obtains, a bounded number of times ([`ABORT_MAX_ATTEMPTS`]) within a bounded time
//! ([`ABORT_RETRY_WINDOW`]), the pause doubling from [`ABORT_FIRST_PAUSE`] to [`ABORT_MAX_PAUSE`]. Each attempt
//! asks the refresher for a credential: while it backs off after provider failures, an attempt
//! fails at once without calling the provider, so the catalog sees the refresher's own pace.
//!
//! Until then the upload's parts stay stored (invisible, but billed): the error returned and
//! the log name the location, the upload id and what to do. On Azure an abort removes nothing:
//! staged blocks stay the blob's uncommitted blocks (Get Block List shows them) until Azure
//! discards them, 7 days after staging; the error says so.

use std::time::{Duration, Instant};

use super::upload::{Target, Upload};
use crate::error::Error;

/// First pause before a background abort retry.
pub const ABORT_FIRST_PAUSE: Duration = Duration::from_secs(1);
/// Longest pause between background abort retries.
pub const ABORT_MAX_PAUSE: Duration = Duration::from_secs(30);
/// Background abort retries stop this long after the first failed abort.
pub const ABORT_RETRY_WINDOW: Duration = Duration::from_secs(600);
/// Most background abort attempts.
pub const ABORT_MAX_ATTEMPTS: u32 = 30;

/// After a failed write (`cause`): lets the parts in flight end, aborts the upload, and returns
/// `cause`, or, when parts may be left, [`Error::UploadLeft`] with `cause` naming the upload
/// (the abort is then retried in the background).
pub(super) async fn after_failure(mut upload: Upload, cause: Error) -> Error {
    upload.settle().await;
    upload.handled();
    let staged = upload.parts_started();
    let target = upload.target.clone();
    match target.abort().await {
        Ok(()) if target.abort_removes_parts() || staged == 0 => cause,
        Ok(()) => left(&target, uncommitted_blocks(&target, staged), cause),
        Err(abort) => left(&target, retrying(&target, &abort), cause),
    }
}

/// An explicit abort: lets the parts in flight end and aborts the upload.
///
/// # Errors
/// [`Error::UploadLeft`] around the abort's error when it failed (the abort is then retried
/// in the background).
pub(super) async fn abort(mut upload: Upload) -> Result<(), Error> {
    upload.settle().await;
    upload.handled();
    let target = upload.target.clone();
    match target.abort().await {
        Ok(()) => Ok(()),
        Err(e) => Err(left(&target, retrying(&target, &e), e)),
    }
}

/// A writer dropped unfinished: on `runtime`, lets the parts in flight end and aborts the
/// upload, retrying as after a failure; logs what is left.
pub(super) fn dropped(mut upload: Upload, runtime: Option<tokio::runtime::Handle>) {
    // Whatever happens to the task below, this upload's own drop starts nothing more.
    upload.handled();
    let location = upload.target.ctx.location.clone();
    let Some(rt) = runtime.or_else(|| tokio::runtime::Handle::try_current().ok()) else {
        log::warn!(
            "an unfinished multipart upload{} of {location} was dropped outside a runtime and not aborted; its parts stay stored until it is aborted or a bucket lifecycle rule removes it",
            id_text(&upload.target)
        );
        return;
    };
    rt.spawn(async move {
        upload.settle().await;
        let staged = upload.parts_started();
        let target = upload.target.clone();
        match target.abort().await {
            Ok(()) if target.abort_removes_parts() || staged == 0 => {
                log::debug!("aborted the unfinished upload of {location}")
            }
            Ok(()) => log::warn!(
                "an unfinished upload was dropped: {}",
                uncommitted_blocks(&target, staged)
            ),
            Err(e) => {
                retrying(&target, &e);
            }
        }
    });
}

/// `cause` with `message` about what is left of `target`'s upload.
fn left(target: &Target, message: String, cause: Error) -> Error {
    Error::UploadLeft {
        location: target.ctx.location.clone(),
        upload_id: target.upload_id().map(str::to_string),
        message,
        cause: Box::new(cause),
    }
}

fn id_text(target: &Target) -> String {
    target
        .upload_id()
        .map(|id| format!(" (upload id {id})"))
        .unwrap_or_default()
}

/// The message for staged Azure blocks, which no abort removes.
fn uncommitted_blocks(target: &Target, staged: usize) -> String {
    format!(
        "the {staged} block(s) staged for {} stay as the blob's uncommitted blocks (Get Block List shows them; nothing was committed) until Azure discards them, 7 days after staging",
        target.ctx.location
    )
}

/// Logs the failed abort, starts the background retries, and returns the message naming the
/// upload.
fn retrying(target: &Target, abort: &Error) -> String {
    let id = id_text(target);
    let location = &target.ctx.location;
    let message = format!(
        "its multipart upload{id} could not be aborted ({abort}), so its parts stay stored at {location}, invisible but billed; the abort is retried in the background with fresh credentials for up to {} s; if that fails, abort the upload by its id, or let a bucket lifecycle rule (S3: AbortIncompleteMultipartUpload) remove it",
        ABORT_RETRY_WINDOW.as_secs()
    );
    log::warn!("aborting the multipart upload{id} of {location} failed: {abort}; retrying in the background");
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => {
            rt.spawn(retry(target.clone()));
        }
        Err(_) => log::warn!(
            "no runtime to retry aborting the multipart upload{id} of {location} on; its parts stay stored"
        ),
    }
    message
}

/// Retries aborting `target` until it works, [`ABORT_MAX_ATTEMPTS`] attempts were made or
/// [`ABORT_RETRY_WINDOW`] has passed.
async fn retry(target: Target) {
    let start = Instant::now();
    let mut pause = ABORT_FIRST_PAUSE;
    let id = id_text(&target);
    let location = &target.ctx.location;
    let mut last = None;
    for attempt in 1..=ABORT_MAX_ATTEMPTS {
        if start.elapsed() + pause > ABORT_RETRY_WINDOW {
            break;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(ABORT_MAX_PAUSE);
        match target.abort().await {
            Ok(()) => {
                log::info!(
                    "aborted the multipart upload{id} of {location} at background attempt {attempt}, {} ms after the first failure",
                    start.elapsed().as_millis()
                );
                return;
            }
            Err(e) => {
                log::debug!("background abort {attempt} of the multipart upload{id} of {location} failed: {e}");
                last = Some(e);
            }
        }
    }
    let last = last.map(|e| format!(": {e}")).unwrap_or_default();
    log::warn!(
        "gave up aborting the multipart upload{id} of {location} after {} s{last}; its parts stay stored until the upload is aborted by its id or a bucket lifecycle rule (S3: AbortIncompleteMultipartUpload) removes it",
        start.elapsed().as_secs()
    );
}
