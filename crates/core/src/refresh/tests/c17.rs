//! C17: the backoff holds after expiry (and with no credential, and before expiry).

use super::*;

/// What a Java provider's failure looks like once the JNI bridge has turned it into an error:
/// a message, and the throwable as the source.
fn catalog_down() -> Error {
    Error::Provider {
        provider: "scripted".into(),
        message: "java.lang.RuntimeException: catalog down".into(),
        retryable: true,
        source: Some(Arc::new(std::io::Error::other(
            "java.lang.RuntimeException: catalog down",
        ))),
    }
}

fn always_failing(n: usize) -> Vec<Answer> {
    (0..n)
        .map(|_| Box::new(|_| Err(catalog_down())) as Answer)
        .collect()
}

fn assert_is_catalog_down(e: &Error) {
    assert!(matches!(e, Error::CredentialsExpired { .. }), "{e}");
    assert!(e.to_string().contains("catalog down"), "{e}");
    let source = e
        .provider_source()
        .expect("the provider's own error is kept");
    assert_eq!(
        source.to_string(),
        "java.lang.RuntimeException: catalog down"
    );
}

#[tokio::test]
async fn c17_failing_provider_after_expiry_is_called_once_a_second_then_heals() {
    let f = fixture(
        creds("gen1", Some(T0 + 3_000)),
        no_jitter(300),
        always_failing(10_000),
        Duration::ZERO,
        false,
    );
    f.clock.set(T0 + 3_500); // the store sat past expiry
                             // 200 requests back to back: one provider call, then every caller fails fast.
    let started = Instant::now();
    for _ in 0..200 {
        assert_is_catalog_down(&f.key().await.unwrap_err());
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        f.calls(),
        1,
        "one provider call for 200 requests during the backoff"
    );
    // 200 more over 10 s (one every 50 ms): nothing valid is left, so one call a second
    // (`initial_backoff`), never growing (C22).
    for _ in 0..200 {
        f.clock.advance(50);
        assert_is_catalog_down(&f.key().await.unwrap_err());
    }
    // Failures at 3.5 s, 4.5 s, ..., 13.5 s; the next attempt is at 14.5 s.
    assert_eq!(f.calls(), 11, "one provider call a second");
    let stats = f.refresher.stats();
    assert_eq!(
        (stats.fetches, stats.failures, stats.backoff_rejections),
        (11, 11, 389),
        "{stats:?}"
    );
    assert_eq!(stats.generation, 1);
    // The provider heals: the first call after the current delay succeeds, no reopen.
    f.provider.script.lock().unwrap().clear();
    f.clock.set(T0 + 14_499);
    assert_is_catalog_down(&f.key().await.unwrap_err());
    assert_eq!(f.calls(), 11);
    f.clock.set(T0 + 14_500);
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.calls(), 12);
    let stats = f.refresher.stats();
    assert_eq!(
        (stats.fetches, stats.failures, stats.generation),
        (12, 11, 2)
    );
}

#[test]
fn c17_failing_provider_after_expiry_from_eight_threads() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The provider takes 50 ms, so the first callers of each round wait on one shared call.
    let f = rt.block_on(async {
        fixture(
            creds("gen1", Some(T0 + 3_000)),
            no_jitter(300),
            always_failing(10_000),
            Duration::from_millis(50),
            false,
        )
    });
    f.clock.set(T0 + 3_500);
    let run_round = |per_thread: usize| -> Vec<Result<String>> {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let r = f.refresher.clone();
                    let rt = &rt;
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|_| rt.block_on(r.get_credential()).map(|(c, _)| (*c).clone()))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        })
    };
    let started = Instant::now();
    let results = run_round(25);
    assert_eq!(results.len(), 200);
    for r in &results {
        assert_is_catalog_down(r.as_ref().unwrap_err());
    }
    assert_eq!(
        f.calls(),
        1,
        "200 requests from 8 threads, one provider call"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let stats = f.refresher.stats();
    assert_eq!((stats.fetches, stats.failures), (1, 1));
    assert!(stats.backoff_rejections >= 150, "{stats:?}");
    // Still backing off 999 ms later; one more call once the backoff elapses.
    f.clock.advance(999);
    assert!(run_round(5).iter().all(|r| r.is_err()));
    assert_eq!(f.calls(), 1);
    f.clock.advance(1);
    assert!(run_round(5).iter().all(|r| r.is_err()));
    assert_eq!(f.calls(), 2);
    // Heal: after the (fixed 1 s) delay every thread gets gen2 from one call.
    f.provider.script.lock().unwrap().clear();
    f.clock.advance(2_000);
    let results = run_round(25);
    assert!(results.iter().all(|r| matches!(r.as_deref(), Ok("gen2"))));
    assert_eq!(f.calls(), 3);
}

#[tokio::test]
async fn c17_no_credential_yet_and_rejected_credentials_back_off_too() {
    // Never had a credential.
    let initial: StorageOptions = [(AWS_REGION.to_string(), "us-east-1".to_string())]
        .into_iter()
        .collect();
    let f = fixture(
        initial,
        no_jitter(300),
        always_failing(100),
        Duration::ZERO,
        false,
    );
    for _ in 0..50 {
        let e = f.key().await.unwrap_err();
        assert!(matches!(e, Error::Provider { .. }), "{e}");
        assert!(e.provider_source().is_some(), "{e}");
    }
    assert_eq!(f.calls(), 1);
    f.clock.advance(1_000);
    let _ = f.key().await;
    assert_eq!(f.calls(), 2);

    // A valid credential the endpoint rejected, while the provider is down.
    let f = fixture(
        creds("gen1", None),
        no_jitter(300),
        always_failing(100),
        Duration::ZERO,
        false,
    );
    let (_, g) = f.refresher.get_credential().await.unwrap();
    f.refresher.invalidate(g);
    for _ in 0..50 {
        let e = f.key().await.unwrap_err();
        assert!(e.to_string().contains("catalog down"), "{e}");
    }
    assert_eq!(f.calls(), 1, "one refetch, then backoff");
    assert_eq!(f.refresher.stats().endpoint_rejections, 1);
    assert_eq!(f.refresher.stats().auth_refetches, 1);
}

#[tokio::test]
async fn c17_failures_before_expiry_still_try_once_at_expiry() {
    // Prefetch failures back off, but never past expiry: at expiry one attempt, which heals.
    let mut script = always_failing(3);
    script.push(Box::new(|now| {
        Ok(Some(creds("healed", Some(now + 600_000))))
    }));
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        RefreshConfig {
            initial_backoff: Duration::from_secs(30),
            max_backoff: Duration::from_secs(120),
            ..no_jitter(300)
        },
        script,
        Duration::ZERO,
        false,
    );
    for t in [301_000, 400_000, 598_999] {
        f.clock.set(T0 + t);
        assert_eq!(f.key().await.unwrap(), "gen1");
        f.refresher.wait_idle().await;
    }
    assert_eq!(f.calls(), 3);
    f.clock.set(T0 + 600_000);
    assert_eq!(f.key().await.unwrap(), "healed");
    assert_eq!(f.calls(), 4);
}
