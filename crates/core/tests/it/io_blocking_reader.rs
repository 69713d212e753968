//! `BlockingObjectReader` against the local S3 endpoint: a GET read by blocking calls whose
//! connection is driven by the reading thread, while a credential refresh it starts runs on
//! the background runtime and outlives the reader.

use crate::common;

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use tokio::runtime::Runtime;
use vended_storage::io::BlockingObjectReader;
use vended_storage::{ErrorKind, RefreshConfig, Result, StorageOptions, StorageOptionsProvider};

const MIB: usize = 1 << 20;

/// The endpoint provider, answering only after `delay` (a catalog taking its time).
#[derive(Debug)]
struct SlowProvider {
    inner: EndpointProvider,
    delay: Duration,
}

#[async_trait]
impl StorageOptionsProvider for SlowProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        tokio::time::sleep(self.delay).await;
        self.inner.fetch_storage_options().await
    }
    fn provider_id(&self) -> String {
        self.inner.provider_id()
    }
}

fn background() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_blocking_reader_reads_its_range_on_the_calling_thread() {
    let bg = background();
    let s3 = bg.block_on(endpoint());
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(3600)));
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/blocking"),
            provider.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let src = data(8 * MIB + 17, 21);
    bg.block_on(store.put("obj", Bytes::from(src.clone())))
        .unwrap();

    // The whole object through std::io::Read, in reads of odd sizes (a range past the end is
    // cut at the end).
    let past = src.len() as u64 + 100;
    let mut r =
        BlockingObjectReader::open(&store, "obj", 0..past, None, bg.handle().clone()).unwrap();
    assert_eq!(r.range(), 0..src.len() as u64);
    assert_eq!(r.info().size, src.len() as u64);
    let mut got = Vec::new();
    let mut buf = vec![0u8; 333_333];
    loop {
        let n = r.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got.len(), src.len());
    assert!(got == src, "the bytes read differ from the object");
    assert_eq!(r.read(&mut buf).unwrap(), 0, "at the end");

    // A range in the middle, dropped before its end (its connection closes with it).
    let mut r = BlockingObjectReader::open(
        &store,
        "obj",
        1000..2 * MIB as u64,
        None,
        bg.handle().clone(),
    )
    .unwrap();
    let mut head = vec![0u8; 4096];
    r.read_exact(&mut head).unwrap();
    assert_eq!(&head[..], &src[1000..1000 + 4096]);
    drop(r);

    // Past the end: an empty reader; a changed ETag: Precondition.
    let mut r = BlockingObjectReader::open(
        &store,
        "obj",
        src.len() as u64..src.len() as u64 + 10,
        None,
        bg.handle().clone(),
    )
    .unwrap();
    assert_eq!(r.read(&mut buf).unwrap(), 0);
    let err =
        BlockingObjectReader::open(&store, "obj", 0..10, Some("\"stale\""), bg.handle().clone())
            .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Precondition);
    let stats = s3.key_stats(&provider.vended_keys()[0]);
    assert_eq!(stats.rejected, 0);
}

#[test]
fn a_refresh_started_by_a_blocking_reader_outlives_the_reader() {
    // Credentials of 2 s refresh about 1 s after vending; the provider takes 300 ms, so every
    // refresh a reader starts is still running when that reader (and its runtime) is dropped.
    let bg = background();
    let s3 = bg.block_on(endpoint());
    let provider = Arc::new(SlowProvider {
        inner: EndpointProvider::new(s3.clone(), Duration::from_secs(2)),
        delay: Duration::from_millis(300),
    });
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/blocking-refresh"),
            provider.inner.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let src = data(64 * 1024, 22);
    bg.block_on(store.put("obj", Bytes::from(src.clone())))
        .unwrap();

    let started = Instant::now();
    let mut reads = 0;
    // Bounded: at most 8 s and 100,000 readers, until two refreshes have completed (the
    // third generation serves).
    while started.elapsed() < Duration::from_secs(8) && reads < 100_000 {
        let mut r = BlockingObjectReader::open(&store, "obj", 0..1024, None, bg.handle().clone())
            .unwrap_or_else(|e| panic!("reader {reads} after {:?}: {e}", started.elapsed()));
        let mut buf = [0u8; 1024];
        r.read_exact(&mut buf).unwrap();
        assert_eq!(&buf[..], &src[..1024]);
        drop(r);
        reads += 1;
        if store.refresh_stats().unwrap().generation >= 3 {
            break;
        }
    }
    let stats = store.refresh_stats().unwrap();
    assert!(stats.generation >= 3, "{reads} readers saw {stats:?}");
    // One provider call per generation: a refresh cancelled with the reader that started it
    // would be started again by the next reader (a storm of hundreds of calls).
    assert!(
        stats.fetches < stats.generation,
        "{} provider calls for {} refreshes: {stats:?}",
        stats.fetches,
        stats.generation - 1
    );
    assert_eq!(stats.failures, 0, "{stats:?}");
    let rejected: u64 = s3.all_stats().values().map(|s| s.rejected).sum();
    assert_eq!(rejected, 0, "requests signed with an expired key");
}

#[test]
fn a_slow_reader_keeps_its_one_get_past_the_request_timeout() {
    // The store's `timeout` is 1 s; the caller works 2.5 s between two reads of one range.
    // That timeout bounds each wait for the network, not the whole body: the reader goes on
    // with the GET it has (a total-request timeout would end it and `object_store` would send
    // a second, resuming GET; past its retry budget, after 3 minutes, a long scan would fail).
    let bg = background();
    let s3 = bg.block_on(endpoint());
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(3600)));
    let mut initial = provider.vend();
    initial.insert("timeout".into(), "1s".into());
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/blocking-slow"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let src = data(4 * MIB, 23);
    bg.block_on(store.put("obj", Bytes::from(src.clone())))
        .unwrap();
    let mut r = BlockingObjectReader::open(
        &store,
        "obj",
        0..src.len() as u64,
        None,
        bg.handle().clone(),
    )
    .unwrap();
    let mut got = vec![0u8; 64 * 1024];
    r.read_exact(&mut got).unwrap();
    // The scenario itself: a caller busy elsewhere, longer than the timeout.
    std::thread::sleep(Duration::from_millis(2500));
    r.read_to_end(&mut got).unwrap();
    assert!(got == src, "the bytes read differ from the object");
    let gets = s3
        .request_log()
        .iter()
        .filter(|q| q.method == "GET" && q.key.as_deref() == Some("blocking-slow/obj"))
        .count();
    assert_eq!(gets, 1, "GETs of the object");
}

#[test]
fn an_endpoint_that_never_answers_fails_the_open_within_the_retry_budget() {
    // A socket that accepts connections and never sends a byte (a hung server, a path that
    // drops answers). The reader's connection has no timeout of its own; the wait for the
    // answer is bounded per attempt by the store's `timeout`, and object_store retries
    // within `max_retries`.
    let bg = background();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = held.clone();
    std::thread::spawn(move || {
        // Bounded: at most 16 connections are taken (2 attempts are expected).
        for stream in listener.incoming().take(16).flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let options: StorageOptions = [
        ("aws_endpoint", format!("http://127.0.0.1:{port}")),
        ("aws_allow_http", "true".into()),
        ("aws_region", "us-east-1".into()),
        ("aws_access_key_id", "AKIDHUNG".into()),
        ("aws_secret_access_key", "not-a-real-secret".into()),
        ("timeout", "500ms".into()),
        ("max_retries", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/hung"),
            options,
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = bg.handle().clone();
    std::thread::spawn(move || {
        let started = Instant::now();
        let r = BlockingObjectReader::open(&store, "obj", 0..100, None, handle);
        let _ = tx.send((r.map(|_| ()), started.elapsed()));
    });
    let (result, took) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the open still waited after 60 s");
    let err = result.expect_err("nothing answered");
    assert!(
        matches!(err.kind(), ErrorKind::Io | ErrorKind::Timeout),
        "{:?}: {err}",
        err.kind()
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert!(!held.lock().unwrap().is_empty(), "no connection was made");
}

/// A stream read front to back the way Java's `SeekableObjectInputStream` does (issue 32): one
/// GET to the end pinned to the ETag, read in exact block-sized pieces. A flipped response bit
/// fails the read that reaches the last byte with kind `Integrity`.
#[test]
fn a_pinned_read_to_the_end_checks_the_stored_checksum() {
    let bg = background();
    let s3 = bg.block_on(endpoint());
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(3600)));
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/pinned-end"),
            provider.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let src = data(3 * MIB, 5);
    bg.block_on(store.put("obj", Bytes::from(src.clone())))
        .unwrap();
    let etag = bg.block_on(store.head("obj")).unwrap().e_tag;
    s3.flip_next_response(BUCKET, "pinned-end/obj");
    let size = src.len() as u64;
    let mut r = BlockingObjectReader::open_to_end(
        &store,
        "obj",
        0,
        size,
        etag.as_deref(),
        bg.handle().clone(),
    )
    .unwrap();
    let mut buf = vec![0u8; MIB];
    let mut result = Ok(0);
    for _ in 0..3 {
        result = r.read(&mut buf);
        if result.is_err() {
            break;
        }
    }
    let e = result.expect_err("the read reaching the last byte fails");
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
    assert_eq!(s3.flips().response, 1);
}
