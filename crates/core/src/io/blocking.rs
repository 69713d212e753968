//! A blocking reader of one object range whose connection is driven by the thread that reads:
//! no runtime thread and no hand-off between threads in the data path (see [`crate::driven`]).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::runtime::{Handle, Runtime};

use super::ObjectBody;
use crate::driven;
use crate::error::{Error, Result};
use crate::object::ObjectInfo;
use crate::store::VendedStore;

/// One ranged GET read by blocking calls, for a thread that is not a runtime thread (a JVM
/// thread, a plain `std::thread`). The request, its connection and every network read run on
/// a single-thread tokio runtime of the reader's own, driven by the calling thread during
/// [`open`](Self::open) and each read, so the bytes go from the socket to the caller's buffer
/// on the caller's thread. Between reads nothing receives: the kernel's socket buffer holds
/// what the endpoint sent ahead (as with any blocking HTTP client).
///
/// The connection is the reader's own (HTTP/1.1, not pooled; a TLS endpoint costs one
/// handshake per reader) and closes when the reader is dropped before the end of its range.
/// The request goes through the store's refresh and auth-retry path like every other: signed
/// with the credential current when it is sent; a credential refresh it starts runs on the
/// `background` runtime given at open, where other requests can join it.
pub struct BlockingObjectReader {
    body: ObjectBody,
    background: Handle,
    /// The longest one read waits for the network, ms (`u64::MAX`: unbounded), as the store's
    /// client options give it.
    wait_millis: Arc<AtomicU64>,
    /// `None` only while dropping.
    runtime: Option<Runtime>,
}

impl fmt::Debug for BlockingObjectReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingObjectReader")
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

impl BlockingObjectReader {
    /// Sends the GET of bytes `range` of `path` (start inclusive, end exclusive) and waits for
    /// its answer, as [`VendedStore::read_range`] does (a range past the end is cut; one
    /// starting at or past the end gives an empty reader; `if_match` pins the ETag).
    /// `background` is a runtime that outlives the reader (the application's), for work
    /// shared with other requests.
    ///
    /// Each attempt waits for the answer's headers at most the store's `read_timeout`, else
    /// its `timeout` (default 30 s); `object_store` retries within its budget (`max_retries`,
    /// `retry_timeout`).
    ///
    /// # Errors
    /// As [`VendedStore::read_range`] (an endpoint that never answers: kind
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) once the retries are spent);
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) when the reader's runtime cannot be created.
    ///
    /// # Panics
    /// When called from within an async context (a runtime's worker thread): blocking there
    /// would stall that runtime.
    pub fn open(
        store: &VendedStore,
        path: &str,
        range: Range<u64>,
        if_match: Option<&str>,
        background: Handle,
    ) -> Result<Self> {
        Self::start(background, store.read_range(path, range, if_match))
    }

    /// [`open`](Self::open) for the bytes of an object of known `size` from `start` to its
    /// end ([`VendedStore::read_to_end`]): from 0, one GET of the whole object, whose bytes are
    /// compared with the stored checksum when the last one is read.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    ///
    /// # Panics
    /// As [`open`](Self::open).
    pub fn open_to_end(
        store: &VendedStore,
        path: &str,
        start: u64,
        size: u64,
        if_match: Option<&str>,
        background: Handle,
    ) -> Result<Self> {
        Self::start(background, store.read_to_end(path, start, size, if_match))
    }

    fn start(
        background: Handle,
        get: impl std::future::Future<Output = Result<ObjectBody>>,
    ) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                Error::ObjectStore(Arc::new(object_store::Error::Generic {
                    store: "reader",
                    source: format!("cannot create the reader's runtime: {e}").into(),
                }))
            })?;
        let wait_millis = Arc::new(AtomicU64::new(0));
        let body =
            runtime.block_on(driven::scoped(background.clone(), wait_millis.clone(), get))?;
        if wait_millis.load(Ordering::Relaxed) == 0 {
            // Stores without an HTTP client (memory, files) report nothing.
            wait_millis.store(u64::MAX, Ordering::Relaxed);
        }
        Ok(Self {
            body,
            background,
            wait_millis,
            runtime: Some(runtime),
        })
    }

    /// The object's metadata as the GET answer gave it.
    pub fn info(&self) -> &ObjectInfo {
        self.body.info()
    }

    /// The bytes of the object this reader covers (start inclusive, end exclusive).
    pub fn range(&self) -> Range<u64> {
        self.body.range()
    }

    /// Reads the next bytes of the range, at most `len`, handing each piece to
    /// `put(offset in this call, bytes)` as it comes off the connection (one copy, from the
    /// network buffer into wherever `put` writes); returns how many bytes were handed over,
    /// fewer than `len` only at the end of the range (0 there, and when `len` is 0).
    ///
    /// A call fails when no bytes came for the store's `read_timeout`, else its `timeout`
    /// (default 30 s) while it waited; time the caller spends between reads does not count
    /// (the connection has no timeout of its own). The bytes a failed call handed to `put`
    /// before are not counted: read the range again from the offset the call started at.
    ///
    /// # Errors
    /// As [`ObjectBody::next_chunk`] (converted into `E`); [`ErrorKind::Io`](crate::ErrorKind::Io)
    /// when no bytes came for that long; or the first error of `put` (the bytes of that piece
    /// are then lost to this reader).
    pub fn read_with<E: From<Error>>(
        &mut self,
        len: usize,
        mut put: impl FnMut(usize, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        self.drive(len, |at, chunk| put(at, &chunk))
    }

    /// Reads the next bytes of the range, at most `len`, as the chunks they came in from the
    /// network (each `Bytes` shares the network buffer it arrived in: no copy); fewer than
    /// `len` bytes only at the end of the range (none there, and when `len` is 0). For a caller
    /// that keeps the bytes where they arrived, such as a stream's block lent to Java.
    ///
    /// Waits as [`read_with`](Self::read_with) does.
    ///
    /// # Errors
    /// As [`read_with`](Self::read_with).
    pub fn read_chunks(&mut self, len: usize) -> Result<Vec<Bytes>> {
        let mut chunks = Vec::new();
        self.drive(len, |_, chunk| {
            chunks.push(chunk);
            Ok::<(), Error>(())
        })?;
        Ok(chunks)
    }

    /// The loop of [`read_with`](Self::read_with) and [`read_chunks`](Self::read_chunks):
    /// the body's chunks, at most `len` bytes, each handed to `put(offset, chunk)`.
    fn drive<E: From<Error>>(
        &mut self,
        len: usize,
        mut put: impl FnMut(usize, Bytes) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        let Some(runtime) = self.runtime.as_ref() else {
            return Ok(0);
        };
        let body = &mut self.body;
        let wait = match self.wait_millis.load(Ordering::Relaxed) {
            u64::MAX => None,
            millis => Some(Duration::from_millis(millis)),
        };
        let scope = driven::scoped(
            self.background.clone(),
            self.wait_millis.clone(),
            async move {
                // One timer per call, pushed back whenever bytes arrive (extending a tokio
                // timer is an atomic store; a timer per chunk would cost a timer-wheel insert
                // and removal each).
                let deadline = wait.map(tokio::time::sleep);
                tokio::pin!(deadline);
                let mut filled = 0;
                while filled < len {
                    let next = body.next_chunk_max(len - filled);
                    let chunk = match deadline.as_mut().as_pin_mut() {
                        None => next.await?,
                        Some(mut deadline) => {
                            let chunk = tokio::select! {
                                biased;
                                chunk = next => chunk?,
                                () = deadline.as_mut() => {
                                    return Err(stalled(body, wait.unwrap_or_default()).into());
                                }
                            };
                            if let Some(wait) = wait {
                                deadline.reset(tokio::time::Instant::now() + wait);
                            }
                            chunk
                        }
                    };
                    let Some(chunk) = chunk else {
                        break;
                    };
                    let n = chunk.len();
                    put(filled, chunk)?;
                    filled += n;
                }
                // At the last byte: the end of the body, where its checksum is compared.
                body.finish_if_complete().await?;
                Ok(filled)
            },
        );
        runtime.block_on(scope)
    }
}

fn stalled(body: &ObjectBody, wait: Duration) -> Error {
    Error::ObjectStore(Arc::new(object_store::Error::Generic {
        store: "reader",
        source: format!(
            "no bytes of {} came from the endpoint for {} ms",
            body.info().path,
            wait.as_millis()
        )
        .into(),
    }))
}

impl std::io::Read for BlockingObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let len = buf.len();
        self.read_with(len, |at, bytes: &[u8]| {
            buf[at..at + bytes.len()].copy_from_slice(bytes);
            Ok::<(), Error>(())
        })
        .map_err(std::io::Error::other)
    }
}

impl Drop for BlockingObjectReader {
    fn drop(&mut self) {
        // Without blocking (a drop may happen in an async context): the connection task is
        // dropped and the socket closed.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream::{self, StreamExt};

    /// A reader of a body that sends `first`, then nothing, waiting at most `wait`.
    fn stalling(first: &'static [u8], wait: Duration) -> BlockingObjectReader {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let chunks = stream::iter([Ok(bytes::Bytes::from_static(first))]).chain(stream::pending());
        BlockingObjectReader {
            body: ObjectBody::from_stream(1 << 20, chunks.boxed()),
            background: runtime.handle().clone(),
            wait_millis: Arc::new(AtomicU64::new(wait.as_millis() as u64)),
            runtime: Some(runtime),
        }
    }

    #[test]
    fn a_stalled_endpoint_fails_the_read_after_the_wait_without_new_bytes() {
        let mut r = stalling(b"abc", Duration::from_millis(200));
        let mut got = Vec::new();
        let started = std::time::Instant::now();
        let err = r
            .read_with(16, |_, b| {
                got.extend_from_slice(b);
                Ok::<(), Error>(())
            })
            .expect_err("only 3 of 16 bytes came");
        assert_eq!(got, b"abc", "the bytes before the stall were handed over");
        assert_eq!(err.kind(), crate::ErrorKind::Io);
        assert!(err.to_string().contains("for 200 ms"), "{err}");
        let waited = started.elapsed();
        // Generous slack for a loaded machine.
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(20), "{waited:?}");
    }

    #[test]
    fn read_chunks_lends_the_network_buffers_cut_at_the_length_asked() {
        static FIRST: &[u8] = b"abcdef";
        static SECOND: &[u8] = b"ghij";
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let chunks = stream::iter([
            Ok(bytes::Bytes::from_static(FIRST)),
            Ok(bytes::Bytes::from_static(SECOND)),
        ]);
        let mut r = BlockingObjectReader {
            body: ObjectBody::from_stream(10, chunks.boxed()),
            background: runtime.handle().clone(),
            wait_millis: Arc::new(AtomicU64::new(u64::MAX)),
            runtime: Some(runtime),
        };
        let block = r.read_chunks(8).unwrap();
        assert_eq!(block.len(), 2);
        // The same memory the chunks arrived in: the block is lent, not copied.
        assert_eq!(block[0].as_ptr(), FIRST.as_ptr());
        assert_eq!(block[1].as_ptr(), SECOND.as_ptr());
        assert_eq!((&block[0][..], &block[1][..]), (&b"abcdef"[..], &b"gh"[..]));
        let rest = r.read_chunks(100).unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(
            (rest[0].as_ptr(), &rest[0][..]),
            (SECOND[2..].as_ptr(), &b"ij"[..])
        );
        assert!(
            r.read_chunks(100).unwrap().is_empty(),
            "the end of the range"
        );
    }
}
