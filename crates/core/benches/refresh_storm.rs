//! Refresh storms and prefetch, on a multi-thread tokio runtime (one worker per core).
//! `harness = false`: prints tables; criterion's repeated-iteration model does not fit a
//! one-shot storm.
//!
//! - **storm**: 1,000 tasks released together (a `tokio::sync::Barrier`) call
//!   `get_credential()` through `RefreshingAwsCredentialProvider` (`dyn CredentialProvider`)
//!   with a `ManualClock` set exactly at the stale point, or at expiry; the provider takes
//!   50 ms. Reports provider calls (target: exactly 1) and the p50/p99/max wait of the 1,000
//!   requests. Each round uses a new refresher.
//! - **prefetch**: 1,000 tasks call `get_credential()` in a loop (yielding between calls) for a
//!   40 ms window, timing each call, with the clock at the refresh point (one background
//!   refresh of 50 ms runs during the whole window) vs at a fresh point (no refresh). Rounds
//!   alternate. Reports per-call latency percentiles.
//!
//! Run: `cargo bench --bench refresh_storm` (optional args after `--`: `--rounds N` storm
//! rounds, default 5 (0 skips); `--prefetch-rounds N`, default 10 (0 skips); `--tasks N`, default 1000;
//! `--workers N` runtime workers, default one per core).

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use object_store::aws::AwsCredential;
use object_store::CredentialProvider;
use tokio::sync::Barrier;
use vended_storage::cloud::aws::{aws_mapper, RefreshingAwsCredentialProvider};
use vended_storage::{CredentialRefresher, ManualClock, RefreshConfig};

const PROVIDER_LATENCY: Duration = Duration::from_millis(50);
const TTL: i64 = 600_000; // 10 min credentials
const WINDOW: Duration = Duration::from_millis(40);

/// lead 5 min, stale window 30 s, no jitter: refresh point T0+300 s, stale point T0+570 s.
fn config() -> RefreshConfig {
    RefreshConfig {
        lead_time: Duration::from_secs(300),
        stale_window: Duration::from_secs(30),
        jitter: 0.0,
        ..RefreshConfig::default()
    }
}
const REFRESH_AT: i64 = T0 + 300_000;
const STALE_AT: i64 = T0 + 570_000;
const EXPIRES_AT: i64 = T0 + TTL;

struct Setup {
    clock: Arc<ManualClock>,
    provider: Arc<SlowProvider>,
    refresher: CredentialRefresher<AwsCredential>,
    dyn_provider: Arc<dyn CredentialProvider<Credential = AwsCredential>>,
}

fn setup(now: i64) -> Setup {
    let clock = Arc::new(ManualClock::new(T0));
    let provider = Arc::new(SlowProvider {
        clock: clock.clone(),
        latency: PROVIDER_LATENCY,
        ttl_millis: TTL,
        calls: Default::default(),
        finished: Default::default(),
    });
    let refresher = CredentialRefresher::new(
        provider.clone(),
        vended_options(0, EXPIRES_AT),
        aws_mapper(),
        config(),
        clock.clone(),
    )
    .expect("refresher");
    clock.set(now);
    Setup {
        dyn_provider: Arc::new(RefreshingAwsCredentialProvider::new(refresher.clone())),
        clock,
        provider,
        refresher,
    }
}

fn ns(v: u64) -> String {
    v.to_string()
}

fn ms(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e6)
}

// ---------------------------------------------------------------------------------------------
// Storm
// ---------------------------------------------------------------------------------------------

struct StormResult {
    calls: usize,
    ok: usize,
    waits: Vec<u64>,
    spread: u64,
    stale_waits: u64,
    generation: u64,
}

async fn storm(now: i64, tasks: usize) -> StormResult {
    let s = setup(now);
    let barrier = Arc::new(Barrier::new(tasks));
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let p = s.dyn_provider.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let t0 = Instant::now();
                let r = p.get_credential().await;
                (t0, t0.elapsed(), r.is_ok())
            })
        })
        .collect();
    let mut waits = Vec::with_capacity(tasks);
    let mut starts = Vec::with_capacity(tasks);
    let mut ok = 0;
    for h in handles {
        let (t0, wait, good) = h.await.unwrap();
        starts.push(t0);
        waits.push(wait.as_nanos() as u64);
        ok += usize::from(good);
    }
    waits.sort_unstable();
    let first = *starts.iter().min().unwrap();
    let last = *starts.iter().max().unwrap();
    let stats = s.refresher.stats();
    let _ = s.clock; // kept alive for the provider
    StormResult {
        calls: s.provider.calls.load(Ordering::SeqCst),
        ok,
        waits,
        spread: (last - first).as_nanos() as u64,
        stale_waits: stats.stale_waits,
        generation: stats.generation,
    }
}

fn run_storms(rt: &tokio::runtime::Runtime, rounds: usize, tasks: usize) -> bool {
    println!(
        "\n== Refresh storm: {tasks} concurrent requests, provider latency {} ms ==",
        PROVIDER_LATENCY.as_millis()
    );
    println!(
        "{:<22} {:>5} {:>14} {:>6} {:>12} {:>9} {:>9} {:>9} {:>9} {:>13} {:>10}",
        "arrival",
        "round",
        "provider calls",
        "ok",
        "stale waits",
        "p50 ms",
        "p99 ms",
        "max ms",
        "min ms",
        "arrival ms",
        "generation"
    );
    let mut pass = true;
    for (label, now) in [
        ("stale point (exp-30s)", STALE_AT),
        ("at expiry", EXPIRES_AT),
    ] {
        let mut all = Vec::new();
        let mut calls_all = Vec::new();
        for round in 1..=rounds {
            let r = rt.block_on(storm(now, tasks));
            pass &= r.calls == 1 && r.ok == tasks;
            println!(
                "{:<22} {:>5} {:>14} {:>6} {:>12} {:>9} {:>9} {:>9} {:>9} {:>13} {:>10}",
                label,
                round,
                r.calls,
                r.ok,
                r.stale_waits,
                ms(percentile(&r.waits, 0.50)),
                ms(percentile(&r.waits, 0.99)),
                ms(*r.waits.last().unwrap()),
                ms(r.waits[0]),
                ms(r.spread),
                r.generation
            );
            calls_all.push(r.calls);
            all.extend(r.waits);
        }
        all.sort_unstable();
        println!(
            "{:<22} {:>5} {:>14} {:>6} {:>12} {:>9} {:>9} {:>9} {:>9}",
            label,
            "all",
            format!("{:?}", calls_all.iter().max().unwrap()),
            all.len(),
            "",
            ms(percentile(&all, 0.50)),
            ms(percentile(&all, 0.99)),
            ms(*all.last().unwrap()),
            ms(all[0]),
        );
    }
    println!("(`provider calls` per round, target exactly 1; `arrival ms`: spread of the requests' start times)");
    pass
}

// ---------------------------------------------------------------------------------------------
// Prefetch
// ---------------------------------------------------------------------------------------------

struct PrefetchResult {
    lat: Vec<u64>,
    calls: usize,
    /// When the provider call finished, µs after the window end (negative: before it ended,
    /// so part of the window ran without a refresh in flight).
    refresh_done_after_window: Option<i64>,
    generation_end: u64,
}

async fn prefetch_round(now: i64, tasks: usize) -> PrefetchResult {
    let s = setup(now);
    let barrier = Arc::new(Barrier::new(tasks));
    let window_end: Arc<Mutex<Option<Instant>>> = Arc::default();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let p = s.dyn_provider.clone();
            let barrier = barrier.clone();
            let window_end = window_end.clone();
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(1024);
                if barrier.wait().await.is_leader() {
                    *window_end.lock().unwrap() = Some(Instant::now() + WINDOW);
                }
                let end = loop {
                    if let Some(e) = *window_end.lock().unwrap() {
                        break e;
                    }
                    tokio::task::yield_now().await;
                };
                while Instant::now() < end {
                    let t0 = Instant::now();
                    let r = p.get_credential().await;
                    let d = t0.elapsed();
                    assert!(r.is_ok());
                    lat.push(d.as_nanos() as u64);
                    tokio::task::yield_now().await;
                }
                lat
            })
        })
        .collect();
    let mut lat = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let end = window_end.lock().unwrap().unwrap();
    let _ = s.refresher.wait_idle().await;
    let finished = *s.provider.finished.lock().unwrap();
    lat.sort_unstable();
    PrefetchResult {
        lat,
        calls: s.provider.calls.load(Ordering::SeqCst),
        refresh_done_after_window: finished.map(|f| {
            if f >= end {
                (f - end).as_micros() as i64
            } else {
                -((end - f).as_micros() as i64)
            }
        }),
        generation_end: s.refresher.stats().generation,
    }
}

fn run_prefetch(rt: &tokio::runtime::Runtime, rounds: usize, tasks: usize) {
    println!(
        "\n== Prefetch: per-call latency of {tasks} looping tasks over a {} ms window, with vs without a background refresh ({} ms provider) ==",
        WINDOW.as_millis(),
        PROVIDER_LATENCY.as_millis()
    );
    println!(
        "{:<26} {:>5} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>14}",
        "case",
        "round",
        "calls",
        "p50 ns",
        "p90 ns",
        "p99 ns",
        "p99.9 ns",
        "max ns",
        "prov.calls",
        "refresh end ms"
    );
    let mut pooled: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let mut p99s: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    let cases = [
        ("no refresh (fresh)", T0 + 1_000),
        ("prefetch refresh running", REFRESH_AT),
    ];
    // One untimed warm-up round of each.
    for (_, now) in cases {
        rt.block_on(prefetch_round(now, tasks));
    }
    for round in 1..=rounds {
        for (i, (label, now)) in cases.iter().enumerate() {
            let r = rt.block_on(prefetch_round(*now, tasks));
            println!(
                "{:<26} {:>5} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10} {:>10} {:>14}",
                label,
                round,
                r.lat.len(),
                ns(percentile(&r.lat, 0.50)),
                ns(percentile(&r.lat, 0.90)),
                ns(percentile(&r.lat, 0.99)),
                ns(percentile(&r.lat, 0.999)),
                ns(*r.lat.last().unwrap()),
                r.calls,
                r.refresh_done_after_window
                    .map(|d| format!("{:+.2}", d as f64 / 1000.0))
                    .unwrap_or_else(|| "-".into())
            );
            debug_assert!(r.calls == 0 || r.generation_end == 2);
            p99s[i].push(percentile(&r.lat, 0.99));
            pooled[i].extend(r.lat);
        }
    }
    for (i, (label, _)) in cases.iter().enumerate() {
        let v = &mut pooled[i];
        v.sort_unstable();
        println!(
            "{:<26} {:>5} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10}",
            label,
            "all",
            v.len(),
            ns(percentile(v, 0.50)),
            ns(percentile(v, 0.90)),
            ns(percentile(v, 0.99)),
            ns(percentile(v, 0.999)),
            ns(*v.last().unwrap()),
        );
    }
    println!("(`refresh end ms`: when the provider call returned, relative to the window end; positive = the refresh was in flight for the whole window)");
    let spread = |v: &Vec<u64>| {
        let mut v = v.clone();
        v.sort_unstable();
        format!("{}..{}", ns(v[0]), ns(*v.last().unwrap()))
    };
    println!(
        "per-round p99 range (ns): no refresh {}, prefetch {}",
        spread(&p99s[0]),
        spread(&p99s[1])
    );
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs bench binaries without `--bench`: do a quick smoke run.
    let quick = !std::env::args().any(|a| a == "--bench");
    let rounds = arg("--rounds", if quick { 1 } else { 5 });
    let prefetch_rounds = arg("--prefetch-rounds", if quick { 1 } else { 10 });
    let tasks = arg("--tasks", 1000);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let workers = arg("--workers", cores);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "runtime: multi-thread, {workers} workers ({cores} cores); config: lead 300 s, stale window 30 s, jitter 0, credential TTL 600 s"
    );
    if rounds > 0 {
        let pass = run_storms(&rt, rounds, tasks);
        println!(
            "\nstorm target (exactly 1 provider call, all requests served): {}",
            if pass { "met" } else { "MISSED" }
        );
    }
    if prefetch_rounds > 0 {
        run_prefetch(&rt, prefetch_rounds, tasks);
    }
}
