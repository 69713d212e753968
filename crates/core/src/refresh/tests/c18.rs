//! C18 variant: refetches after rejections share the backoff.

use super::*;

/// A request through a store whose endpoint rejects every key: sign, be rejected, invalidate,
/// retry once. With `report`, the store layer also reports the retry's outcome.
async fn rejected_request(f: &Fixture, report: bool) -> std::result::Result<(), Error> {
    let (_, g) = f.refresher.get_credential().await?;
    f.refresher.invalidate(g); // the endpoint said 403
    let (_, g2) = f.refresher.get_credential().await?;
    if report {
        f.refresher.report_auth_retry(g2, false); // the retry got a 403 too
    }
    Err(Error::provider("store", "403 InvalidAccessKeyId"))
}

#[tokio::test]
async fn c18_endpoint_rejecting_every_vended_key_rate_limits_refetches() {
    for report in [true, false] {
        let f = fixture(
            creds("gen1", Some(T0 + 600_000)),
            no_jitter(300),
            vec![],
            Duration::ZERO,
            false,
        );
        let mut errors = Vec::new();
        for _ in 0..200 {
            f.clock.advance(50);
            errors.push(rejected_request(&f, report).await.unwrap_err().to_string());
        }
        // Refetches at about 50 ms, then once a second (nothing valid is left, so the delay
        // stays at `initial_backoff`: C22): 10 in the 10 s of 200 requests.
        assert_eq!(
            f.calls(),
            10,
            "report={report}: not one catalog call per request"
        );
        let stats = f.refresher.stats();
        assert_eq!(stats.auth_refetches, 10, "{stats:?}");
        assert_eq!(stats.fetches, 10, "{stats:?}");
        assert_eq!(
            stats.failures, 0,
            "the provider itself never failed: {stats:?}"
        );
        assert!(stats.backoff_rejections >= 190, "{stats:?}");
        let rejected = errors
            .iter()
            .filter(|e| e.contains("the endpoint rejected freshly vended credentials"))
            .count();
        assert!(
            rejected >= 190,
            "report={report}: {rejected}: {:?}",
            errors.last()
        );
        // A store layer that reports: every vended generation was rejected once.
        if report {
            assert_eq!(stats.endpoint_rejections, 11, "{stats:?}");
        }
    }
}

#[tokio::test]
async fn c18_a_confirmed_or_long_served_credential_refetches_at_once_when_rejected() {
    let f = fixture(
        creds("gen1", Some(T0 + 3_600_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    // gen1 revoked: one refetch, the retry works and the store layer says so.
    let (_, g1) = f.refresher.get_credential().await.unwrap();
    f.refresher.invalidate(g1);
    let (_, g2) = f.refresher.get_credential().await.unwrap();
    f.refresher.report_auth_retry(g2, true);
    // gen2 revoked ten seconds later: an immediate refetch, no backoff.
    f.clock.advance(10_000);
    f.refresher.invalidate(g2);
    let (_, g3) = f.refresher.get_credential().await.unwrap();
    assert_eq!(f.calls(), 2);
    // gen3 was not confirmed, but served for over a minute: still an immediate refetch.
    f.clock.advance(61_000);
    f.refresher.invalidate(g3);
    assert_eq!(f.key().await.unwrap(), "gen4");
    assert_eq!(f.calls(), 3);
    let stats = f.refresher.stats();
    assert_eq!(
        (
            stats.endpoint_rejections,
            stats.auth_refetches,
            stats.backoff_rejections
        ),
        (3, 3, 0)
    );
}

#[tokio::test]
async fn c18_a_retry_that_saw_the_rejected_generation_before_its_refetch_finished_makes_no_second_call(
) {
    // Two requests signed with generation 1 are rejected at once. The first one's retry
    // refetches; the second one's retry looked at generation 1 (unusable) just before that
    // refetch finished, and reaches `start_refresh` after it: it must get generation 2, not
    // start a second provider call (seen once in CI as 2 calls for one rejected part).
    let f = fixture(
        creds("gen1", None),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    let (_, g1) = f.refresher.get_credential().await.unwrap();
    f.refresher.invalidate(g1);
    let (_, g2) = f.refresher.get_credential().await.unwrap();
    assert_eq!(f.calls(), 1);
    assert!(g2 > g1);
    let now = f.clock.now_millis();
    match f.refresher.start_refresh(now, g1) {
        slow::Start::Current(g) => assert_eq!(g.number, g2),
        slow::Start::Running(_) => panic!("a second refresh started for one rejection"),
        slow::Start::BackingOff => panic!("backing off although nothing failed"),
    }
    assert_eq!(f.calls(), 1, "provider calls");
    // A caller that saw the current generation still starts the refresh it asks for.
    assert!(matches!(
        f.refresher.start_refresh(now, g2),
        slow::Start::Running(_)
    ));
}

#[tokio::test]
async fn a_generation_past_its_expiry_or_replaced_expired_in_flight_and_a_valid_one_did_not() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::ZERO,
        false,
    );
    assert!(
        !f.refresher.expired_in_flight(1),
        "valid: a rejection is real"
    );
    f.clock.advance(2_000);
    assert!(f.refresher.expired_in_flight(1), "expired by the clock");
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert!(f.refresher.expired_in_flight(1), "replaced since");
    assert!(!f.refresher.expired_in_flight(2));
}
