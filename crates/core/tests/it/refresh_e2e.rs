//! End to end against the local S3 endpoint, which rejects expired and revoked credentials:
//! a refreshing store keeps working across many rotations; a static one does not.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{Error, RefreshConfig, StorageOptionsProvider};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotating_two_second_credentials_serve_ten_seconds_of_concurrent_io() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(2)));
    let initial = provider.vend();
    let registry = registry();
    let store = Arc::new(
        registry
            .open(
                &format!("s3://{BUCKET}/e2e"),
                initial.clone(),
                Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
                RefreshConfig::default(),
            )
            .unwrap(),
    );
    assert_eq!(provider.calls(), 0, "the initial options seed the cache");

    let deadline = Instant::now() + Duration::from_secs(10);
    let mut workers = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut verified = 0u64;
            let mut i = 0u64;
            while Instant::now() < deadline && i < 100_000 {
                let path = format!("w{w}/obj-{i}");
                let body = Bytes::from(format!("worker {w} object {i}"));
                store.put(&path, body.clone()).await.expect("put");
                assert_eq!(store.get(&path).await.expect("get"), body);
                verified += 1;
                i += 1;
            }
            verified
        }));
    }
    let mut verified = 0;
    for w in workers {
        verified += w.await.unwrap();
    }
    assert!(verified > 40, "only {verified} objects verified");

    let calls = provider.calls();
    // 2 s credentials refresh about every second (lead = half the lifetime, minus jitter).
    assert!(
        (4..=40).contains(&calls),
        "provider called {calls} times in 10 s"
    );
    for key in provider.vended_keys() {
        let stats = s3.key_stats(&key);
        assert_eq!(
            stats.rejected, 0,
            "key {key} had rejected requests: {stats:?}"
        );
    }
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0);
    assert_eq!(stats.generation as usize, calls + 1);

    // Control: the same first credentials as static options have expired by now; the
    // registry rejects them at open (C20) instead of letting the endpoint answer ExpiredToken.
    let e = registry
        .open(
            &format!("s3://{BUCKET}/control"),
            initial,
            None,
            RefreshConfig::default(),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("expires_at_millis") && e.to_string().contains("in the past"),
        "{e}"
    );
    assert_eq!(e.kind(), vended_storage::ErrorKind::InvalidOptions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c01_idle_store_refetches_after_expiry_and_signs_with_gen2() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(2)));
    let initial = provider.vend();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/c01"),
            initial,
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("a", Bytes::from_static(b"gen1 wrote this"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await; // the scenario: idle past expiry
    assert_eq!(
        store.get("a").await.unwrap(),
        Bytes::from_static(b"gen1 wrote this")
    );
    assert!(provider.calls() >= 1);
    let keys = provider.vended_keys();
    let gen1 = s3.key_stats(&keys[0]);
    assert_eq!(gen1.rejected, 0, "nothing was signed with the expired gen1");
    let last = s3.key_stats(keys.last().unwrap());
    assert!(
        last.accepted >= 1,
        "the read was signed by a fresh generation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c08_no_expiry_credentials_are_refetched_once_after_rejection() {
    let s3 = endpoint().await;
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let initial = provider.vend();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/c08"),
            initial,
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store.put("a", Bytes::from_static(b"1")).await.unwrap();
    assert_eq!(provider.calls(), 0);
    let gen1 = provider.vended_keys()[0].clone();
    s3.revoke(&gen1);
    // The endpoint rejects gen1 once; the store refetches once and retries once.
    assert_eq!(store.get("a").await.unwrap(), Bytes::from_static(b"1"));
    assert_eq!(provider.calls(), 1);
    assert_eq!(s3.key_stats(&gen1).rejected, 1);
    let gen2 = provider.vended_keys()[1].clone();
    assert_eq!(s3.key_stats(&gen2).accepted, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_failure_with_a_failing_provider_reports_both() {
    let s3 = endpoint().await;
    #[derive(Debug)]
    struct Down;
    #[async_trait::async_trait]
    impl StorageOptionsProvider for Down {
        async fn fetch_storage_options(
            &self,
        ) -> vended_storage::Result<Option<vended_storage::StorageOptions>> {
            Err(Error::provider("down", "catalog down"))
        }
        fn provider_id(&self) -> String {
            "down".into()
        }
    }
    let creds = s3.issue_credentials(Duration::from_secs(3600), None);
    let mut initial = s3.storage_options(&creds);
    initial.remove("expires_at_millis");
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/down"),
            initial,
            Some(Arc::new(Down) as _),
            RefreshConfig::default(),
        )
        .unwrap();
    s3.revoke(&creds.access_key_id);
    let e = store.get("missing").await.unwrap_err();
    assert!(matches!(e, Error::Provider { .. }), "{e:?}");
    assert!(e.to_string().contains("catalog down"), "{e}");
}
