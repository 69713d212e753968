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
            // Responses' `Date` headers (second precision), our clock when each request was
            // sent and when its answer was read: agreeing samples, the offset is applied.
            for _ in 0..MIN_SAMPLES {
                f.refresher.observe_server_time(T0 + SKEW, T0 - 10, T0);
            }
            let offset = f.refresher.stats().clock_offset_millis;
            assert!((SKEW..=SKEW + 1_200).contains(&offset), "{offset}");
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
            for _ in 0..MIN_SAMPLES {
                f.refresher
                    .observe_server_time(T0, T0 - SKEW - 10, T0 - SKEW);
            }
            let offset = f.refresher.clock_offset_millis();
            assert!((SKEW..=SKEW + 1_200).contains(&offset), "{offset}");
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
fn observed_offsets_need_agreeing_samples_beyond_the_threshold_and_are_bounded() {
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    let r = &f.refresher;
    // Within the Date header's precision: no offset, however many samples.
    for _ in 0..10 {
        r.observe_server_time(T0 + 1_000, T0, T0 + 20);
    }
    assert_eq!(r.clock_offset_millis(), 0);
    // Absurd samples are ignored, and so is one whose answer came before its request.
    for absurd in [7_200_000, -7_200_000, i64::MAX, i64::MIN] {
        for _ in 0..MIN_SAMPLES {
            r.observe_server_time(absurd, T0, T0);
            r.observe_server_time(T0, absurd, absurd);
        }
        assert_eq!(r.clock_offset_millis(), 0);
    }
    r.observe_server_time(T0 + 60_000, T0, T0 - 5_000);
    // A real skew: applied once MIN_SAMPLES samples agree, not before.
    let at = |i: i64| T0 + 20_000 + i * 1_237;
    let ahead = |i: i64| {
        let stamped = at(i) + 60_005;
        r.observe_server_time(stamped - stamped % 1_000, at(i), at(i) + 10);
    };
    for i in 0..i64::from(MIN_SAMPLES) - 1 {
        ahead(i);
        assert_eq!(r.clock_offset_millis(), 0, "sample {i}");
    }
    for i in i64::from(MIN_SAMPLES) - 1..40 {
        ahead(i);
    }
    let learned = r.clock_offset_millis();
    assert!((60_000..=60_300).contains(&learned), "{learned}");
    assert_eq!(r.stats().clock_offset_millis, learned);
    // Back in sync: once MIN_SAMPLES samples agree on it, the offset goes away again.
    for i in 40..40 + i64::from(MIN_SAMPLES) {
        let stamped = at(i) + 5;
        r.observe_server_time(stamped - stamped % 1_000, at(i), at(i) + 10);
    }
    assert_eq!(r.clock_offset_millis(), 0);
}
