//! C22: recovery after a catalog outage longer than a credential's lifetime, on a manual clock
//! (deterministic). Credentials live 10 s; after the first fetch the provider throws for 25 s,
//! then works again; 4 readers ask for a credential every 50 ms the whole time. While the
//! credential is valid no read fails (failed refreshes back off, growing); once it has expired
//! the provider is called about once a second (never once per request, never growing), so the
//! first read after the catalog's return succeeds within 2 s of it, on the same refresher.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use vended_storage::refresh::CredentialMapper;
use vended_storage::{
    Clock, CredentialRefresher, Error, ManualClock, RefreshConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const T0: i64 = 1_800_000_000_000;
const LIFETIME: i64 = 10_000;
const OUTAGE_END: i64 = T0 + 25_000;
const STEP: i64 = 50;
const READERS: usize = 4;

/// Vends 10 s credentials named by call number; from the second call until `OUTAGE_END`
/// (on the manual clock) it throws "catalog down". Records the clock at every call.
#[derive(Debug)]
struct Catalog {
    clock: Arc<ManualClock>,
    calls: AtomicUsize,
    at: Mutex<Vec<i64>>,
}

#[async_trait]
impl StorageOptionsProvider for Catalog {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let now = self.clock.now_millis();
        self.at.lock().unwrap().push(now);
        if n > 1 && now < OUTAGE_END {
            return Err(Error::provider(
                "catalog",
                "java.lang.RuntimeException: catalog down",
            ));
        }
        Ok(Some(
            [
                ("aws_access_key_id", format!("gen{n}")),
                ("aws_secret_access_key", format!("secret-{n}")),
                ("expires_at_millis", (now + LIFETIME).to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        ))
    }
    fn provider_id(&self) -> String {
        "catalog".into()
    }
}

fn key_of() -> CredentialMapper<String> {
    Arc::new(|o: &StorageOptions| {
        o.get("aws_access_key_id")
            .cloned()
            .ok_or_else(|| Error::invalid_option("aws_access_key_id", "missing"))
    })
}

/// What the 4 readers saw at one instant of the manual clock.
struct Step {
    at: i64,
    ok: usize,
    /// Expiry of the credential each successful read got (epoch ms).
    expiries: Vec<i64>,
}

async fn run(config: RefreshConfig) -> (Vec<Step>, Vec<i64>, CredentialRefresher<String>) {
    let clock = Arc::new(ManualClock::new(T0));
    let catalog = Arc::new(Catalog {
        clock: clock.clone(),
        calls: AtomicUsize::new(0),
        at: Mutex::new(Vec::new()),
    });
    let refresher = CredentialRefresher::new(
        catalog.clone(),
        StorageOptions::new(), // no credential yet: the first read fetches
        key_of(),
        config,
        clock.clone(),
    )
    .unwrap();
    let mut steps = Vec::new();
    while clock.now_millis() <= T0 + 40_000 {
        let reads = (0..READERS).map(|_| refresher.get_credential());
        let results = futures::future::join_all(reads).await;
        let mut step = Step {
            at: clock.now_millis(),
            ok: 0,
            expiries: Vec::new(),
        };
        for r in results {
            if r.is_ok() {
                step.ok += 1;
                step.expiries
                    .push(refresher.stats().expires_at_millis.unwrap_or(i64::MIN));
            }
        }
        steps.push(step);
        refresher.wait_idle().await;
        clock.advance(STEP);
    }
    let at = catalog.at.lock().unwrap().clone();
    (steps, at, refresher)
}

#[tokio::test]
async fn c22_four_readers_through_an_outage_longer_than_the_credential_recover_within_two_seconds()
{
    let (steps, calls, refresher) = run(RefreshConfig::default()).await;
    let expiry = T0 + LIFETIME;

    // The first fetch at T0 vended a credential valid until T0 + 10 s: no read fails before.
    for s in steps.iter().filter(|s| s.at < expiry) {
        assert_eq!(
            s.ok,
            READERS,
            "a read failed at +{} ms while valid",
            s.at - T0
        );
        assert!(
            s.expiries.iter().all(|&e| e > s.at),
            "signed expired at +{}",
            s.at - T0
        );
    }
    // While it served, failed refreshes backed off (growing, one attempt at expiry at most).
    let while_valid = calls.iter().filter(|&&t| t > T0 && t < expiry).count();
    assert!(
        (1..=4).contains(&while_valid),
        "{while_valid} calls while valid: {calls:?}"
    );

    // During the outage with nothing valid: about one call a second, never one per request.
    let mut per_second: BTreeMap<i64, usize> = BTreeMap::new();
    for &t in calls.iter().filter(|&&t| t >= expiry && t < OUTAGE_END) {
        *per_second.entry((t - T0) / 1_000).or_default() += 1;
    }
    let max = per_second.values().copied().max().unwrap_or(0);
    let total: usize = per_second.values().sum();
    assert!(
        max <= 1,
        "calls per second during the outage: {per_second:?}"
    );
    assert!(
        (13..=16).contains(&total),
        "{total} calls in the 15 s after expiry: {per_second:?}"
    );
    let requests = steps
        .iter()
        .filter(|s| s.at >= expiry && s.at < OUTAGE_END)
        .count()
        * READERS;
    assert!(
        total * 50 < requests,
        "{total} calls for {requests} requests"
    );

    // The catalog is back at T0 + 25 s: the first successful read comes within 2 s of it.
    let first_ok = steps
        .iter()
        .find(|s| s.at >= expiry && s.ok > 0)
        .map(|s| s.at)
        .expect("the refresher recovered");
    let recovery = first_ok - OUTAGE_END;
    assert!(
        (0..=2_000).contains(&recovery),
        "recovered {recovery} ms after the catalog"
    );
    // ...and every read after it succeeds, with a valid credential, on the same refresher.
    for s in steps.iter().filter(|s| s.at >= first_ok) {
        assert_eq!(
            s.ok,
            READERS,
            "a read failed at +{} ms after recovery",
            s.at - T0
        );
        assert!(s.expiries.iter().all(|&e| e > s.at));
    }
    let stats = refresher.stats();
    assert_eq!(stats.fetches as usize, calls.len());
    eprintln!(
        "C22 (manual clock): {} provider calls in 40 s, {while_valid} while valid, \
         max {max}/s during the outage ({total} for {requests} requests), recovered {recovery} ms \
         after the catalog's return",
        calls.len()
    );
}

#[tokio::test]
async fn c22_after_expiry_the_interval_is_the_configured_initial_backoff_and_never_grows() {
    // A store configured with a 2 s first backoff: after expiry, one call every 2 s (not 4, 8,
    // 16 s), so recovery still comes within that interval of the catalog's return.
    let config = RefreshConfig {
        initial_backoff: std::time::Duration::from_millis(2_000),
        ..RefreshConfig::default()
    };
    let (steps, calls, _) = run(config).await;
    let expiry = T0 + LIFETIME;
    let after: Vec<i64> = calls
        .iter()
        .copied()
        .filter(|&t| t >= expiry && t < OUTAGE_END)
        .collect();
    for pair in after.windows(2) {
        assert_eq!(
            pair[1] - pair[0],
            2_000,
            "fixed interval after expiry: {after:?}"
        );
    }
    let first_ok = steps
        .iter()
        .find(|s| s.at >= expiry && s.ok > 0)
        .map(|s| s.at)
        .unwrap();
    assert!(first_ok - OUTAGE_END <= 2_000, "{}", first_ok - OUTAGE_END);
}
