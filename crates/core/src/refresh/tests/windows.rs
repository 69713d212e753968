//! The prefetch and stale windows, a store opened without a credential, and permanent
//! failures.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_provider_in_prefetch_window_adds_no_latency() {
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::from_secs(2),
        false,
    );
    f.clock.advance(301_000);
    let started = Instant::now();
    for _ in 0..100 {
        assert_eq!(f.key().await.unwrap(), "gen1");
    }
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "{:?}",
        started.elapsed()
    );
    assert!(f.refresher.wait_idle().await.unwrap().is_ok());
    assert_eq!(f.calls(), 1);
    assert_eq!(f.key().await.unwrap(), "gen2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_window_wait_is_bounded_and_expired_wait_times_out() {
    let config = RefreshConfig {
        provider_timeout: Duration::from_millis(300),
        ..no_jitter(300)
    };
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        config,
        vec![],
        Duration::ZERO,
        true,
    );
    f.clock.set(T0 + 600_000 - 10_000); // inside the 30 s stale window
    let started = Instant::now();
    assert_eq!(
        f.key().await.unwrap(),
        "gen1",
        "still valid after the bounded wait"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(f.refresher.stats().stale_waits, 1);
    f.clock.set(T0 + 600_001);
    let e = f.key().await.unwrap_err();
    assert!(
        matches!(e, Error::Timeout { .. } | Error::CredentialsExpired { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("scripted"), "{e}");
}

#[tokio::test]
async fn no_initial_credential_fetches_on_first_use() {
    let initial: StorageOptions = [(AWS_REGION.to_string(), "us-east-1".to_string())]
        .into_iter()
        .collect();
    let f = fixture(initial, no_jitter(300), vec![], Duration::ZERO, false);
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.calls(), 1);
    assert_eq!(f.refresher.current_options()[AWS_REGION], "us-east-1");
}

#[tokio::test]
async fn permanent_provider_failures_back_off_at_the_slowest_pace() {
    // What a catalog provider reports for a 503 (retryable) and a 404 (permanent).
    fn failure(retryable: bool, status: u16) -> Answer {
        Box::new(move |_| {
            Err(Error::Provider {
                provider: "scripted".into(),
                message: format!("describe table 't' failed: HTTP {status}"),
                retryable,
                source: None,
            })
        })
    }
    for (kind, status, retried_after_2s) in [(true, 503, true), (false, 404, false)] {
        let f = fixture(
            creds("gen1", Some(T0 + 600_000)),
            no_jitter(300),
            vec![failure(kind, status), failure(kind, status)],
            Duration::ZERO,
            false,
        );
        f.clock.advance(301_000);
        f.key().await.unwrap();
        f.refresher.wait_idle().await;
        f.clock.advance(2_000);
        f.key().await.unwrap();
        f.refresher.wait_idle().await;
        assert_eq!(
            f.calls() == 2,
            retried_after_2s,
            "{status}: {} calls",
            f.calls()
        );
    }
}
