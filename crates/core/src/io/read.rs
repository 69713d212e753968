//! Reads into caller buffers: ranged reads for seekable streams, whole objects into one
//! presized buffer, vectored ranges.

use std::fmt;
use std::ops::Range;

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use super::{head_has_whole_seconds, info_from};
use whole::EndCheck;

mod whole;
use crate::cloud::integrity::check_of;
use crate::error::{Error, ErrorKind, Result};
use crate::object::ObjectInfo;
use crate::store::VendedStore;

/// The body of one GET: the object's metadata, the byte range the body covers, and its bytes
/// as they arrive from the network (no buffering beyond `object_store`'s chunks).
pub struct ObjectBody {
    info: ObjectInfo,
    range: Range<u64>,
    stream: BoxStream<'static, object_store::Result<Bytes>>,
    received: u64,
    /// The unread rest of a chunk cut by [`ObjectBody::next_chunk_max`].
    pending: Bytes,
    /// The check of a whole-object body against the stored checksum, until its end.
    check: Option<EndCheck>,
}

impl fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectBody")
            .field("path", &self.info.path)
            .field("range", &self.range)
            .field("received", &self.received)
            .finish()
    }
}

impl ObjectBody {
    /// A body of `len` bytes whose chunks come from `stream` (tests of its readers).
    #[cfg(test)]
    pub(super) fn from_stream(
        len: u64,
        stream: BoxStream<'static, object_store::Result<Bytes>>,
    ) -> Self {
        Self {
            info: ObjectInfo {
                path: "o".into(),
                size: len,
                last_modified_millis: 0,
                e_tag: None,
                version: None,
            },
            range: 0..len,
            stream,
            received: 0,
            pending: Bytes::new(),
            check: None,
        }
    }

    fn empty(info: ObjectInfo, at: u64) -> Self {
        Self {
            info,
            range: at..at,
            stream: futures::stream::empty().boxed(),
            received: 0,
            pending: Bytes::new(),
            check: None,
        }
    }

    /// The object's metadata (its whole size, ETag, last modification), as the GET answer
    /// gave it.
    pub fn info(&self) -> &ObjectInfo {
        &self.info
    }

    /// The bytes of the object this body covers (start inclusive, end exclusive). Empty when
    /// a ranged read started at or past the end of the object.
    pub fn range(&self) -> Range<u64> {
        self.range.clone()
    }

    /// Length of the body, bytes.
    pub fn len(&self) -> u64 {
        self.range.end - self.range.start
    }

    /// Whether the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// The next chunk of the body as it came from the network, or `None` at its end.
    ///
    /// # Errors
    /// I/O errors; [`crate::ErrorKind::Io`] when the endpoint sent more or fewer bytes than
    /// the range it announced.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        if !self.pending.is_empty() {
            return Ok(Some(std::mem::take(&mut self.pending)));
        }
        match self.stream.next().await {
            Some(Ok(chunk)) => {
                self.received += chunk.len() as u64;
                if self.received > self.len() {
                    return Err(short_or_long(&self.info.path, self.len(), self.received));
                }
                Ok(Some(chunk))
            }
            Some(Err(e)) => Err(e.into()),
            None if self.received < self.len() => {
                Err(short_or_long(&self.info.path, self.len(), self.received))
            }
            None => {
                if let Some(check) = self.check.take() {
                    check.verify()?;
                }
                Ok(None)
            }
        }
    }

    /// The next bytes of the body, at most `max` of them (`max` 0 is taken as 1): the rest of
    /// a longer chunk is kept and comes first on the next call. `None` at the end of the body.
    /// For a caller that reads a long body incrementally into buffers of its own size.
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk).
    pub async fn next_chunk_max(&mut self, max: usize) -> Result<Option<Bytes>> {
        let Some(mut chunk) = self.next_chunk().await? else {
            return Ok(None);
        };
        if chunk.len() > max.max(1) {
            self.pending = chunk.split_off(max.max(1));
        }
        Ok(Some(chunk))
    }

    /// The next chunks of the body as they came from the network, `max` bytes in all at most:
    /// not gathered into one buffer (each `Bytes` shares the network buffer it arrived in), the
    /// last one cut at `max` with its rest kept for the next call. Fewer than `max` bytes only
    /// at the end of the body; empty there (and when `max` is 0). When the last byte is taken,
    /// the body's end is reached, so a checked body has been compared with its stored checksum.
    /// For a caller that copies a batch of chunks at a time (one copy per byte).
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk); [`Error::ChecksumMismatch`] at the end of a checked
    /// body.
    pub async fn next_chunks(&mut self, max: usize) -> Result<Vec<Bytes>> {
        let mut chunks = Vec::new();
        let mut taken = 0;
        while taken < max {
            let Some(chunk) = self.next_chunk_max(max - taken).await? else {
                return Ok(chunks);
            };
            taken += chunk.len();
            chunks.push(chunk);
        }
        self.finish_if_complete().await?;
        Ok(chunks)
    }

    /// Copies the body into `buf` chunk by chunk (one copy, from the network buffer) until the
    /// body ends or `buf` is full; returns the number of bytes written. Bytes past `buf.len()`
    /// are kept for the next read of this body (or dropped, with the connection, with the body).
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk).
    pub async fn read_into(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            let Some(chunk) = self.next_chunk_max(buf.len() - filled).await? else {
                break;
            };
            let n = chunk.len();
            buf[filled..filled + n].copy_from_slice(&chunk);
            filled += n;
        }
        self.finish_if_complete().await?;
        Ok(filled)
    }
}

fn short_or_long(path: &str, expected: u64, received: u64) -> Error {
    Error::ObjectStore(std::sync::Arc::new(object_store::Error::Generic {
        store: "vended-storage",
        source: format!(
            "the body of '{path}' had {received} bytes where the answer announced {expected}"
        )
        .into(),
    }))
}

fn changed(path: &object_store::path::Path, expected: &str) -> Error {
    Error::from(object_store::Error::Precondition {
        path: path.to_string(),
        source: format!("the object's ETag is no longer {expected}").into(),
    })
}

fn range_error(message: String) -> Error {
    Error::invalid_option("range", message)
}

/// The bytes of one [`VendedStore::open_range`].
#[derive(Debug)]
pub enum RangeRead {
    /// A range short enough for the store's session cache, read whole (from the cache, or by a
    /// GET whose bytes the cache now keeps).
    Cached(Bytes),
    /// A range's body as it arrives from the network, for the caller to copy chunk by chunk into
    /// a buffer of [`ObjectBody::len`] bytes: one copy, no buffer gathering the whole range.
    Body(ObjectBody),
}

impl RangeRead {
    /// The bytes in one buffer: the cached bytes, a body of one chunk as it is, or the chunks
    /// of a longer body gathered (one copy), for a caller that cannot fill its own buffer as
    /// the body arrives.
    ///
    /// # Errors
    /// As [`ObjectBody::next_chunk`].
    pub async fn into_bytes(self) -> Result<Bytes> {
        let mut body = match self {
            RangeRead::Cached(bytes) => return Ok(bytes),
            RangeRead::Body(body) => body,
        };
        let Some(first) = body.next_chunk().await? else {
            return Ok(Bytes::new());
        };
        if first.len() as u64 == body.len() {
            return Ok(first);
        }
        let mut all = bytes::BytesMut::with_capacity(body.len() as usize);
        all.extend_from_slice(&first);
        while let Some(chunk) = body.next_chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all.freeze())
    }
}

impl VendedStore {
    /// Bytes `range` of an object (start inclusive, end exclusive; a range running past the end
    /// is cut at the end). A range the session does not cache is not gathered into one buffer:
    /// its body is handed over as it arrives, so a caller filling its own array copies each
    /// byte once (what `ObjectStore.getRange` in Java does); [`get_range`](Self::get_range)
    /// gathers it with [`RangeRead::into_bytes`].
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `range`) for an empty or inverted range, or one starting
    /// at or past the end of the object; not found, permission/credential, provider and I/O
    /// errors.
    pub async fn open_range(&self, path: &str, range: Range<u64>) -> Result<RangeRead> {
        if range.start >= range.end {
            return Err(range_error(format!(
                "start {} must be below end {}",
                range.start, range.end
            )));
        }
        if let Some(s) = self.session.as_ref().filter(|s| s.caches_range(&range)) {
            return Ok(RangeRead::Cached(
                self.get_range_cached(path, range, s).await?,
            ));
        }
        let body = self.read_range(path, range.clone(), None).await?;
        if body.is_empty() {
            return Err(range_error(format!(
                "start {} is at or past the end of the object ({} bytes)",
                range.start,
                body.info().size
            )));
        }
        Ok(RangeRead::Body(body))
    }
}

impl VendedStore {
    /// Opens bytes `range` of an object (start inclusive, end exclusive; a range running past
    /// the end is cut at the end; one starting at or past the end gives an empty body). With
    /// `if_match` (an ETag as [`ObjectInfo::e_tag`] gives it) the read fails with
    /// [`crate::ErrorKind::Precondition`] when the object has changed since: a stream reading
    /// one object in many ranges passes the ETag of its first read to see one version only.
    /// The session cache is not used: the bytes go from the network to the caller.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `range`) for an empty or inverted range; not found,
    /// precondition, permission/credential, provider and I/O errors.
    pub async fn read_range(
        &self,
        path: &str,
        range: Range<u64>,
        if_match: Option<&str>,
    ) -> Result<ObjectBody> {
        if range.start >= range.end {
            return Err(range_error(format!(
                "start {} must be below end {}",
                range.start, range.end
            )));
        }
        let p = self.path(path)?;
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: if_match.map(str::to_string),
            ..Default::default()
        };
        let e: Error = match self.entry.store.get_opts(&p, options).await {
            Ok(result) => {
                // Checked here too: some S3-compatible stores ignore `If-Match` on GET.
                if let Some(expected) = if_match {
                    if result.meta.e_tag.as_deref() != Some(expected) {
                        return Err(changed(&p, expected));
                    }
                }
                return Ok(self.body(result));
            }
            Err(e) => e.into(),
        };
        // A range starting at or past the end: S3 answers 416, memory and files an
        // invalid-range error (both kind Io). Reads at the end of a stream are not errors: ask
        // for the size and answer with an empty body when the start is past it. Credential,
        // not-found, precondition and transient failures are returned as they are.
        if !matches!(e.kind(), ErrorKind::Io | ErrorKind::InvalidOptions) {
            return Err(e);
        }
        let Ok(meta) = self.entry.store.head(&p).await else {
            return Err(e);
        };
        let unchanged = if_match.is_none_or(|expected| meta.e_tag.as_deref() == Some(expected));
        if unchanged && range.start >= meta.size {
            let size = meta.size;
            let info = info_from(&self.base, meta, self.whole_seconds());
            return Ok(ObjectBody::empty(info, size));
        }
        Err(e)
    }

    /// Reads up to `buf.len()` bytes of an object starting at byte `offset` into `buf` (one
    /// ranged GET, one copy from the network buffer); returns how many bytes were read: fewer
    /// than `buf.len()` only at the end of the object, 0 when `offset` is at or past the end
    /// (or `buf` is empty, which sends no request).
    ///
    /// # Errors
    /// As [`read_range`](Self::read_range).
    pub async fn read_range_into(&self, path: &str, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.read_range_into_if_match(path, offset, buf, None).await
    }

    /// [`read_range_into`](Self::read_range_into) that fails with
    /// [`crate::ErrorKind::Precondition`] when the object's ETag is no longer `if_match`.
    ///
    /// # Errors
    /// As [`read_range`](Self::read_range).
    pub async fn read_range_into_if_match(
        &self,
        path: &str,
        offset: u64,
        buf: &mut [u8],
        if_match: Option<&str>,
    ) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let end = offset.checked_add(buf.len() as u64).ok_or_else(|| {
            range_error(format!("offset {offset} + length {} overflows", buf.len()))
        })?;
        let mut body = self.read_range(path, offset..end, if_match).await?;
        body.read_into(buf).await
    }

    /// Opens a whole object: its metadata at once (size, ETag) and its bytes as they arrive,
    /// for a caller that fills a buffer of the announced size.
    ///
    /// # Errors
    /// Not found, permission/credential, provider and I/O errors.
    pub async fn get_body(&self, path: &str) -> Result<ObjectBody> {
        let p = self.path(path)?;
        let result = self.entry.store.get_opts(&p, GetOptions::default()).await?;
        Ok(self.body(result))
    }

    fn whole_seconds(&self) -> bool {
        head_has_whole_seconds(self.entry.key.scheme)
    }

    fn body(&self, result: object_store::GetResult) -> ObjectBody {
        let range = result.range.clone();
        let info = info_from(&self.base, result.meta.clone(), self.whole_seconds());
        let check = check_of(&result.extensions).map(|check| EndCheck {
            check,
            location: self.location_of(&result.meta.location),
            counters: self.entry.counters.clone(),
        });
        ObjectBody {
            info,
            range,
            stream: result.into_stream(),
            received: 0,
            pending: Bytes::new(),
            check,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(chunks: &[&'static [u8]]) -> ObjectBody {
        let len: usize = chunks.iter().map(|c| c.len()).sum();
        let items: Vec<object_store::Result<Bytes>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        ObjectBody::from_stream(len as u64, futures::stream::iter(items).boxed())
    }

    #[tokio::test]
    async fn next_chunk_max_keeps_the_rest_of_a_chunk() {
        let mut b = body(&[b"abcdef", b"gh"]);
        assert_eq!(b.next_chunk_max(4).await.unwrap().unwrap(), &b"abcd"[..]);
        assert_eq!(b.next_chunk_max(0).await.unwrap().unwrap(), &b"e"[..]);
        assert_eq!(b.next_chunk_max(10).await.unwrap().unwrap(), &b"f"[..]);
        assert_eq!(b.next_chunk_max(10).await.unwrap().unwrap(), &b"gh"[..]);
        assert!(b.next_chunk_max(10).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn read_into_then_next_chunk_continue_where_it_stopped() {
        let mut b = body(&[b"abcdef"]);
        let mut buf = [0u8; 2];
        assert_eq!(b.next_chunk_max(2).await.unwrap().unwrap(), &b"ab"[..]);
        assert_eq!(b.read_into(&mut buf).await.unwrap(), 2);
        assert_eq!(&buf, b"cd");
        assert_eq!(b.next_chunk().await.unwrap().unwrap(), &b"ef"[..]);
        assert!(b.next_chunk().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn next_chunks_hands_over_the_network_buffers_themselves_in_batches() {
        static FIRST: &[u8] = b"abcdef";
        static SECOND: &[u8] = b"gh";
        let mut b = body(&[FIRST, SECOND]);
        let batch = b.next_chunks(7).await.unwrap();
        assert_eq!(batch.len(), 2);
        // Not copied: the same memory the chunks arrived in (the copy count of a batched read
        // is the caller's one copy out of these).
        assert_eq!(batch[0].as_ptr(), FIRST.as_ptr());
        assert_eq!(batch[1].as_ptr(), SECOND.as_ptr());
        assert_eq!((&batch[0][..], &batch[1][..]), (&b"abcdef"[..], &b"g"[..]));
        assert_eq!(b.next_chunks(0).await.unwrap().len(), 0);
        let rest = b.next_chunks(100).await.unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].as_ptr(), SECOND[1..].as_ptr());
        assert!(b.next_chunks(100).await.unwrap().is_empty());
    }
}
