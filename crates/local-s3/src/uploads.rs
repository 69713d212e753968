//! The endpoint's record of multipart uploads that were started and neither completed nor
//! aborted, so that tests can assert that a failed upload left nothing behind.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::types::IncompleteUpload;

struct Entry {
    bucket: String,
    key: String,
    initiated_millis: i64,
    parts: BTreeSet<i32>,
}

/// Uploads in progress, by upload id.
#[derive(Default)]
pub(crate) struct Uploads {
    entries: Mutex<HashMap<String, Entry>>,
}

impl Uploads {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes a started upload.
    pub fn started(&self, bucket: &str, key: &str, upload_id: &str, now_millis: i64) {
        self.lock().insert(
            upload_id.to_owned(),
            Entry {
                bucket: bucket.to_owned(),
                key: key.to_owned(),
                initiated_millis: now_millis,
                parts: BTreeSet::new(),
            },
        );
    }

    /// Notes a stored part (a part number stored twice counts once).
    pub fn part_stored(&self, upload_id: &str, part_number: i32) {
        if let Some(entry) = self.lock().get_mut(upload_id) {
            entry.parts.insert(part_number);
        }
    }

    /// Forgets a completed or aborted upload.
    pub fn finished(&self, upload_id: &str) {
        self.lock().remove(upload_id);
    }

    /// Uploads in progress, in `bucket` if given, ordered by bucket, key, then start time.
    pub fn list(&self, bucket: Option<&str>) -> Vec<IncompleteUpload> {
        let mut out: Vec<IncompleteUpload> = self
            .lock()
            .iter()
            .filter(|(_, e)| bucket.is_none_or(|b| b == e.bucket))
            .map(|(id, e)| IncompleteUpload {
                bucket: e.bucket.clone(),
                key: e.key.clone(),
                upload_id: id.clone(),
                parts: e.parts.len(),
                initiated_millis: e.initiated_millis,
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
