//! Object bytes in and out. A request body is written to a new data file while its MD5 (the
//! ETag) and any requested checksums are computed. A GET's body is read from the object's
//! segments in 1 MiB reads on one blocking thread, at most [`CHUNKS_AHEAD`] chunks ahead of
//! the connection (about 3 MiB of memory per GET), holding the [`Object`] so that its data
//! files outlive a concurrent overwrite or delete until the read is done.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use s3s::checksum::ChecksumHasher;
use s3s::crypto::{Checksum as _, Md5};
use s3s::dto::StreamingBlob;
use s3s::stream::{ByteStream, RemainingLength};
use s3s::{s3_error, S3Result, StdError};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::index::Object;

/// Bytes per blocking read.
const CHUNK: usize = 1 << 20;
/// Chunks read ahead of the connection.
const CHUNKS_AHEAD: usize = 2;

/// What writing a body produced.
pub(crate) struct Written {
    pub size: u64,
    pub md5: [u8; 16],
}

/// Writes `body` to a new file `path`, feeding `checksums`. On error the file is removed.
pub(crate) async fn write(
    body: StreamingBlob,
    path: &Path,
    checksums: &mut ChecksumHasher,
) -> S3Result<Written> {
    let result = write_inner(body, path, checksums).await;
    if result.is_err() {
        let _ = tokio::fs::remove_file(path).await;
    }
    result
}

async fn write_inner(
    mut body: StreamingBlob,
    path: &Path,
    checksums: &mut ChecksumHasher,
) -> S3Result<Written> {
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
    }
    let file = tokio::fs::File::create(path)
        .await
        .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
    let mut out = tokio::io::BufWriter::with_capacity(CHUNK, file);
    let mut md5 = Md5::new();
    let mut size = 0u64;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| s3_error!(IncompleteBody, "reading the body failed: {e}"))?;
        md5.update(&chunk);
        checksums.update(&chunk);
        size += chunk.len() as u64;
        out.write_all(&chunk)
            .await
            .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
    }
    out.flush()
        .await
        .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
    Ok(Written {
        size,
        md5: md5.finalize(),
    })
}

/// A body of `length` bytes of `object` from byte `start`.
pub(crate) fn read(object: Arc<Object>, start: u64, length: u64) -> StreamingBlob {
    let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
    tokio::task::spawn_blocking(move || read_chunks(&object, start, length, &tx));
    let remaining = usize::try_from(length).unwrap_or(usize::MAX);
    StreamingBlob::new(SegmentChunks { rx, remaining })
}

/// Reads the range into the channel until done, failed or the receiver is gone.
fn read_chunks(
    object: &Object,
    mut start: u64,
    mut length: u64,
    tx: &mpsc::Sender<io::Result<Bytes>>,
) {
    for segment in &object.manifest.segments {
        if length == 0 {
            return;
        }
        if start >= segment.size {
            start -= segment.size;
            continue;
        }
        let opened = File::open(object.segment_path(segment))
            .and_then(|mut f| f.seek(SeekFrom::Start(start)).map(|_| f));
        let mut f = match opened {
            Ok(f) => f,
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        };
        let mut in_segment = (segment.size - start).min(length);
        start = 0;
        while in_segment > 0 {
            let n = usize::try_from(in_segment).unwrap_or(CHUNK).min(CHUNK);
            let mut buf = vec![0u8; n];
            let chunk = f.read_exact(&mut buf).map(|()| Bytes::from(buf));
            let failed = chunk.is_err();
            if tx.blocking_send(chunk).is_err() || failed {
                return;
            }
            in_segment -= n as u64;
            length -= n as u64;
        }
    }
}

struct SegmentChunks {
    rx: mpsc::Receiver<io::Result<Bytes>>,
    remaining: usize,
}

impl Stream for SegmentChunks {
    type Item = Result<Bytes, StdError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                self.remaining = self.remaining.saturating_sub(chunk.len());
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl ByteStream for SegmentChunks {
    fn remaining_length(&self) -> RemainingLength {
        RemainingLength::new_exact(self.remaining)
    }
}
