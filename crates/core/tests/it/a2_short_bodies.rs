//! A2 (found by an attack on this library, not a field case): an endpoint that announces a body's length (`content-length`) and closes the connection
//! after fewer bytes, on every GET. `object_store` asks again for the rest (a ranged GET, as
//! many times as `max_retries` allows); the read then fails with a message naming the
//! location, the range asked for, the byte reached and that the body ended early, kind
//! `Transient`.

use crate::catalog_support::{MockCatalog, Recorded, Reply};
use crate::common;

use common::providers::opts;
use vended_storage::{ErrorKind, RefreshConfig, VendedStore};

/// The object's size.
const SIZE: u64 = 1000;

/// The inclusive `bytes=a-b` range of `request`, if any.
fn range_of(request: &Recorded) -> Option<(u64, u64)> {
    let (a, b) = request
        .header("range")?
        .strip_prefix("bytes=")?
        .split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// An S3 endpoint holding one object of [`SIZE`] bytes whose GET answers (whole or ranged)
/// announce the whole length asked for and send at most `sent` bytes of it.
fn short_server(sent: u64) -> MockCatalog {
    MockCatalog::start(move |r| {
        let base = |status| {
            Reply::xml(status, "")
                .header("etag", "\"c33\"")
                .header("last-modified", "Mon, 07 Dec 2026 12:00:00 GMT")
                .header("accept-ranges", "bytes")
        };
        if r.method == "HEAD" {
            return base(200).announcing(SIZE as usize);
        }
        let (start, last) = range_of(r).unwrap_or((0, SIZE - 1));
        let last = last.min(SIZE - 1);
        let len = last + 1 - start;
        let mut reply = base(if range_of(r).is_some() { 206 } else { 200 });
        if range_of(r).is_some() {
            reply = reply.header("content-range", format!("bytes {start}-{last}/{SIZE}"));
        }
        reply.body = "x".repeat(len.min(sent) as usize);
        reply.announcing(len as usize)
    })
}

fn open(url: &str, retries: &str) -> VendedStore {
    let options = opts(&[
        ("aws_endpoint", url),
        ("aws_allow_http", "true"),
        ("aws_region", "us-east-1"),
        ("aws_access_key_id", "AKIDC33"),
        ("aws_secret_access_key", "c33-secret-access-key"),
        ("max_retries", retries),
        ("retry_init_backoff", "1ms"),
        ("retry_max_backoff", "2ms"),
    ]);
    common::registry()
        .open("s3://c33/p", options, None, RefreshConfig::default())
        .unwrap()
}

fn gets(server: &MockCatalog) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_a_body_ending_early_names_location_range_and_the_byte_reached() {
    let server = short_server(100);
    let store = open(&server.url(), "2");

    // The whole object: three GETs (one, and max_retries=2 asking for the rest), each sending
    // 100 bytes, so the body ended at byte 300 of 0..1000.
    let e = store.get("dir/k").await.unwrap_err();
    let message = e.to_string();
    eprintln!("get: {message}");
    assert!(
        message.starts_with("GET s3://c33/p/dir/k: the body of bytes 0..1000 ended early at byte 300 (300 of 1000 bytes received"),
        "{message}"
    );
    assert_eq!(e.kind(), ErrorKind::Transient, "{message}");
    assert!(e.is_retryable());
    assert_eq!(gets(&server), 3, "one GET and max_retries=2 for the rest");

    // A range: the same, from its start.
    let e = store.get_range("dir/k", 100..900).await.unwrap_err();
    let message = e.to_string();
    eprintln!("range: {message}");
    assert!(
        message.starts_with("GET s3://c33/p/dir/k: the body of bytes 100..900 ended early at byte 400 (300 of 800 bytes received"),
        "{message}"
    );
    assert_eq!(e.kind(), ErrorKind::Transient, "{message}");
    assert_eq!(gets(&server), 6);

    // A body read chunk by chunk (streams): the bytes before the end arrive, then the error.
    let mut body = store.read_range("dir/k", 0..SIZE, None).await.unwrap();
    let mut received = 0;
    let e = loop {
        match body.next_chunk().await {
            Ok(Some(chunk)) => received += chunk.len(),
            Ok(None) => panic!("the body ended without an error"),
            Err(e) => break e,
        }
    };
    assert_eq!(received, 300);
    assert!(
        e.to_string()
            .starts_with("GET s3://c33/p/dir/k: the body of bytes 0..1000 ended early at byte 300"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_with_default_retries_a_short_body_costs_eleven_gets() {
    // Backoff shortened; max_retries left at object_store's default (10). The retries of the
    // body share one budget with the request's own: 1 + 10 GETs, whatever the reason.
    let server = short_server(50);
    let store = open(&server.url(), "10");
    let e = store.get("dir/k").await.unwrap_err();
    assert!(e.to_string().contains("ended early at byte 550"), "{e}");
    assert_eq!(gets(&server), 11);
}
