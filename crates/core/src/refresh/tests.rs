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
    // During the backoff the next call fails fast with the same error (C17)...
    let e = f.key().await.unwrap_err();
    assert!(e.to_string().contains("catalog down"), "{e}");
    assert_eq!(f.calls(), 1, "no provider call during the backoff");
    // ...and the failure is not cached: the first call after it tries again.
    f.clock.advance(1_000);
    assert_eq!(f.key().await.unwrap(), "gen2", "the next call tries again");
    assert_eq!(f.calls(), 2);
    let stats = f.refresher.stats();
    assert_eq!(
        (stats.fetches, stats.failures, stats.backoff_rejections),
        (2, 1, 1)
    );
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

// ---------------------------------------------------------------------------------------------
// C17: the backoff holds after expiry; C18 variant: rejections share it; clock skew.

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
async fn c17_failing_provider_after_expiry_follows_the_backoff_schedule_then_heals() {
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
    // 200 more over 10 s (one every 50 ms): calls at +1 s, +2 s, +4 s after each failure.
    for _ in 0..200 {
        f.clock.advance(50);
        assert_is_catalog_down(&f.key().await.unwrap_err());
    }
    // Failures at 3.5 s, 4.5 s (1 s later), 6.5 s (2 s), 10.5 s (4 s); the next is at 18.5 s.
    assert_eq!(f.calls(), 4, "provider calls follow the backoff schedule");
    let stats = f.refresher.stats();
    assert_eq!(
        (stats.fetches, stats.failures, stats.backoff_rejections),
        (4, 4, 396),
        "{stats:?}"
    );
    assert_eq!(stats.generation, 1);
    // The provider heals: the first call after the current backoff succeeds, no reopen.
    f.provider.script.lock().unwrap().clear();
    f.clock.set(T0 + 18_499);
    assert_is_catalog_down(&f.key().await.unwrap_err());
    assert_eq!(f.calls(), 4);
    f.clock.set(T0 + 18_500);
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.key().await.unwrap(), "gen2");
    assert_eq!(f.calls(), 5);
    let stats = f.refresher.stats();
    assert_eq!((stats.fetches, stats.failures, stats.generation), (5, 4, 2));
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
    // Heal: after the (now 2 s) backoff every thread gets gen2 from one call.
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
    for t in [301_000, 400_000, 599_000] {
        f.clock.set(T0 + t);
        assert_eq!(f.key().await.unwrap(), "gen1");
        f.refresher.wait_idle().await;
    }
    assert_eq!(f.calls(), 3);
    f.clock.set(T0 + 600_000);
    assert_eq!(f.key().await.unwrap(), "healed");
    assert_eq!(f.calls(), 4);
}

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
        // Refetches at 50 ms, then after backoffs of 1 s, 2 s, 4 s: 1.05 s, 3.05 s, 7.05 s.
        assert_eq!(
            f.calls(),
            4,
            "report={report}: not one catalog call per request"
        );
        let stats = f.refresher.stats();
        assert_eq!(stats.auth_refetches, 4, "{stats:?}");
        assert_eq!(stats.fetches, 4, "{stats:?}");
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
            assert_eq!(stats.endpoint_rejections, 5, "{stats:?}");
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
