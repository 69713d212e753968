//! Whole-object reads: a body checked against the stored checksum at its end (see
//! [`crate::cloud::integrity`]), a read from byte 0 to the end as one whole-object `GET`, and
//! a whole object into a caller's buffer, read again after a checksum mismatch.

use std::sync::Arc;

use bytes::Bytes;

use object_store::GetOptions;

use super::{changed, short_or_long, ObjectBody};
use crate::cloud::integrity::{BodyCheck, Verdict};
use crate::cloud::requests::RequestCounters;
use crate::error::{Error, Result};
use crate::store::VendedStore;

/// What a body checks when it ends (see [`crate::cloud::integrity`]).
pub(super) struct EndCheck {
    pub(super) check: Arc<BodyCheck>,
    pub(super) location: String,
    pub(super) counters: Arc<RequestCounters>,
}

impl EndCheck {
    /// The verdict at the end of the body: a mismatch is an error, counted.
    pub(super) fn verify(self) -> Result<()> {
        match self.check.verdict() {
            Verdict::Matched => {
                self.counters.checked(true);
                Ok(())
            }
            Verdict::Mismatch {
                algorithm,
                expected,
                actual,
            } => {
                self.counters.checked(false);
                Err(Error::ChecksumMismatch {
                    location: self.location,
                    algorithm: algorithm.name(),
                    expected,
                    actual,
                })
            }
            Verdict::Pending | Verdict::Incomplete => Ok(()),
        }
    }
}

impl ObjectBody {
    /// When every byte of a checked body has been received (none pending), polls it once more
    /// to its end, where the bytes are compared with the stored checksum (see
    /// [`crate::cloud::integrity`]): a reader that stops at the last byte still gets the
    /// verdict. Nothing happens for a body that is not checked or not complete.
    ///
    /// # Errors
    /// [`Error::ChecksumMismatch`] (kind `Integrity`); as [`next_chunk`](Self::next_chunk).
    pub async fn finish_if_complete(&mut self) -> Result<()> {
        if self.check.is_none() || !self.pending.is_empty() || self.received < self.len() {
            return Ok(());
        }
        match self.next_chunk().await? {
            None => Ok(()),
            Some(_) => Err(short_or_long(&self.info.path, self.len(), self.received)),
        }
    }
}

impl VendedStore {
    /// The bytes of an object of known `size` from `start` to its end: from 0, one GET of the
    /// whole object (no `Range`), whose bytes are checked against the stored checksum when the
    /// body ends (see [`crate::cloud::integrity`]); from elsewhere, [`read_range`](Self::read_range)
    /// of `start..size`. For a stream that reads an object front to back.
    ///
    /// # Errors
    /// As [`read_range`](Self::read_range); [`Error::ChecksumMismatch`] at the end of the body.
    pub async fn read_to_end(
        &self,
        path: &str,
        start: u64,
        size: u64,
        if_match: Option<&str>,
    ) -> Result<ObjectBody> {
        if start != 0 || size == 0 {
            return self
                .read_range(path, start..size.max(start + 1), if_match)
                .await;
        }
        let p = self.path(path)?;
        let options = GetOptions {
            if_match: if_match.map(str::to_string),
            ..Default::default()
        };
        let result = self.entry.store.get_opts(&p, options).await?;
        if let Some(expected) = if_match {
            if result.meta.e_tag.as_deref() != Some(expected) {
                return Err(changed(&p, expected));
            }
        }
        Ok(self.body(result))
    }

    /// Reads a whole object into `buf` (which must hold it), streaming the body chunks
    /// straight into it: one copy from the network buffer, no intermediate allocation. Returns
    /// the object's size; bytes of `buf` past it are untouched.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `buffer`) when the object is larger than `buf` (checked
    /// from the answer's headers, before any byte is copied); otherwise as
    /// [`get_body`](Self::get_body).
    pub async fn get_into(&self, path: &str, buf: &mut [u8]) -> Result<u64> {
        let mut attempt = 1;
        loop {
            match self.get_into_once(path, buf).await {
                Err(e) if e.rereads_whole_object(attempt) => {
                    log::warn!("{e}; reading it again");
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    /// The whole object as the chunks its body arrived in (not gathered, no copy; see
    /// [`ObjectBody::next_chunks`]), compared with the stored checksum at its end and read again
    /// after a mismatch, as [`get_into`](Self::get_into) does. For a caller that copies the
    /// bytes into memory of its own (one copy per byte in all).
    ///
    /// # Errors
    /// As [`get_body`](Self::get_body); [`Error::ChecksumMismatch`] when the second read does
    /// not match either.
    pub async fn get_chunks(&self, path: &str) -> Result<Vec<Bytes>> {
        let mut attempt = 1;
        loop {
            let read = async {
                let mut body = self.get_body(path).await?;
                let len = usize::try_from(body.len()).unwrap_or(usize::MAX);
                body.next_chunks(len).await
            };
            match read.await {
                Err(e) if e.rereads_whole_object(attempt) => {
                    log::warn!("{e}; reading it again");
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    /// [`get_into`](Self::get_into) without the second read after a checksum mismatch.
    async fn get_into_once(&self, path: &str, buf: &mut [u8]) -> Result<u64> {
        let mut body = self.get_body(path).await?;
        if body.len() > buf.len() as u64 {
            return Err(Error::invalid_option(
                "buffer",
                format!(
                    "the object of {} bytes does not fit in a buffer of {} bytes",
                    body.len(),
                    buf.len()
                ),
            ));
        }
        let n = body.read_into(buf).await?;
        // Reach the end of the body, where its checksum is compared.
        if body.next_chunk().await?.is_some() {
            return Err(short_or_long(path, body.len(), body.received + 1));
        }
        Ok(n as u64)
    }
}
