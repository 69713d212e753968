//! Refresh at fleet scale (issue 22): 500 stores opened at the same moment with credentials of
//! one shared expiry (a fleet of executors opening one table) must not all call the catalog in
//! the same second. The refresh point of each credential is jittered up to half the effective
//! lead earlier (`RefreshConfig::jitter`, default 0.5), never later than the deterministic lead
//! point; and no request ever signs with an expired credential. Deterministic in time (a manual
//! clock); only the jitter itself is random, with bounds checked on every refresh.

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
const STORES: usize = 500;
/// 10 min credentials with the default 5 min lead: refresh points in [T0 + 150 s, T0 + 300 s].
const LIFETIME: i64 = 600_000;
const STEP: i64 = 250;

/// The catalog: vends 10 min credentials and records the clock at every call.
#[derive(Debug)]
struct Catalog {
    clock: Arc<ManualClock>,
    calls: AtomicUsize,
    at: Mutex<Vec<i64>>,
}

fn creds(n: usize, expires_at: i64) -> StorageOptions {
    [
        ("aws_access_key_id", format!("key{n}")),
        ("aws_secret_access_key", format!("secret{n}")),
        ("expires_at_millis", expires_at.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[async_trait]
impl StorageOptionsProvider for Catalog {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.clock.now_millis();
        self.at.lock().unwrap().push(now);
        Ok(Some(creds(n, now + LIFETIME)))
    }
    fn provider_id(&self) -> String {
        "catalog".into()
    }
}

fn mapper() -> CredentialMapper<String> {
    Arc::new(|o: &StorageOptions| {
        o.get("aws_access_key_id")
            .cloned()
            .ok_or_else(|| Error::invalid_option("aws_access_key_id", "missing"))
    })
}

/// Runs `STORES` refreshers opened at T0 with one expiry for `millis` of manual time, each
/// asked for a credential every `STEP`; returns the provider calls per second of the run (by
/// second since T0) and the time of every call.
async fn fleet(config: RefreshConfig, millis: i64) -> (BTreeMap<i64, usize>, Vec<i64>) {
    let clock = Arc::new(ManualClock::new(T0));
    let catalog = Arc::new(Catalog {
        clock: clock.clone(),
        calls: AtomicUsize::new(0),
        at: Mutex::new(Vec::new()),
    });
    let stores: Vec<CredentialRefresher<String>> = (0..STORES)
        .map(|i| {
            CredentialRefresher::new(
                catalog.clone(),
                creds(1_000_000 + i, T0 + LIFETIME),
                mapper(),
                config.clone(),
                clock.clone(),
            )
            .unwrap()
        })
        .collect();
    while clock.now_millis() < T0 + millis {
        let now = clock.now_millis();
        for store in &stores {
            let (_, generation) = store.get_credential().await.expect("a valid credential");
            let stats = store.stats();
            assert_eq!(stats.generation, generation);
            let expires = stats.expires_at_millis.unwrap();
            assert!(
                expires > now,
                "signed with a credential expired at {expires} ({now})"
            );
        }
        for store in &stores {
            store.wait_idle().await;
        }
        clock.advance(STEP);
    }
    let at = catalog.at.lock().unwrap().clone();
    let mut per_second = BTreeMap::new();
    for &t in &at {
        *per_second.entry((t - T0) / 1_000).or_insert(0) += 1;
    }
    (per_second, at)
}

#[tokio::test]
async fn fleet_of_500_stores_with_one_expiry_spreads_its_refreshes_over_the_lead_window() {
    let (per_second, at) = fleet(RefreshConfig::default(), 700_000).await;
    let max = per_second.values().copied().max().unwrap();
    // The first wave: every store refreshed exactly once, between 1.5 leads and 1 lead before
    // the shared expiry (T0 + 150 s .. T0 + 300 s).
    let first: Vec<i64> = at.iter().copied().filter(|&t| t <= T0 + 300_000).collect();
    assert_eq!(
        first.len(),
        STORES,
        "each store refreshed once in the first wave"
    );
    assert!(
        first
            .iter()
            .all(|&t| (T0 + 150_000..=T0 + 300_000).contains(&t)),
        "refresh points outside [expiry - 1.5 lead, expiry - lead]"
    );
    // Spread: 500 calls over 150 s is about 3.3 a second; never anywhere near 500 at once.
    assert!(
        max <= 25,
        "up to {max} provider calls in one second: {per_second:?}"
    );
    let busy_seconds = per_second.len();
    assert!(
        busy_seconds >= 100,
        "calls fell in only {busy_seconds} distinct seconds"
    );
    eprintln!(
        "fleet: {} provider calls for {STORES} stores in 700 s, at most {max} in one second, \
         over {busy_seconds} distinct seconds",
        at.len()
    );
}

#[tokio::test]
async fn fleet_without_jitter_calls_the_catalog_all_in_the_same_second() {
    // Control: the measurement can fail. With jitter 0 every store refreshes at T0 + 300 s.
    let config = RefreshConfig {
        jitter: 0.0,
        ..RefreshConfig::default()
    };
    let (per_second, _) = fleet(config, 310_000).await;
    assert_eq!(per_second.get(&300), Some(&STORES), "{per_second:?}");
}
