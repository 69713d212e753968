//! The hot path, C01 (expired credentials refetched before use) and C02 (one refresh at the
//! lead time, never signing expired).

use super::*;

#[tokio::test]
async fn fresh_credential_is_served_without_a_provider_call() {
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    for _ in 0..100 {
        assert_eq!(f.key().await.unwrap(), "gen1");
    }
    assert_eq!(f.calls(), 0, "the initial options seed the cache");
    assert_eq!(f.refresher.stats().generation, 1);
}

#[tokio::test]
async fn c01_expired_credential_is_refetched_before_use() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    f.clock.advance(3_000);
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.calls(), 1);
}

#[tokio::test]
async fn c02_one_refresh_at_the_lead_time_and_lead_capped_at_half_lifetime() {
    // 10-minute credential, 5-minute lead: a request at +5 min 1 s triggers exactly one refresh.
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    f.clock.advance(301_000);
    let k = f.key().await.unwrap();
    assert_eq!(k, "gen1", "prefetch never blocks while gen1 is valid");
    assert!(f.refresher.wait_idle().await.unwrap().is_ok());
    assert_eq!(f.calls(), 1);
    for _ in 0..50 {
        assert_eq!(f.key().await.unwrap(), "gen2");
    }
    assert_eq!(f.calls(), 1, "exactly one refresh");

    // 60 s credential with the same lead: effective lead 30 s, so requests in the first 29 s
    // do not refresh.
    let f = fixture(
        creds("gen1", Some(T0 + 60_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    for _ in 0..29 {
        f.clock.advance(1_000);
        assert_eq!(f.key().await.unwrap(), "gen1");
    }
    assert_eq!(f.calls(), 0, "not every request refreshes");
    f.clock.advance(2_000);
    f.key().await.unwrap();
    f.refresher.wait_idle().await;
    assert_eq!(f.calls(), 1);
}

#[tokio::test]
async fn c02_fast_local_clock_refreshes_early_and_never_signs_expired() {
    // The catalog's clock says T0; ours is 30 s ahead.
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    f.clock.set(T0 + 30_000);
    f.clock.advance(270_000 + 1_000); // catalog time T0 + 4 min 31 s: our refresh point passed
    f.key().await.unwrap();
    f.refresher.wait_idle().await;
    assert_eq!(f.calls(), 1, "a fast clock only refreshes earlier");
    // A provider that keeps failing: at our expiry nothing expired is handed out.
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        RefreshConfig {
            provider_timeout: Duration::from_millis(200),
            ..no_jitter(300)
        },
        (0..10)
            .map(|_| Box::new(|_| Err(Error::provider("scripted", "catalog down"))) as Answer)
            .collect(),
        Duration::ZERO,
        false,
    );
    f.clock.set(T0 + 600_000);
    let e = f.key().await.unwrap_err();
    assert!(matches!(e, Error::CredentialsExpired { .. }), "{e}");
}
