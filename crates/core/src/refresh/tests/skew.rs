//! Clock skew: the endpoint's clock observed from `Date` headers and applied to expiry
//! decisions (C02 with a slow or fast local clock).

use super::*;

#[tokio::test]
async fn c02_slow_local_clock_refreshes_before_the_server_side_expiry() {
    // The endpoint's clock is 2 minutes ahead of ours; credentials live 60 s on its clock.
    const SKEW: i64 = 120_000;
    for observe in [true, false] {
        let script = (0..1_000)
            .map(|_| {
                Box::new(|now: i64| Ok(Some(creds("next", Some(now + SKEW + 60_000))))) as Answer
            })
            .collect();
        let f = fixture(
            creds("gen1", Some(T0 + SKEW + 60_000)),
            no_jitter(300),
            script,
            Duration::ZERO,
            false,
        );
        if observe {
            // A response's `Date` header (second precision) and our clock when it arrived.
            f.refresher.observe_server_time(T0 + SKEW, T0);
            assert_eq!(f.refresher.stats().clock_offset_millis, SKEW + 500);
        }
        let mut signed_expired = 0;
        let mut first_refresh_server_time = None;
        for _ in 0..300 {
            f.clock.advance(1_000);
            let server_now = f.clock.now_millis() + SKEW;
            let (_, number) = f.refresher.get_credential().await.unwrap();
            let stats = f.refresher.stats();
            if stats.generation == number
                && stats.expires_at_millis.is_some_and(|e| e <= server_now)
            {
                signed_expired += 1;
            }
            if f.calls() > 0 && first_refresh_server_time.is_none() {
                first_refresh_server_time = Some(server_now);
            }
            f.refresher.wait_idle().await;
        }
        let first = first_refresh_server_time.unwrap();
        if observe {
            assert_eq!(
                signed_expired, 0,
                "never signs with a credential the endpoint calls expired"
            );
            assert!(
                first < T0 + SKEW + 60_000,
                "refreshed at {first}, before the server-side expiry"
            );
            assert!(
                f.calls() < 40,
                "{} calls in 300 s of 60 s credentials",
                f.calls()
            );
        } else {
            // Control: without the offset the same run signs with expired credentials.
            assert!(signed_expired > 0);
        }
    }
}

#[tokio::test]
async fn c02_fast_local_clock_with_observed_offset_never_signs_expired_nor_refreshes_per_request() {
    // Our clock is 30 s ahead of the endpoint's; the catalog vends 20 s credentials.
    const SKEW: i64 = -30_000;
    for observe in [true, false] {
        let script = (0..1_000)
            .map(|_| {
                Box::new(|now: i64| Ok(Some(creds("next", Some(now + SKEW + 20_000))))) as Answer
            })
            .collect();
        let f = fixture(
            creds("gen1", Some(T0 + 20_000)),
            RefreshConfig {
                initial_backoff: Duration::from_millis(100),
                ..no_jitter(300)
            },
            script,
            Duration::ZERO,
            false,
        );
        f.clock.set(T0 - SKEW);
        if observe {
            f.refresher.observe_server_time(T0, T0 - SKEW);
            assert_eq!(f.refresher.clock_offset_millis(), SKEW + 500);
        }
        let (mut ok, mut signed_expired) = (0, 0);
        for _ in 0..600 {
            f.clock.advance(100);
            let server_now = f.clock.now_millis() + SKEW;
            if let Ok((_, number)) = f.refresher.get_credential().await {
                ok += 1;
                let stats = f.refresher.stats();
                if stats.generation == number
                    && stats.expires_at_millis.is_some_and(|e| e <= server_now)
                {
                    signed_expired += 1;
                }
            }
            f.refresher.wait_idle().await;
        }
        assert_eq!(signed_expired, 0);
        if observe {
            assert_eq!(ok, 600, "every request got a valid credential");
            // 60 s of 20 s credentials, refreshed at half their life: about 6 calls.
            assert!((4..=12).contains(&f.calls()), "{} calls", f.calls());
        } else {
            // Control: every answer looks expired to a clock 30 s fast.
            assert_eq!(ok, 0);
        }
    }
}

#[test]
fn observed_offsets_are_smoothed_thresholded_and_bounded() {
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    let r = &f.refresher;
    // Within the Date header's precision: no offset.
    r.observe_server_time(T0 + 1_000, T0);
    assert_eq!(r.clock_offset_millis(), 0);
    // Absurd samples are ignored.
    for absurd in [7_200_000, -7_200_000, i64::MAX, i64::MIN] {
        r.observe_server_time(absurd, T0);
        r.observe_server_time(T0, absurd);
        assert_eq!(r.clock_offset_millis(), 0);
    }
    // A real skew: smoothed towards it, a quarter of the way per sample.
    let mut last = 0;
    for _ in 0..40 {
        r.observe_server_time(T0 + 60_000, T0);
        let now = r.clock_offset_millis();
        assert!(now >= last && now <= 60_500, "{now}");
        last = now;
    }
    assert!(last > 60_000, "{last}");
    assert_eq!(r.stats().clock_offset_millis, last);
    // Back in sync: the offset goes away again.
    for _ in 0..40 {
        r.observe_server_time(T0, T0);
    }
    assert_eq!(r.clock_offset_millis(), 0);
}
