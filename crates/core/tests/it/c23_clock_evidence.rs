//! C23: a clock offset is learned from evidence, never from single late samples.
//!
//! Through the refresher's API with explicit times (a manual clock, deterministic): answers
//! read 2-3 s after the endpoint stamped their `Date`, and `Date`'s one-second resolution, give
//! no offset and no failed request; an endpoint really 2 minutes ahead is learned (within the
//! samples' uncertainty) and refreshes move earlier. End to end against the local endpoint, a
//! proxy that holds every answer for 3 s (the starved reader, injected): the offset stays 0
//! and no request is rejected; with the endpoint also 2 minutes ahead, the offset is learned
//! and nothing is signed with a credential the endpoint calls expired.

use crate::common;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use vended_storage::refresh::{CredentialMapper, CLOCK_SKEW_THRESHOLD_MILLIS};
use vended_storage::{
    Clock, CredentialRefresher, Error, ManualClock, RefreshConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const T0: i64 = 1_800_000_000_000;

/// Vends credentials valid `lifetime` ms by the endpoint's clock (local plus `skew`).
#[derive(Debug)]
struct Catalog {
    clock: Arc<ManualClock>,
    skew: i64,
    lifetime: i64,
    calls: AtomicUsize,
}

#[async_trait]
impl StorageOptionsProvider for Catalog {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let server_now = self.clock.now_millis() + self.skew;
        Ok(Some(
            [
                ("aws_access_key_id", format!("key{n}")),
                ("aws_secret_access_key", format!("secret{n}")),
                (
                    "expires_at_millis",
                    (server_now + self.lifetime).to_string(),
                ),
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

fn mapper() -> CredentialMapper<String> {
    Arc::new(|o: &StorageOptions| {
        o.get("aws_access_key_id")
            .cloned()
            .ok_or_else(|| Error::invalid_option("aws_access_key_id", "missing"))
    })
}

/// What a simulated run saw.
struct Run {
    failed: usize,
    /// Requests that reached the endpoint with a credential it calls expired.
    signed_expired: usize,
    /// Every offset the refresher applied along the way, and the last one.
    offsets_seen: Vec<i64>,
    calls: usize,
    /// Endpoint time of the first provider call after the initial credential (None: none).
    first_refresh_server_time: Option<i64>,
    requests: usize,
}

/// Requests every 100 ms for `millis` of manual time, against an endpoint `skew` ms ahead of
/// the local clock, with credentials of `lifetime` ms: each request is signed at local time
/// `t`, stamped by the endpoint 5 ms later (`Date` truncated to the second) and its answer
/// read `read_delay(i)` ms after the stamp. Answers are fed to `observe_server_time` when the
/// manual clock reaches their read time, as the HTTP layer does.
async fn simulate(skew: i64, lifetime: i64, millis: i64, read_delay: impl Fn(i64) -> i64) -> Run {
    let clock = Arc::new(ManualClock::new(T0));
    let catalog = Arc::new(Catalog {
        clock: clock.clone(),
        skew,
        lifetime,
        calls: AtomicUsize::new(0),
    });
    let refresher = CredentialRefresher::new(
        catalog.clone(),
        StorageOptions::new(),
        mapper(),
        // No jitter: it moves each refresh up to half the lead time earlier at random (so the
        // same run made 13 to 16 calls), and these runs count calls. Offsets are what they test.
        RefreshConfig {
            jitter: 0.0,
            ..RefreshConfig::default()
        },
        clock.clone(),
    )
    .unwrap();
    let mut in_flight: VecDeque<(i64, i64, i64)> = VecDeque::new(); // (read at, Date, sent)
    let mut run = Run {
        failed: 0,
        signed_expired: 0,
        offsets_seen: Vec::new(),
        calls: 0,
        first_refresh_server_time: None,
        requests: 0,
    };
    let mut i = 0;
    while clock.now_millis() < T0 + millis {
        let t = clock.now_millis();
        while in_flight.front().is_some_and(|(read, _, _)| *read <= t) {
            let (read, date, sent) = in_flight.pop_front().unwrap();
            refresher.observe_server_time(date, sent, read);
        }
        let offset = refresher.clock_offset_millis();
        if run.offsets_seen.last() != Some(&offset) {
            run.offsets_seen.push(offset);
        }
        run.requests += 1;
        match refresher.get_credential().await {
            Ok(_) => {
                let stamped = t + 5 + skew;
                let expires = refresher.stats().expires_at_millis.unwrap();
                if expires <= stamped {
                    run.signed_expired += 1;
                }
                let date = stamped - stamped.rem_euclid(1_000);
                let read = t + 5 + read_delay(i);
                // Answers are read in order of their read time.
                let at = in_flight.partition_point(|(r, _, _)| *r <= read);
                in_flight.insert(at, (read, date, t));
            }
            Err(_) => run.failed += 1,
        }
        refresher.wait_idle().await;
        if catalog.calls.load(Ordering::SeqCst) > 1 && run.first_refresh_server_time.is_none() {
            run.first_refresh_server_time = Some(clock.now_millis() + skew);
        }
        i += 1;
        clock.advance(100);
    }
    run.calls = catalog.calls.load(Ordering::SeqCst);
    run
}

#[tokio::test]
async fn c23_answers_read_two_to_three_seconds_late_give_no_offset_and_no_failure() {
    // 5 minutes of 60 s credentials; every answer waits 2.0-3.0 s (at every phase of the
    // second) before it is read.
    let run = simulate(0, 60_000, 300_000, |i| 2_000 + (i * 137) % 1_000).await;
    assert_eq!(run.offsets_seen, [0], "an offset was applied");
    assert_eq!((run.failed, run.signed_expired), (0, 0));
    assert!(
        run.calls <= 11, // 10: one refresh per half lifetime; one more allowed
        "{} provider calls for 5 min of 60 s credentials",
        run.calls
    );
}

#[tokio::test]
async fn c23_one_second_date_resolution_gives_no_offset() {
    // Fast answers (5-55 ms), every sample off by up to a second through truncation; and an
    // endpoint 900 ms ahead, still within one `Date` second.
    for skew in [0, 900, -900] {
        let run = simulate(skew, 60_000, 120_000, |i| 5 + (i * 7) % 50).await;
        assert_eq!(run.offsets_seen, [0], "skew {skew}");
        assert_eq!((run.failed, run.signed_expired), (0, 0), "skew {skew}");
    }
}

#[tokio::test]
async fn c23_an_endpoint_two_minutes_ahead_is_learned_from_late_answers_and_refreshes_earlier() {
    const SKEW: i64 = 120_000;
    let run = simulate(SKEW, 60_000, 300_000, |i| 2_000 + (i * 137) % 1_000).await;
    let learned = *run.offsets_seen.last().unwrap();
    assert!(
        (SKEW..=SKEW + 1_500).contains(&learned),
        "learned {learned} ms, expected about {SKEW}: {:?}",
        run.offsets_seen
    );
    // Nothing but 0 and values at or just above the truth (the latest the endpoint's clock
    // can read): never a wrong offset on the way, never one that signs late.
    assert!(
        run.offsets_seen
            .iter()
            .all(|&o| o == 0 || (SKEW..=SKEW + 1_500).contains(&o)),
        "{:?}",
        run.offsets_seen
    );
    // The first credential (no offset known when it was vended) is refreshed before the
    // endpoint's expiry, and no request signs with an expired one.
    let first = run.first_refresh_server_time.expect("refreshed");
    assert!(
        first < T0 + SKEW + 60_000,
        "first refresh at +{} ms",
        first - T0 - SKEW
    );
    assert_eq!(run.signed_expired, 0);
    // 11 without jitter (the first credential, vended before any offset was known, is refreshed
    // early once the offset is learned); one more allowed.
    assert!(run.calls <= 12, "{} calls", run.calls);
    // Only the requests before the first samples could have failed; none did.
    assert_eq!(run.failed, 0);
    assert!(learned.abs() > CLOCK_SKEW_THRESHOLD_MILLIS);
}

/// A TCP proxy on 127.0.0.1 that forwards requests at once and holds every byte of every
/// answer `delay` before passing it on: the client reads each answer `delay` after the
/// endpoint stamped its `Date`, as a starved or GC-paused reader does. Runs until the test's
/// runtime ends; each connection's tasks end with the connection.
async fn delaying_proxy(upstream: SocketAddr, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let requests = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                    let _ = server_write.shutdown().await;
                });
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let answers = tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = server_read.read(&mut buf).await {
                        if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                });
                while let Some((arrived, bytes)) = rx.recv().await {
                    tokio::time::sleep_until((arrived + delay).into()).await;
                    if client_write.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
                let _ = client_write.shutdown().await;
                requests.abort();
                answers.abort();
            });
        }
    });
    addr
}

/// 8 workers put and get through the delaying proxy for `run`; returns the failures, the
/// offsets seen, the provider and the endpoint.
async fn through_delaying_proxy(
    skew: i64,
    ttl: Duration,
    run: Duration,
) -> (
    usize,
    Vec<i64>,
    Arc<EndpointProvider>,
    Arc<local_s3::LocalS3>,
) {
    let s3 = endpoint().await;
    s3.set_clock_offset_millis(skew);
    let upstream: SocketAddr = s3.endpoint().trim_start_matches("http://").parse().unwrap();
    let proxy = delaying_proxy(upstream, Duration::from_secs(3)).await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), ttl));
    let mut initial = provider.vend();
    initial.insert("aws_endpoint".into(), format!("http://{proxy}"));
    let store = Arc::new(
        registry()
            .open(
                &format!("s3://{BUCKET}/c23-{skew}"),
                initial,
                Some(provider.clone()),
                RefreshConfig::default(),
            )
            .unwrap(),
    );
    let started = Instant::now();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                let (mut failed, mut offsets) = (0, Vec::new());
                let mut i = 0;
                while started.elapsed() < run && i < 1_000 {
                    let path = format!("w{w}/o{i}");
                    let body = Bytes::from(format!("worker {w} object {i}"));
                    let ok = match store.put(&path, body.clone()).await {
                        Ok(_) => store.get(&path).await.map(|b| b == body).unwrap_or(false),
                        Err(_) => false,
                    };
                    if !ok {
                        failed += 1;
                    }
                    offsets.push(store.refresh_stats().unwrap().clock_offset_millis);
                    i += 1;
                }
                (failed, offsets)
            })
        })
        .collect();
    let (mut failed, mut offsets) = (0, Vec::new());
    for w in workers {
        let (f, o) = w.await.unwrap();
        failed += f;
        offsets.extend(o);
    }
    offsets.dedup();
    (failed, offsets, provider, s3)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c23_every_answer_read_three_seconds_late_end_to_end_learns_nothing_and_fails_nothing() {
    // The endpoint's clock is exact (same host); 4 s credentials; every answer held 3 s.
    let (failed, offsets, provider, s3) =
        through_delaying_proxy(0, Duration::from_secs(4), Duration::from_secs(15)).await;
    assert_eq!(failed, 0, "requests failed");
    assert!(
        offsets.iter().all(|&o| o == 0),
        "offsets applied: {offsets:?}"
    );
    let mut rejected = 0;
    for key in provider.vended_keys() {
        rejected += s3.key_stats(&key).rejected;
    }
    assert_eq!(rejected, 0, "requests rejected by the endpoint");
    assert!(provider.calls() >= 2, "the 4 s credentials were refreshed");
    eprintln!(
        "C23 end to end, answers read 3 s late: 0 failures, offset 0, {} provider calls",
        provider.calls()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c23_endpoint_two_minutes_ahead_with_late_answers_end_to_end_is_learned() {
    const SKEW: i64 = 120_000;
    let (failed, offsets, provider, s3) =
        through_delaying_proxy(SKEW, Duration::from_secs(8), Duration::from_secs(15)).await;
    let learned = *offsets.last().unwrap();
    assert!(
        (SKEW..=SKEW + 2_000).contains(&learned),
        "learned {learned} ms, expected about {SKEW}: {offsets:?}"
    );
    assert!(
        offsets
            .iter()
            .all(|&o| o == 0 || (SKEW..=SKEW + 2_000).contains(&o)),
        "{offsets:?}"
    );
    let mut expired = 0;
    for key in provider.vended_keys() {
        expired += s3.key_stats(&key).expired;
    }
    assert_eq!(
        expired, 0,
        "requests signed with a credential the endpoint calls expired"
    );
    assert_eq!(failed, 0);
    assert!(provider.calls() >= 2, "refreshed by the endpoint's clock");
    eprintln!(
        "C23 end to end, endpoint 2 min ahead, answers read 3 s late: learned {learned} ms, \
         {} provider calls, 0 expired",
        provider.calls()
    );
}
