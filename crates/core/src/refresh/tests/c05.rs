//! C05: concurrent callers share one provider call; failures and cancellations do not stick.

use super::*;

async fn storm(f: &Fixture, n: usize) -> Vec<Result<String>> {
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let r = f.refresher.clone();
        tasks.push(tokio::spawn(async move {
            r.get_credential().await.map(|(c, _)| (*c).clone())
        }));
    }
    let mut out = Vec::with_capacity(n);
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_thousand_callers_after_expiry_share_one_provider_call() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let results = storm(&f, 1000).await;
    assert_eq!(f.calls(), 1);
    assert!(results.iter().all(|r| matches!(r.as_deref(), Ok("gen2"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_failure_reaches_waiters_but_is_not_cached() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![Box::new(|_| {
            Err(Error::provider("scripted", "catalog down"))
        })],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let results = storm(&f, 1000).await;
    assert_eq!(f.calls(), 1);
    for r in &results {
        let e = r.as_ref().unwrap_err().to_string();
        assert!(e.contains("catalog down") && e.contains("scripted"), "{e}");
    }
    // During the backoff the next call fails fast with the same error (C17)...
    let e = f.key().await.unwrap_err();
    assert!(e.to_string().contains("catalog down"), "{e}");
    assert_eq!(f.calls(), 1, "no provider call during the backoff");
    // ...and the failure is not cached: the first call after it tries again.
    f.clock.advance(1_000);
    assert_eq!(f.key().await.unwrap(), "gen2", "the next call tries again");
    assert_eq!(f.calls(), 2);
    let stats = f.refresher.stats();
    assert_eq!(
        (stats.fetches, stats.failures, stats.backoff_rejections),
        (2, 1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_cancelled_leader_does_not_wedge_the_others() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let entered = f.provider.entered.notified();
    let r = f.refresher.clone();
    let leader = tokio::spawn(async move { r.get_credential().await.map(|_| ()) });
    entered.await;
    leader.abort();
    let results = storm(&f, 100).await;
    assert!(results.iter().all(|r| matches!(r.as_deref(), Ok("gen2"))));
    assert_eq!(f.calls(), 1, "the followers joined the leader's refresh");
}
