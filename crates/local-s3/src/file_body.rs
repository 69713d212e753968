//! A faster body for GET answers. s3s-fs streams an object's file in 4 KiB reads, each a hop
//! to tokio's blocking pool, which caps a large GET at a small share of what loopback carries
//! (the endpoint, not the client, was the limit of every throughput benchmark). The answer's
//! bytes are re-read here from the same file in 1 MiB reads on one blocking thread, at most
//! [`CHUNKS_AHEAD`] chunks ahead of the connection (memory per GET: about 3 MiB).
//!
//! s3s-fs still answers the request (authorization, headers, ETag, ranges, errors): only the
//! body of a `200`/`206` answer is replaced, and only when the file opened here has the size
//! the answer announces (a PUT that replaced the object in between keeps s3s-fs's body).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;
use hyper::header::{CONTENT_LENGTH, CONTENT_RANGE};
use hyper::StatusCode;
use s3s::stream::{ByteStream, RemainingLength};
use s3s::{Body, HttpResponse, StdError};
use tokio::sync::mpsc;

/// Bytes per blocking read.
const CHUNK: usize = 1 << 20;
/// Chunks read ahead of the connection.
const CHUNKS_AHEAD: usize = 2;

/// Replaces the body of a successful GET answer for `file` with one read in 1 MiB chunks.
/// Leaves any other answer, and answers whose headers cannot be matched to the file, as they
/// are.
pub(crate) fn replace(resp: &mut HttpResponse, file: &Path) {
    if !matches!(resp.status(), StatusCode::OK | StatusCode::PARTIAL_CONTENT) {
        return;
    }
    let header = |name| {
        resp.headers()
            .get(name)
            .and_then(|v: &hyper::header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let Some(length) = header(CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok()) else {
        return;
    };
    // `bytes FIRST-LAST/TOTAL` on a 206; the whole file on a 200.
    let (start, total) = match header(CONTENT_RANGE) {
        Some(range) => match parse_content_range(&range) {
            Some((first, total)) => (first, Some(total)),
            None => return,
        },
        None => (0, None),
    };
    let Ok(mut f) = File::open(file) else {
        return;
    };
    let Ok(size) = f.metadata().map(|m| m.len()) else {
        return;
    };
    let expected_size = total.unwrap_or(length);
    if size != expected_size || start.checked_add(length).is_none_or(|end| end > size) {
        return;
    }
    if f.seek(SeekFrom::Start(start)).is_err() {
        return;
    }
    let Ok(length) = usize::try_from(length) else {
        return;
    };
    let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
    tokio::task::spawn_blocking(move || read_chunks(f, length, &tx));
    *resp.body_mut() = Body::from(Box::pin(FileChunks {
        rx,
        remaining: length,
    }) as s3s::stream::DynByteStream);
}

/// Reads `length` bytes of `f` into the channel until done, failed or the receiver is gone.
fn read_chunks(mut f: File, mut length: usize, tx: &mpsc::Sender<io::Result<Bytes>>) {
    while length > 0 {
        let n = length.min(CHUNK);
        let mut buf = vec![0u8; n];
        let chunk = f.read_exact(&mut buf).map(|()| Bytes::from(buf));
        let failed = chunk.is_err();
        if tx.blocking_send(chunk).is_err() || failed {
            return;
        }
        length -= n;
    }
}

/// `(first, total)` of `bytes FIRST-LAST/TOTAL`.
fn parse_content_range(value: &str) -> Option<(u64, u64)> {
    let rest = value.strip_prefix("bytes ")?;
    let (span, total) = rest.split_once('/')?;
    let (first, _last) = span.split_once('-')?;
    Some((first.trim().parse().ok()?, total.trim().parse().ok()?))
}

struct FileChunks {
    rx: mpsc::Receiver<io::Result<Bytes>>,
    remaining: usize,
}

impl Stream for FileChunks {
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

impl ByteStream for FileChunks {
    fn remaining_length(&self) -> RemainingLength {
        RemainingLength::new_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_range() {
        assert_eq!(parse_content_range("bytes 5-9/100"), Some((5, 100)));
        assert_eq!(parse_content_range("bytes 0-0/1"), Some((0, 1)));
        assert_eq!(parse_content_range("bytes */100"), None);
        assert_eq!(parse_content_range("items 0-1/2"), None);
    }
}
