//! Case C31: a credential is never used to sign within a small margin of its expiry (1 s, or a
//! tenth of a shorter credential's lifetime), so a request signed just before expiry does not
//! reach the endpoint after it; requests inside the margin wait for the refresh already under
//! way. Timing is the refresher's manual clock and tokio's paused clock: no real sleeps.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::providers::{creds, refresher, NOW};
use common::{endpoint, registry, EndpointProvider};
use tokio::sync::{Notify, Semaphore};
use vended_storage::refresh::{signing_margin_millis, ManualClock, SIGNING_MARGIN_MILLIS};
use vended_storage::{RefreshConfig, Result, StorageOptions, StorageOptionsProvider};

/// Vends `GEN2` (valid 3 s more) once the test releases it; says when a call has started.
#[derive(Debug)]
struct Gated {
    calls: AtomicUsize,
    entered: Notify,
    release: Semaphore,
}

impl Default for Gated {
    fn default() -> Self {
        Self {
            calls: AtomicUsize::new(0),
            entered: Notify::new(),
            release: Semaphore::new(0),
        }
    }
}

#[async_trait]
impl StorageOptionsProvider for Gated {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.entered.notify_one();
        let _permit = self.release.acquire().await;
        Ok(Some(creds("GEN2", NOW + 6_000)))
    }
    fn provider_id(&self) -> String {
        "c31-gated".into()
    }
}

#[test]
fn c31_the_margin_is_one_second_or_a_tenth_of_a_short_lifetime() {
    assert_eq!(SIGNING_MARGIN_MILLIS, 1_000);
    assert_eq!(signing_margin_millis(NOW + 3_600_000, NOW), 1_000);
    assert_eq!(signing_margin_millis(NOW + 3_000, NOW), 300);
    assert_eq!(signing_margin_millis(NOW - 5, NOW), 0);
}

#[tokio::test(start_paused = true)]
async fn c31_a_request_inside_the_margin_waits_for_the_refresh_under_way() {
    let clock = Arc::new(ManualClock::new(NOW));
    let provider = Arc::new(Gated::default());
    // GEN1 lives 3 s: margin 300 ms, lead 1.5 s, stale window 750 ms.
    let r = refresher(provider.clone(), creds("GEN1", NOW + 3_000), clock.clone());
    assert_eq!(*r.get_credential().await.unwrap().0, "GEN1");
    // 5 ms before expiry (what a loaded machine delivers 1-11 ms late): the refresh starts
    // and the request waits for it rather than signing with GEN1.
    clock.set(NOW + 2_995);
    assert!(
        r.try_fresh().is_none(),
        "the hot path never serves inside the margin"
    );
    let waiting = tokio::spawn({
        let r = r.clone();
        async move { r.get_credential().await.map(|(c, _)| (*c).clone()) }
    });
    provider.entered.notified().await;
    // Until GEN1's real expiry and well beyond (paused clock: timers fire in order), the
    // request is still waiting: it was never handed GEN1.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!waiting.is_finished(), "signed inside the margin");
    provider.release.add_permits(1);
    assert_eq!(waiting.await.unwrap().unwrap(), "GEN2");
    assert_eq!(provider.calls.load(Ordering::SeqCst), 1, "one refresh");
}

#[tokio::test(start_paused = true)]
async fn c31_the_last_usable_moment_is_expiry_minus_the_margin() {
    let clock = Arc::new(ManualClock::new(NOW));
    let provider = Arc::new(Gated::default());
    provider.release.add_permits(10);
    let r = refresher(provider.clone(), creds("GEN1", NOW + 3_000), clock.clone());
    // Just before the margin GEN1 still signs (while a refresh may run in the background).
    clock.set(NOW + 2_699);
    let (c, _) = r.get_credential().await.unwrap();
    assert!(*c == "GEN1" || *c == "GEN2", "{c}");
    // From expiry minus 300 ms on, only GEN2.
    clock.set(NOW + 2_700);
    assert_eq!(*r.get_credential().await.unwrap().0, "GEN2");
}

/// Steady reads on 3 s credentials against the endpoint: across two rotations the endpoint
/// never sees an expired signature.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c31_steady_reads_on_short_credentials_never_reach_the_endpoint_expired() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(3)));
    let refresh = RefreshConfig {
        lead_time: Duration::from_millis(400),
        ..RefreshConfig::default()
    };
    let store = registry()
        .open(
            &format!("s3://{}/c31", common::BUCKET),
            provider.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            refresh,
        )
        .unwrap();
    store
        .put("obj", bytes::Bytes::from_static(b"x"))
        .await
        .unwrap();
    let store = Arc::new(store);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(6_500);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            while tokio::time::Instant::now() < deadline {
                store.get("obj").await.expect("read");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let expired: u64 = s3.all_stats().values().map(|s| s.expired).sum();
    assert_eq!(
        expired, 0,
        "requests reached the endpoint with an expired key"
    );
    assert!(provider.calls() >= 2, "rotated: {}", provider.calls());
}
