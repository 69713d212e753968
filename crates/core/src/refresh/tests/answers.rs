//! C06-C10: what a provider's answer must be to become the next generation, and what a bad
//! one leaves in place.

use super::*;

#[tokio::test]
async fn c06_expired_or_about_to_expire_answers_are_failed_refreshes() {
    for (bad, needle) in [(-1_000i64, "expired credentials"), (500, "too soon")] {
        let f = fixture(
            creds("gen1", Some(T0 + 600_000)),
            no_jitter(300),
            (0..5)
                .map(|_| {
                    Box::new(move |now: i64| Ok(Some(creds("bad", Some(now + bad))))) as Answer
                })
                .collect(),
            Duration::ZERO,
            false,
        );
        f.clock.advance(301_000);
        assert_eq!(f.key().await.unwrap(), "gen1");
        f.refresher.wait_idle().await;
        assert_eq!(
            f.key().await.unwrap(),
            "gen1",
            "the last good credential is kept"
        );
        assert_eq!(f.calls(), 1, "backing off: no second call at once");
        assert_eq!(f.refresher.stats().failures, 1);
        f.clock.advance(1_000);
        f.key().await.unwrap();
        f.refresher.wait_idle().await;
        assert_eq!(f.calls(), 2, "retried after the backoff");
        f.clock.advance(1_000);
        f.key().await.unwrap();
        assert_eq!(f.calls(), 2, "the backoff doubled");
        f.clock.set(T0 + 600_000);
        let e = f.key().await.unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
}

#[tokio::test]
async fn c07_bad_expiry_values_never_mean_never_expires_nor_a_refresh_per_request() {
    for bad in [
        "1767225600",
        "2026-01-01T00:00:00Z",
        "abc",
        "-1",
        "9223372036854775807",
    ] {
        let f = fixture(
            creds("gen1", Some(T0 + 600_000)),
            no_jitter(300),
            (0..50)
                .map(|_| {
                    Box::new(move |_| {
                        let mut o = creds("bad", None);
                        o.insert(EXPIRES_AT_MILLIS.into(), bad.into());
                        Ok(Some(o))
                    }) as Answer
                })
                .collect(),
            Duration::ZERO,
            false,
        );
        f.clock.advance(301_000);
        for _ in 0..100 {
            assert_eq!(f.key().await.unwrap(), "gen1");
            f.refresher.wait_idle().await;
        }
        assert_eq!(f.calls(), 1, "{bad}: one refresh, then backoff");
        f.clock.set(T0 + 600_000);
        let e = f.key().await.unwrap_err().to_string();
        assert!(
            e.contains("expires_at_millis") && e.contains(&format!("{bad:?}")[..4]),
            "{bad}: {e}"
        );
        assert!(!e.contains("secret-of"), "{e}");
    }
}

#[tokio::test]
async fn c08_no_expiry_is_used_until_rejected_then_refetched_once() {
    let f = fixture(
        creds("gen1", None),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    f.clock.advance(86_400_000);
    let (_, generation) = f.refresher.get_credential().await.unwrap();
    assert_eq!(f.calls(), 0, "no expiry: no refresh");
    assert_eq!(f.refresher.stats().expires_at_millis, None);
    f.refresher.invalidate(generation);
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.calls(), 1);
    f.refresher.invalidate(generation);
    assert_eq!(
        f.key().await.unwrap(),
        "gen2",
        "invalidating an old generation is a no-op"
    );
    assert_eq!(f.calls(), 1);
}

#[tokio::test]
async fn c09_bad_answers_keep_the_valid_credential_and_the_message() {
    type BadAnswer = fn(i64) -> Result<Option<StorageOptions>>;
    let answers: Vec<(BadAnswer, &str)> = vec![
        (
            |_| Err(Error::provider("scripted", "catalog said no")),
            "catalog said no",
        ),
        (|_| Ok(Some(StorageOptions::new())), "no credentials"),
        (
            |now| {
                let mut o = creds("k", Some(now + 600_000));
                o.remove(AWS_SECRET_ACCESS_KEY);
                Ok(Some(o))
            },
            "aws_secret_access_key",
        ),
        (
            |_| {
                let mut o = creds("k", None);
                o.insert(EXPIRES_AT_MILLIS.into(), "0".into());
                Ok(Some(o))
            },
            "expires_at_millis",
        ),
    ];
    for (answer, needle) in answers {
        let script = (0..50).map(|_| Box::new(answer) as Answer).collect();
        let f = fixture(
            creds("gen1", Some(T0 + 600_000)),
            no_jitter(300),
            script,
            Duration::ZERO,
            false,
        );
        f.clock.advance(301_000);
        assert_eq!(f.key().await.unwrap(), "gen1");
        f.refresher.wait_idle().await;
        f.clock.set(T0 + 598_999);
        assert_eq!(
            f.key().await.unwrap(),
            "gen1",
            "{needle}: gen1 serves until the signing margin before its expiry"
        );
        let stats = f.refresher.stats();
        assert_eq!(stats.generation, 1, "{needle}");
        assert!(stats.failures >= 1, "{needle}");
        f.clock.set(T0 + 600_000);
        let e = f.key().await.unwrap_err().to_string();
        assert!(
            e.contains(needle) && e.contains("scripted"),
            "{needle}: {e}"
        );
        assert!(!e.contains("secret-of"), "{e}");
    }
    // Once expired, the error carries the provider's own message.
    let f = fixture(
        creds("gen1", Some(T0 + 600_000)),
        no_jitter(300),
        (0..3)
            .map(|_| Box::new(|_| Err(Error::provider("scripted", "catalog said no"))) as Answer)
            .collect(),
        Duration::ZERO,
        false,
    );
    f.clock.set(T0 + 600_001);
    let e = f.key().await.unwrap_err();
    assert!(
        matches!(&e, Error::CredentialsExpired { .. }) && e.to_string().contains("catalog said no"),
        "{e}"
    );
}

#[tokio::test]
async fn c10_null_and_empty_answers_keep_endpoint_and_region() {
    let mut initial = creds("gen1", Some(T0 + 2_000));
    initial.insert(AWS_ENDPOINT.into(), "http://127.0.0.1:1".into());
    initial.insert(AWS_REGION.into(), "eu-west-1".into());
    let f = fixture(
        initial,
        RefreshConfig {
            initial_backoff: Duration::from_millis(1),
            ..no_jitter(300)
        },
        vec![
            Box::new(|_| Ok(None)),
            Box::new(|_| Ok(Some(StorageOptions::new()))),
            Box::new(|now| Ok(Some(creds("gen2", Some(now + 600_000))))),
        ],
        Duration::ZERO,
        false,
    );
    f.clock.advance(1_001);
    for _ in 0..3 {
        let _ = f.key().await;
        f.refresher.wait_idle().await;
        f.clock.advance(10);
    }
    assert_eq!(f.calls(), 3);
    assert_eq!(f.key().await.unwrap(), "gen2");
    let o = f.refresher.current_options();
    assert_eq!(o[AWS_ENDPOINT], "http://127.0.0.1:1");
    assert_eq!(o[AWS_REGION], "eu-west-1");
}
