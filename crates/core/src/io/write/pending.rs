//! Deferred commits: a multipart upload whose parts are written now and which is completed (or
//! aborted) later, possibly by another process with another credential, from a
//! [`PendingCommit`]. This is what an output committer needs to publish task output at job
//! commit without copying it (the idea of S3A's magic committer).
//!
//! An upload id is not bound to the credential that started it: any credential allowed to
//! write the object can complete or abort it. On S3 and GCS (XML multipart API) nothing is
//! visible until the completion; on Azure the parts are staged blocks, committed by Put Block
//! List, and an abort removes nothing (uncommitted blocks are discarded by Azure 7 days after
//! staging). Local files (`file://`) and memory stores have no upload ids: pending writers
//! fail there with kind [`crate::ErrorKind::Io`] ("not supported").
//!
//! `object_store` 0.14 cannot list a bucket's multipart uploads (S3 `ListMultipartUploads`), so
//! uploads are found again through *records*: [`VendedStore::pending_writer`] can write the
//! upload's [`PendingCommit`] (without parts) to a record path as soon as the upload starts, and
//! [`VendedStore::abort_recorded_uploads`] aborts every upload recorded under a prefix. An
//! upload whose record was never written (the process died between the two requests) is left
//! to the bucket's lifecycle rule.

use bytes::Bytes;
use object_store::multipart::PartId;
use object_store::path::Path;
use object_store::ObjectStoreExt;
use serde::{Deserialize, Serialize};

use super::upload::{Ctx, Target};
use super::{abandon, ObjectWriter, State, WriteMode, WriteResult, WriterOptions};
use crate::error::{Error, Result};
use crate::store::VendedStore;

/// The format version of [`PendingCommit`]'s JSON.
pub const PENDING_COMMIT_VERSION: u32 = 1;

/// A multipart upload written but not completed: what completing or aborting it needs, in JSON
/// (`serde_json`) so that it can be saved and used by another process.
///
/// JSON shape: `{"version":1,"location":"s3://bucket/prefix/path","key":"prefix/path",
/// "upload_id":"…","parts":["etag1","etag2"],"length":12345}`. `parts` is empty in a record
/// written when the upload started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCommit {
    /// [`PENDING_COMMIT_VERSION`].
    pub version: u32,
    /// The object's location for messages and checks, e.g. `s3://bucket/prefix/path`.
    pub location: String,
    /// The object's full key in its bucket or container (not relative to a store's prefix).
    pub key: String,
    /// The store's upload id (empty on Azure, where blocks need none).
    pub upload_id: String,
    /// Each part's id in order (S3/GCS: its ETag; Azure: its block id).
    pub parts: Vec<String>,
    /// The object's size in bytes once completed.
    pub length: u64,
}

impl PendingCommit {
    /// The JSON form.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the JSON form.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `pending_commit`) for malformed JSON or another version.
    pub fn from_json(json: &str) -> Result<PendingCommit> {
        let p: PendingCommit = serde_json::from_str(json).map_err(|e| {
            Error::invalid_option("pending_commit", format!("not a pending commit: {e}"))
        })?;
        if p.version != PENDING_COMMIT_VERSION {
            return Err(Error::invalid_option(
                "pending_commit",
                format!(
                    "version {} is not supported (this library reads version {PENDING_COMMIT_VERSION})",
                    p.version
                ),
            ));
        }
        Ok(p)
    }
}

impl ObjectWriter {
    /// Uploads what is left and returns the upload as a [`PendingCommit`] without completing
    /// it: nothing becomes visible. Only for writers from [`VendedStore::pending_writer`].
    ///
    /// # Errors
    /// [`Error::Closed`] after `finish`/`abort`, or for a writer that is not pending; the error
    /// of a failed part (the upload is then aborted).
    pub async fn finish_pending(&mut self) -> Result<PendingCommit> {
        self.check_open()?;
        let state = std::mem::replace(&mut self.state, State::Closed("finished pending writer"));
        let State::Multipart(mut upload) = state else {
            return Err(Error::Closed("writer that is not pending"));
        };
        match upload.finish_parts().await {
            Ok(parts) => Ok(PendingCommit {
                version: PENDING_COMMIT_VERSION,
                location: upload.target.ctx.location.clone(),
                key: self.path.to_string(),
                upload_id: upload
                    .target
                    .raw_upload_id()
                    .unwrap_or_default()
                    .to_string(),
                parts: parts.into_iter().map(|p| p.content_id).collect(),
                length: self.written,
            }),
            Err(e) => {
                let e = abandon::after_failure(*upload, e).await;
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }
}

impl VendedStore {
    /// Opens a pending writer for `path`: its multipart upload starts now (one request), parts
    /// upload as data comes, and [`ObjectWriter::finish_pending`] returns the upload instead of
    /// completing it. With `record`, the upload's [`PendingCommit`] (no parts yet) is first
    /// written to that path (relative to this store), so that
    /// [`abort_recorded_uploads`](Self::abort_recorded_uploads) can abort it if nobody commits.
    ///
    /// # Errors
    /// As [`writer`](Self::writer) (`options.mode` must be overwrite: key `mode`); kind `Io`
    /// ("not supported") for stores without upload ids (`file://`, `memory://`); the store's
    /// errors starting the upload or writing the record (the upload is then aborted).
    pub async fn pending_writer(
        &self,
        path: &str,
        options: WriterOptions,
        record: Option<&str>,
    ) -> Result<ObjectWriter> {
        if options.mode != WriteMode::Overwrite {
            return Err(Error::invalid_option(
                "mode",
                "a pending write completes later and cannot be create-only or if-match",
            ));
        }
        let record = record.map(|r| self.path(r)).transpose()?;
        let mut writer = self.writer(path, options)?;
        if self.entry.multipart.is_none() {
            return Err(not_supported(&writer.relative));
        }
        let upload = writer.start_multipart().await?;
        if let Some(record) = record {
            let pending = PendingCommit {
                version: PENDING_COMMIT_VERSION,
                location: upload.target.ctx.location.clone(),
                key: writer.path.to_string(),
                upload_id: upload
                    .target
                    .raw_upload_id()
                    .unwrap_or_default()
                    .to_string(),
                parts: Vec::new(),
                length: 0,
            };
            let put = self
                .entry
                .store
                .put(&record, Bytes::from(pending.to_json()).into())
                .await;
            if let Err(e) = put {
                return Err(abandon::after_failure(upload, e.into()).await);
            }
        }
        writer.state = State::Multipart(Box::new(upload));
        Ok(writer)
    }

    /// Completes a pending upload: the object becomes visible at its key, made of the parts
    /// listed. Signed with this store's current credential (retried once with a fresh one if
    /// the endpoint rejects it), whoever started the upload.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `pending_commit`) when the upload belongs to another
    /// bucket or container than this store's; kind `NotFound` when the store no longer knows
    /// the upload (aborted, or completed already); permission, credential and I/O errors.
    pub async fn complete_pending(&self, pending: &PendingCommit) -> Result<WriteResult> {
        let target = self.pending_target(pending)?;
        let done = target.complete(&WriteMode::Overwrite).await?;
        self.forget_path(&Path::from(pending.key.as_str()));
        Ok(done.into())
    }

    /// Aborts a pending upload (its parts are deleted; on Azure nothing is removed, see the
    /// module). An upload the store no longer knows counts as aborted.
    ///
    /// # Errors
    /// As [`complete_pending`](Self::complete_pending), except `NotFound`.
    pub async fn abort_pending(&self, pending: &PendingCommit) -> Result<()> {
        self.pending_target(pending)?.abort().await
    }

    /// Aborts every upload recorded under `prefix` (records written by
    /// [`pending_writer`](Self::pending_writer), relative to this store) and deletes the
    /// records. Uploads completed already are left as they are (the store no longer knows
    /// their ids). Returns how many records were handled.
    ///
    /// # Errors
    /// The listing's errors; the first abort or delete that failed (the others are tried
    /// all the same); kind `InvalidOptions` for an object under `prefix` that is not a record.
    pub async fn abort_recorded_uploads(&self, prefix: &str) -> Result<usize> {
        let records = self.list(Some(prefix)).await?;
        let mut first_error = None;
        for info in &records {
            let outcome = async {
                let bytes = self.get(&info.path).await?;
                let pending = PendingCommit::from_json(&String::from_utf8_lossy(&bytes))?;
                self.abort_pending(&pending).await?;
                self.delete(&info.path).await
            }
            .await;
            if let Err(e) = outcome {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(records.len()),
        }
    }

    fn pending_target(&self, pending: &PendingCommit) -> Result<Target> {
        let key = &self.entry.key;
        let root = format!("{}://{}/", key.scheme.as_str(), key.authority);
        let location = format!("{root}{}", pending.key);
        if location != pending.location {
            return Err(Error::invalid_option(
                "pending_commit",
                format!(
                    "the upload of {} does not belong to this store ({root})",
                    pending.location
                ),
            ));
        }
        let Some(multipart) = self.entry.multipart.clone() else {
            return Err(not_supported(&pending.location));
        };
        let ctx = Ctx {
            path: Path::from(pending.key.as_str()),
            location,
            scheme: key.scheme,
            refresher: self.entry.refresher.clone(),
            adapter: crate::cloud::adapter_for(key.scheme).ok(),
        };
        let parts = pending
            .parts
            .iter()
            .map(|p| PartId {
                content_id: p.clone(),
            })
            .collect();
        Ok(Target::resume(
            ctx,
            multipart,
            pending.upload_id.clone(),
            parts,
        ))
    }
}

fn not_supported(location: &str) -> Error {
    Error::from(object_store::Error::NotSupported {
        source: format!(
            "pending (deferred-commit) writes of {location} need a store with multipart upload ids (s3, gs, az)"
        )
        .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PendingCommit {
        PendingCommit {
            version: PENDING_COMMIT_VERSION,
            location: "s3://b/p/x".into(),
            key: "p/x".into(),
            upload_id: "u1".into(),
            parts: vec!["\"e1\"".into(), "\"e2\"".into()],
            length: 12,
        }
    }

    #[test]
    fn a_pending_commit_round_trips_through_json() {
        let p = sample();
        assert_eq!(PendingCommit::from_json(&p.to_json()).unwrap(), p);
    }

    #[test]
    fn malformed_or_newer_json_is_an_invalid_option_naming_the_key() {
        let e = PendingCommit::from_json("{\"version\":1}").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidOptions);
        assert!(e.to_string().contains("pending_commit"), "{e}");
        let mut p = sample();
        p.version = 2;
        let e = PendingCommit::from_json(&p.to_json()).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
    }
}
