//! Whole-object reads checked against the checksum the service stores (see
//! [`crate::cloud::integrity`]): a mismatch is read once more, then fails with
//! [`Error::ChecksumMismatch`]; no byte of a mismatched read is returned.

use bytes::Bytes;
use object_store::path::Path;
use object_store::{GetOptions, ObjectStoreExt as _};

use super::VendedStore;
use crate::cloud::integrity::{check_of, Stored, Verdict};
use crate::error::{Error, Result};

impl VendedStore {
    /// The bytes of the object at `path` (full path), checked when the answer carried a
    /// stored checksum.
    pub(super) async fn get_checked(&self, path: &Path) -> Result<Bytes> {
        let mut attempt = 1;
        loop {
            let result = self.entry.store.get(path).await?;
            let check = check_of(&result.extensions);
            let bytes = result.bytes().await?;
            let Some(check) = check else {
                return Ok(bytes);
            };
            match check.verdict() {
                Verdict::Mismatch {
                    algorithm,
                    expected,
                    actual,
                } => {
                    self.entry.counters.checked(false);
                    let e = Error::ChecksumMismatch {
                        location: self.location_of(path),
                        algorithm: algorithm.name(),
                        expected,
                        actual,
                    };
                    if !e.rereads_whole_object(attempt) {
                        return Err(e);
                    }
                    log::warn!("{e}; reading it again");
                    attempt += 1;
                }
                Verdict::Matched => {
                    self.entry.counters.checked(true);
                    return Ok(bytes);
                }
                Verdict::Pending | Verdict::Incomplete => return Ok(bytes),
            }
        }
    }

    /// The checksum the service stores for the object at `path` (one `HEAD`), when checksums
    /// are on and the service returns a well-formed one (see [`crate::cloud::integrity`]): S3
    /// CRC64NVME or full-object CRC32C, Azure MD5, GCS CRC32C. `None` otherwise. A full-object
    /// checksum depends on the bytes only, not on how they were uploaded, so two copies of the
    /// same bytes have the same one (what `distcp -checksum` compares).
    ///
    /// # Errors
    /// As [`head`](Self::head).
    pub async fn stored_checksum(&self, path: &str) -> Result<Option<Stored>> {
        let p = self.path(path)?;
        let options = GetOptions {
            head: true,
            ..GetOptions::default()
        };
        let result = self.entry.store.get_opts(&p, options).await?;
        Ok(result.extensions.get::<Stored>().cloned())
    }

    /// `scheme://bucket/path` of a full path, for messages.
    pub(crate) fn location_of(&self, path: &Path) -> String {
        let root = match self.uri.find("://") {
            Some(i) => match self.uri[i + 3..].find('/') {
                Some(j) => &self.uri[..i + 3 + j],
                None => self.uri.as_str(),
            },
            None => self.uri.as_str(),
        };
        format!("{root}/{path}")
    }
}
