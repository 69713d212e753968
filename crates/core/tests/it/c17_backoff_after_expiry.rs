//! C17 end to end: a store whose provider keeps failing, past its credential's expiry, against
//! the local S3 endpoint. Provider calls follow the refresher's backoff (never one per
//! request), requests fail fast with the provider's error, and the store heals by itself.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{
    Error, ErrorKind, RefreshConfig, Result, StorageOptions, StorageOptionsProvider, VendedStore,
};

const TTL: Duration = Duration::from_secs(3);

/// Vends from the endpoint, or throws "catalog down" (with a source, as a Java exception
/// arrives from the JNI bridge) while `down` is set.
#[derive(Debug)]
struct Flaky {
    inner: EndpointProvider,
    down: AtomicBool,
    calls: AtomicUsize,
}

#[async_trait]
impl StorageOptionsProvider for Flaky {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Err(Error::Provider {
                provider: "flaky".into(),
                message: "java.lang.RuntimeException: catalog down".into(),
                retryable: true,
                source: Some(Arc::new(std::io::Error::other(
                    "java.lang.RuntimeException: catalog down",
                ))),
            });
        }
        Ok(Some(self.inner.vend()))
    }
    fn provider_id(&self) -> String {
        "flaky".into()
    }
}

/// Opens a store on a 3 s credential, writes one object, takes the catalog down, and lets the
/// credential expire (the scenario: the store sits idle past expiry).
async fn expired_store(prefix: &str) -> (Arc<VendedStore>, Arc<Flaky>) {
    let s3 = endpoint().await;
    let provider = Arc::new(Flaky {
        inner: EndpointProvider::new(s3, TTL),
        down: AtomicBool::new(false),
        calls: AtomicUsize::new(0),
    });
    let initial = provider.inner.vend();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/{prefix}"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    store.put("a", Bytes::from_static(b"gen1")).await.unwrap();
    provider.down.store(true, Ordering::SeqCst);
    tokio::time::sleep(TTL + Duration::from_millis(300)).await;
    assert_eq!(provider.calls.load(Ordering::SeqCst), 0);
    (Arc::new(store), provider)
}

fn assert_catalog_down(e: &Error) {
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert!(matches!(e, Error::CredentialsExpired { .. }), "{e:?}");
    assert!(e.to_string().contains("catalog down"), "{e}");
    assert_eq!(
        e.provider_source().map(|s| s.to_string()).as_deref(),
        Some("java.lang.RuntimeException: catalog down"),
        "the provider's error stays the cause"
    );
}

/// After the provider heals, polls (bounded) until a read succeeds; returns the time taken.
async fn heal(store: &VendedStore, provider: &Flaky) -> Duration {
    provider.down.store(false, Ordering::SeqCst);
    let started = Instant::now();
    for _ in 0..200 {
        match store.get("a").await {
            Ok(b) => {
                assert_eq!(b, Bytes::from_static(b"gen1"));
                return started.elapsed();
            }
            Err(e) => assert_catalog_down(&e),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the store did not heal within 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c17_two_hundred_sequential_gets_after_expiry_follow_the_backoff() {
    let (store, provider) = expired_store("c17-seq").await;
    let started = Instant::now();
    for _ in 0..200 {
        assert_catalog_down(&store.get("a").await.unwrap_err());
    }
    let burst = started.elapsed();
    let calls = provider.calls.load(Ordering::SeqCst);
    // Backoff 1 s, then 2 s: a burst shorter than a second makes 1 call; allow one more for a
    // slow machine.
    assert!(
        (1..=2).contains(&calls),
        "{calls} provider calls for 200 gets in {burst:?}"
    );
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.fetches as usize, calls, "{stats:?}");
    assert_eq!(stats.failures as usize, calls, "{stats:?}");
    assert_eq!(stats.backoff_rejections as usize, 200 - calls, "{stats:?}");
    eprintln!("200 sequential gets: {calls} provider calls in {burst:?}");

    // Heals on the same store, no reopen, with one more provider call.
    let took = heal(&store, &provider).await;
    assert_eq!(provider.calls.load(Ordering::SeqCst), calls + 1);
    assert!(took < Duration::from_secs(5), "{took:?}");
    let stats = store.refresh_stats().unwrap();
    assert_eq!((stats.fetches as usize, stats.generation), (calls + 1, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn c17_gets_from_eight_threads_after_expiry_follow_the_backoff() {
    let (store, provider) = expired_store("c17-mt").await;
    let started = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                for _ in 0..25 {
                    assert_catalog_down(&store.get("a").await.unwrap_err());
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let burst = started.elapsed();
    let calls = provider.calls.load(Ordering::SeqCst);
    assert!(
        (1..=2).contains(&calls),
        "{calls} provider calls for 200 gets from 8 threads in {burst:?}"
    );
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures as usize, calls, "{stats:?}");
    // Callers that joined the one in-flight call are not backoff rejections.
    assert!(stats.backoff_rejections >= 150, "{stats:?}");
    eprintln!("200 gets from 8 threads: {calls} provider calls in {burst:?}");

    heal(&store, &provider).await;
    assert_eq!(provider.calls.load(Ordering::SeqCst), calls + 1);
}
