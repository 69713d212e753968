//! Whole-object reads checked against the checksum the service stores (see
//! [`crate::cloud::integrity`]): a mismatch is read once more, then fails with
//! [`Error::ChecksumMismatch`]; no byte of a mismatched read is returned.

use bytes::Bytes;
use object_store::path::Path;
use object_store::ObjectStoreExt as _;

use super::VendedStore;
use crate::cloud::integrity::{check_of, Verdict};
use crate::error::{Error, Result};

impl VendedStore {
    /// The bytes of the object at `path` (full path), checked when the answer carried a
    /// stored checksum.
    pub(super) async fn get_checked(&self, path: &Path) -> Result<Bytes> {
        let mut first_mismatch = true;
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
                    let location = self.location_of(path);
                    if first_mismatch {
                        log::warn!(
                            "GET {location}: checksum mismatch ({}): the service stores \
                             {expected}, the bytes received have {actual}; reading it again",
                            algorithm.name()
                        );
                        first_mismatch = false;
                        continue;
                    }
                    return Err(Error::ChecksumMismatch {
                        location,
                        algorithm: algorithm.name(),
                        expected,
                        actual,
                    });
                }
                Verdict::Matched => {
                    self.entry.counters.checked(true);
                    return Ok(bytes);
                }
                Verdict::Pending | Verdict::Incomplete => return Ok(bytes),
            }
        }
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
