//! Refresher rules on a manual clock. Case ids refer to shared/CASES.md.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Notify;

use super::*;
use crate::options::EXPIRES_AT_MILLIS;

// Option names as a cloud would use them; the refresher itself knows no cloud.
const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
const AWS_ENDPOINT: &str = "aws_endpoint";
const AWS_REGION: &str = "aws_region";

const T0: i64 = 1_800_000_000_000;

type Answer = Box<dyn FnOnce(i64) -> Result<Option<StorageOptions>> + Send>;

/// A provider that answers from a script (then repeats `fallback`), counts calls, can sleep,
/// and signals when it is entered.
struct Scripted {
    clock: Arc<ManualClock>,
    script: Mutex<VecDeque<Answer>>,
    calls: AtomicUsize,
    served: AtomicUsize,
    delay: Duration,
    entered: Notify,
    hang: bool,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

#[async_trait]
impl StorageOptionsProvider for Scripted {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.entered.notify_waiters();
        if self.hang {
            futures::future::pending::<()>().await;
        }
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let next = self.script.lock().unwrap().pop_front();
        let now = self.clock.now_millis();
        match next {
            Some(answer) => answer(now),
            None => {
                // Default answers are named gen2, gen3, ... in the order they are served.
                let served = self.served.fetch_add(1, Ordering::SeqCst) + 2;
                Ok(Some(creds(&format!("gen{served}"), Some(now + 600_000))))
            }
        }
    }
    fn provider_id(&self) -> String {
        "scripted".into()
    }
}

fn creds(key: &str, expires: Option<i64>) -> StorageOptions {
    let mut o: StorageOptions = [
        (AWS_ACCESS_KEY_ID.to_string(), key.to_string()),
        (
            AWS_SECRET_ACCESS_KEY.to_string(),
            format!("secret-of-{key}"),
        ),
    ]
    .into_iter()
    .collect();
    if let Some(e) = expires {
        o.insert(EXPIRES_AT_MILLIS.into(), e.to_string());
    }
    o
}

struct Fixture {
    clock: Arc<ManualClock>,
    provider: Arc<Scripted>,
    refresher: CredentialRefresher<String>,
}

fn key_mapper() -> CredentialMapper<String> {
    Arc::new(|o: &StorageOptions| {
        let k = o
            .get(AWS_ACCESS_KEY_ID)
            .ok_or_else(|| Error::invalid_option(AWS_ACCESS_KEY_ID, "missing"))?;
        o.get(AWS_SECRET_ACCESS_KEY)
            .ok_or_else(|| Error::invalid_option(AWS_SECRET_ACCESS_KEY, "missing or empty"))?;
        Ok(k.clone())
    })
}

fn fixture(
    initial: StorageOptions,
    config: RefreshConfig,
    script: Vec<Answer>,
    delay: Duration,
    hang: bool,
) -> Fixture {
    let clock = Arc::new(ManualClock::new(T0));
    let provider = Arc::new(Scripted {
        clock: clock.clone(),
        script: Mutex::new(script.into()),
        calls: AtomicUsize::new(0),
        served: AtomicUsize::new(0),
        delay,
        entered: Notify::new(),
        hang,
    });
    let refresher = CredentialRefresher::new(
        provider.clone(),
        initial,
        key_mapper(),
        config,
        clock.clone(),
    )
    .unwrap();
    Fixture {
        clock,
        provider,
        refresher,
    }
}

fn no_jitter(lead_s: u64) -> RefreshConfig {
    RefreshConfig {
        lead_time: Duration::from_secs(lead_s),
        jitter: 0.0,
        ..RefreshConfig::default()
    }
}

impl Fixture {
    async fn key(&self) -> Result<String> {
        self.refresher
            .get_credential()
            .await
            .map(|(c, _)| (*c).clone())
    }
    fn calls(&self) -> usize {
        self.provider.calls.load(Ordering::SeqCst)
    }
}

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

async fn storm(f: &Fixture, n: usize) -> Vec<Result<String>> {
    let mut tasks = Vec::with_capacity(n);
    for _ in 0..n {
        let r = f.refresher.clone();
        tasks.push(tokio::spawn(async move {
            r.get_credential().await.map(|(c, _)| (*c).clone())
        }));
    }
    let mut out = Vec::with_capacity(n);
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_thousand_callers_after_expiry_share_one_provider_call() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let results = storm(&f, 1000).await;
    assert_eq!(f.calls(), 1);
    assert!(results.iter().all(|r| matches!(r.as_deref(), Ok("gen2"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_failure_reaches_waiters_but_is_not_cached() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![Box::new(|_| {
            Err(Error::provider("scripted", "catalog down"))
        })],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let results = storm(&f, 1000).await;
    assert_eq!(f.calls(), 1);
    for r in &results {
        let e = r.as_ref().unwrap_err().to_string();
        assert!(e.contains("catalog down") && e.contains("scripted"), "{e}");
    }
    assert_eq!(f.key().await.unwrap(), "gen2", "the next call tries again");
    assert_eq!(f.calls(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c05_cancelled_leader_does_not_wedge_the_others() {
    let f = fixture(
        creds("gen1", Some(T0 + 2_000)),
        no_jitter(300),
        vec![],
        Duration::from_millis(500),
        false,
    );
    f.clock.advance(2_001);
    let entered = f.provider.entered.notified();
    let r = f.refresher.clone();
    let leader = tokio::spawn(async move { r.get_credential().await.map(|_| ()) });
    entered.await;
    leader.abort();
    let results = storm(&f, 100).await;
    assert!(results.iter().all(|r| matches!(r.as_deref(), Ok("gen2"))));
    assert_eq!(f.calls(), 1, "the followers joined the leader's refresh");
}

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
        f.clock.set(T0 + 599_000);
        assert_eq!(
            f.key().await.unwrap(),
            "gen1",
            "{needle}: gen1 serves until it expires"
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
