//! The data plane of a [`VendedStore`]: ranged and streamed reads into caller buffers, a
//! multipart writer with bounded memory, listings as streams, conditional writes and
//! server-side copies and renames. Everything goes through the store's `object_store` store
//! (the auth-retrying wrapper the registry builds), so every request is signed with the
//! credential current when it is sent, and a request the endpoint rejects is retried once with
//! a freshly fetched credential.
//!
//! | call | what it does |
//! |---|---|
//! | [`VendedStore::read_range`] | one ranged GET as an [`ObjectBody`] (chunks as they arrive) |
//! | [`BlockingObjectReader`] | one ranged GET read by blocking calls, its connection driven by the reading thread |
//! | [`VendedStore::read_range_into`] | one ranged GET into a caller's `&mut [u8]` (one copy) |
//! | [`VendedStore::get_body`] / [`VendedStore::get_into`] | a whole object, streamed / into a presized buffer |
//! | [`VendedStore::get_ranges_merged`] / [`VendedStore::get_ranges`] | several ranges of one object, nearby ones merged into one GET by a [`RangeMerge`] (Hadoop's rule, or `object_store`'s 1 MiB) |
//! | [`VendedStore::writer`] | an [`ObjectWriter`]: one PUT when small, else a multipart upload |
//! | [`VendedStore::put_opts`] | a PUT with a [`WriteMode`]: overwrite, create-only, if-ETag-matches |
//! | [`VendedStore::put_commit`] | a table format's commit file: one create-only PUT that recognises its own retried attempt, on an endpoint probed once to honour the condition |
//! | [`VendedStore::list_stream`] / [`VendedStore::list_with_delimiter`] | listings |
//! | [`VendedStore::copy`], [`VendedStore::copy_if_not_exists`], [`VendedStore::rename`], [`VendedStore::rename_if_not_exists`] | server-side copies |
//!
//! Offsets and sizes are `u64` bytes everywhere (objects far above 2 GiB). Paths are relative
//! to the store's URI prefix, as for [`VendedStore::get`]. Writes, copies, renames and deletes
//! made here drop the written paths from the store's [`Session`](crate::Session) caches.

mod blocking;
mod list;
mod ops;
mod read;
mod vectored;
mod write;

pub use blocking::BlockingObjectReader;
pub use list::{DelimitedListing, ObjectLister};
pub use read::{ObjectBody, RangeRead};
pub use vectored::{RangeMerge, VECTORED_PARALLEL};
pub use write::{
    CommitResult, ObjectWriter, PendingCommit, WriteMode, WriteResult, WriterOptions,
    ABORT_FIRST_PAUSE, ABORT_MAX_ATTEMPTS, ABORT_MAX_PAUSE, ABORT_RETRY_WINDOW,
    CONDITION_PROBE_PREFIX, PENDING_COMMIT_VERSION, WRITE_ID_METADATA,
};

use object_store::path::Path;
use object_store::ObjectMeta;

use crate::object::ObjectInfo;
use crate::store::VendedStore;
use crate::uri::Scheme;

/// Part-size rules of a store kind's multipart uploads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PartLimits {
    /// Smallest part allowed except the last, bytes.
    pub min_part: usize,
    /// Largest part allowed, bytes.
    pub max_part: usize,
    /// Most parts in one upload.
    pub max_parts: u64,
}

impl PartLimits {
    /// The limits of `scheme`'s store. S3: parts of 5 MiB to 5 GiB, at most 10,000 of them
    /// (<https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html>). Local files and
    /// memory accept any part size (useful for tests), 10,000 parts as well.
    pub(crate) fn of(scheme: Scheme) -> PartLimits {
        match scheme {
            Scheme::S3 | Scheme::Gcs => PartLimits {
                min_part: 5 << 20,
                max_part: 5 << 30,
                max_parts: 10_000,
            },
            // Azure block blobs: blocks up to 4000 MiB, 50,000 of them, no minimum.
            Scheme::Azure => PartLimits {
                min_part: 1,
                max_part: 4000 << 20,
                max_parts: 50_000,
            },
            Scheme::File | Scheme::Memory => PartLimits {
                min_part: 1,
                max_part: 5 << 30,
                max_parts: 10_000,
            },
        }
    }
}

/// `full` relative to `base` (`full` itself when it is not under `base`).
pub(crate) fn relative_to(base: &Path, full: &Path) -> String {
    match full.prefix_match(base) {
        Some(parts) => parts
            .map(|p| p.as_ref().to_string())
            .collect::<Vec<_>>()
            .join("/"),
        None => full.to_string(),
    }
}

/// Whether `scheme`'s `HEAD`/`GET` answers give the last modification in whole seconds only:
/// S3 sends it as an HTTP date (RFC 9110 section 5.6.7) there, while its listings give
/// milliseconds (`LastModified` in ISO 8601).
pub(crate) fn head_has_whole_seconds(scheme: Scheme) -> bool {
    matches!(scheme, Scheme::S3 | Scheme::Gcs | Scheme::Azure)
}

/// What the library reports about an object listed or read under `base`. With
/// `whole_seconds` the last modification is truncated to whole seconds, so that a listing
/// agrees with a `head` of the same object (see [`head_has_whole_seconds`]).
pub(crate) fn info_from(base: &Path, meta: ObjectMeta, whole_seconds: bool) -> ObjectInfo {
    let millis = meta.last_modified.timestamp_millis();
    ObjectInfo {
        path: relative_to(base, &meta.location),
        size: meta.size,
        last_modified_millis: if whole_seconds {
            millis - millis.rem_euclid(1000)
        } else {
            millis
        },
        e_tag: meta.e_tag,
        version: meta.version,
    }
}

impl VendedStore {
    /// Drops `full`'s entries from the session caches, if the store has a session.
    pub(crate) fn forget_path(&self, full: &Path) {
        if let Some(s) = &self.session {
            s.forget_object(&self.entry.key, full.as_ref());
        }
    }
}
