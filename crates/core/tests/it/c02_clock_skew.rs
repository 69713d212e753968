//! C02, third part, end to end: the local clock is 2 minutes slow against the endpoint. The
//! endpoint issues credentials that expire by its own clock and says the time in every
//! answer's `Date` header; the store learns the offset from those headers and refreshes
//! before the endpoint's expiry, so no request is ever signed with an expired credential.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::RefreshConfig;

const SKEW_MILLIS: i64 = 120_000;
const TTL: Duration = Duration::from_secs(6);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c02_local_clock_two_minutes_slow_refreshes_by_the_endpoints_clock() {
    let s3 = endpoint().await;
    // The endpoint runs 2 minutes ahead: seen from it, the local clock is 2 minutes slow.
    s3.set_clock_offset_millis(SKEW_MILLIS);
    let provider = Arc::new(EndpointProvider::new(s3.clone(), TTL));
    let initial = provider.vend();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/c02-skew"),
            initial,
            Some(provider.clone()),
            RefreshConfig::default(),
        )
        .unwrap();

    // 15 s of requests spans at least two expiries of the 6 s credentials by the endpoint's
    // clock; by the local clock alone the first credential would look valid for 2 more minutes.
    let start = Instant::now();
    let mut requests = 0u32;
    while start.elapsed() < Duration::from_secs(15) && requests < 2_000 {
        store
            .put("k", Bytes::from(format!("v{requests}")))
            .await
            .unwrap_or_else(|e| panic!("request {requests} failed: {e}"));
        requests += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The first request may be answered before any Date was seen, but nothing may be
    // rejected as expired: refreshing happened before the endpoint's expiry.
    let mut expired = 0;
    for key in provider.vended_keys() {
        expired += s3.key_stats(&key).expired;
    }
    assert_eq!(expired, 0, "requests signed with an expired credential");
    let stats = store.refresh_stats().unwrap();
    let offset = stats.clock_offset_millis;
    assert!(
        (SKEW_MILLIS - 3_000..=SKEW_MILLIS + 3_000).contains(&offset),
        "learned offset {offset} ms, expected about {SKEW_MILLIS} ms"
    );
    assert!(
        provider.calls() >= 2,
        "the credentials were refreshed by the endpoint's clock: {} provider calls",
        provider.calls()
    );
    assert!(requests > 50, "{requests} requests");
}
