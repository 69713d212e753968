//! Multipart uploads in progress: which bucket and key each is for, its headers and its
//! parts (files under the bucket's `.uploads/<upload id>/`). Kept in memory: a restarted
//! endpoint removes the parts a previous process left (see [`Uploads::discard_stale`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use s3s::{s3_error, S3Result};

use super::checksum::{Algorithm, Kind};
use super::index::{Attrs, Checksums, UPLOADS};
use crate::types::IncompleteUpload;

/// One stored part.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub file: PathBuf,
    pub size: u64,
    pub md5: [u8; 16],
    pub last_modified_millis: i64,
    /// Additional checksums of the part's bytes (base64): those the request gave (verified)
    /// and the upload's algorithm.
    pub checksums: Checksums,
}

/// One upload in progress.
#[derive(Clone, Debug)]
pub(crate) struct Upload {
    pub bucket: String,
    pub key: String,
    pub initiated_millis: i64,
    pub attrs: Attrs,
    /// The checksum algorithm and type CreateMultipartUpload named, if any.
    pub checksum: Option<(Algorithm, Kind)>,
    pub parts: BTreeMap<i32, Part>,
}

/// Uploads in progress, by upload id.
#[derive(Default)]
pub(crate) struct Uploads {
    entries: Mutex<HashMap<String, Upload>>,
}

/// The directory of an upload's parts.
pub(crate) fn upload_dir(bucket_dir: &Path, upload_id: &str) -> PathBuf {
    bucket_dir.join(UPLOADS).join(upload_id)
}

impl Uploads {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Upload>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes the `.uploads` directories of every bucket under `root` (left by an earlier
    /// process: their ids are unknown to this one).
    pub fn discard_stale(root: &Path) {
        for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir_all(entry.path().join(UPLOADS));
        }
    }

    /// Notes a started upload.
    pub fn start(&self, upload_id: &str, upload: Upload) {
        self.lock().insert(upload_id.to_owned(), upload);
    }

    /// The upload `upload_id` of `bucket`/`key`, or `NoSuchUpload`.
    pub fn get(&self, bucket: &str, key: &str, upload_id: &str) -> S3Result<Upload> {
        match self.lock().get(upload_id) {
            Some(u) if u.bucket == bucket && u.key == key => Ok(u.clone()),
            _ => Err(no_such_upload()),
        }
    }

    /// Records a stored part, replacing (and removing the file of) an earlier one with the
    /// same number. `NoSuchUpload` (and the file removed) when the upload has ended.
    pub fn add_part(&self, upload_id: &str, number: i32, part: Part) -> S3Result<()> {
        let mut entries = self.lock();
        let Some(upload) = entries.get_mut(upload_id) else {
            // Aborted or completed while the part was written: leave nothing behind.
            let _ = std::fs::remove_file(&part.file);
            if let Some(dir) = part.file.parent() {
                let _ = std::fs::remove_dir(dir);
            }
            return Err(no_such_upload());
        };
        if let Some(old) = upload.parts.insert(number, part) {
            let _ = std::fs::remove_file(old.file);
        }
        Ok(())
    }

    /// Ends an upload (completed or aborted), returning it.
    pub fn finish(&self, upload_id: &str) -> Option<Upload> {
        self.lock().remove(upload_id)
    }

    /// Whether `bucket` has uploads in progress.
    pub fn any_in(&self, bucket: &str) -> bool {
        self.lock().values().any(|u| u.bucket == bucket)
    }

    /// Uploads in progress, in `bucket` if given, ordered by bucket, key, then start time.
    pub fn list(&self, bucket: Option<&str>) -> Vec<IncompleteUpload> {
        let mut out: Vec<IncompleteUpload> = self
            .lock()
            .iter()
            .filter(|(_, u)| bucket.is_none_or(|b| b == u.bucket))
            .map(|(id, u)| IncompleteUpload {
                bucket: u.bucket.clone(),
                key: u.key.clone(),
                upload_id: id.clone(),
                parts: u.parts.len(),
                initiated_millis: u.initiated_millis,
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.bucket, &a.key, a.initiated_millis, &a.upload_id).cmp(&(
                &b.bucket,
                &b.key,
                b.initiated_millis,
                &b.upload_id,
            ))
        });
        out
    }
}

pub(crate) fn no_such_upload() -> s3s::S3Error {
    s3_error!(
        NoSuchUpload,
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."
    )
}
