//! Hot path: `get_credential()` on a fresh credential.
//!
//! - `hot_path/*` (one task, current-thread runtime, the calls looped inside one `block_on`):
//!   `object_store::StaticCredentialProvider` vs our `RefreshingAwsCredentialProvider`, both
//!   through `Arc<dyn object_store::CredentialProvider>` as `AmazonS3` calls them; plus the
//!   refresher called directly (no `#[async_trait]` box).
//! - `hot_path_components/*`: the pieces (clock reads, `ArcSwap::load`, `Arc` clone, a boxed
//!   future of 16 vs 288 bytes) to attribute the difference.
//! - `hot_path_concurrent/{static,refreshing}/{1,4,64}`: the same calls from 1, 4 and 64 tasks
//!   on a multi-thread runtime (one worker per core); time per call is wall time / all calls.
//! - Before criterion runs, an allocation count: a counting global allocator counts the
//!   allocations of 10,000 hot-path calls (per task, on the task's own thread).
//! - After criterion runs, a ratio table read from criterion's `estimates.json`, then paired
//!   ratios: static and ours timed in alternating batches, which keeps the ratio honest when
//!   other processes load the machine during the run.
//!
//! Run: `cargo bench --bench credential_hot_path` (warm-up 1 s, measurement 3 s per benchmark,
//! set in `main`; criterion's flags after `--` override). With `HOT_PATH_PAIRED_ONLY=1` only
//! the allocation count and the paired ratios run (seconds).

mod common;

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use criterion::{BenchmarkId, Criterion, Throughput};
use object_store::aws::AwsCredential;
use object_store::{CredentialProvider, StaticCredentialProvider};
use vended_storage::cloud::aws::{
    aws_credential_from_options, aws_mapper, RefreshingAwsCredentialProvider,
};
use vended_storage::{Clock, CredentialRefresher, ManualClock, RefreshConfig, SystemClock};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

type DynProvider = Arc<dyn CredentialProvider<Credential = AwsCredential>>;

const CALLS: u64 = 10_000;
const TASKS: [usize; 3] = [1, 4, 64];

struct Fixture {
    provider: Arc<CountingProvider>,
    refresher: CredentialRefresher<AwsCredential>,
    refreshing: DynProvider,
    refreshing_manual: DynProvider,
    static_: DynProvider,
}

impl Fixture {
    fn new() -> Self {
        // A credential valid for 1 h: 55 min before its refresh point, so every call is a hot
        // path call (the provider is never called; checked at the end).
        let now = SystemClock.now_millis();
        let options = vended_options(1, now + 3_600_000);
        let provider = Arc::new(CountingProvider::default());
        let refresher = CredentialRefresher::new(
            provider.clone(),
            options.clone(),
            aws_mapper(),
            RefreshConfig::default(),
            Arc::new(SystemClock),
        )
        .expect("refresher");
        let manual = CredentialRefresher::new(
            provider.clone(),
            options.clone(),
            aws_mapper(),
            RefreshConfig::default(),
            Arc::new(ManualClock::new(now)),
        )
        .expect("refresher");
        let static_: DynProvider = Arc::new(StaticCredentialProvider::new(
            aws_credential_from_options(&options).expect("credential"),
        ));
        Self {
            provider,
            refreshing: Arc::new(RefreshingAwsCredentialProvider::new(refresher.clone())),
            refreshing_manual: Arc::new(RefreshingAwsCredentialProvider::new(manual)),
            refresher,
            static_,
        }
    }
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn multi_thread() -> tokio::runtime::Runtime {
    // Default worker count: one per core (2 on the reference machine).
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Static,
    Refreshing,
    RefreshingManualClock,
    Direct,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Static => "StaticCredentialProvider (dyn CredentialProvider)",
            Kind::Refreshing => "RefreshingAwsCredentialProvider (dyn CredentialProvider)",
            Kind::RefreshingManualClock => "RefreshingAwsCredentialProvider, ManualClock",
            Kind::Direct => "CredentialRefresher::get_credential (direct)",
        }
    }
}

/// `n` hot-path calls; returns the allocations (count, bytes) this thread made during them.
async fn calls(f: &Fixture, kind: Kind, n: u64) -> (u64, u64) {
    let (a0, b0) = thread_allocs();
    match kind {
        Kind::Static => {
            for _ in 0..n {
                black_box(f.static_.get_credential().await.unwrap());
            }
        }
        Kind::Refreshing => {
            for _ in 0..n {
                black_box(f.refreshing.get_credential().await.unwrap());
            }
        }
        Kind::RefreshingManualClock => {
            for _ in 0..n {
                black_box(f.refreshing_manual.get_credential().await.unwrap());
            }
        }
        Kind::Direct => {
            for _ in 0..n {
                black_box(f.refresher.get_credential().await.unwrap());
            }
        }
    }
    let (a1, b1) = thread_allocs();
    (a1 - a0, b1 - b0)
}

/// Counts allocations of 10,000 calls per task. The loop never yields (every await is ready),
/// so it runs on one worker thread and the thread-local counter attributes exactly.
fn allocation_report(f: &Arc<Fixture>) {
    println!("\n== Allocations per hot-path call (counting global allocator) ==");
    println!(
        "{:<58} {:>6} {:>10} {:>12} {:>12} {:>10}",
        "provider", "tasks", "calls", "allocations", "bytes", "per call"
    );
    let rt = current_thread();
    for kind in [Kind::Static, Kind::Refreshing, Kind::Direct] {
        rt.block_on(calls(f, kind, 100)); // warm
        let (a, b) = rt.block_on(calls(f, kind, CALLS));
        println!(
            "{:<58} {:>6} {:>10} {:>12} {:>12} {:>10.3}",
            kind.name(),
            "1 (ct)",
            CALLS,
            a,
            b,
            a as f64 / CALLS as f64
        );
    }
    let rt = multi_thread();
    for kind in [Kind::Static, Kind::Refreshing, Kind::Direct] {
        for tasks in TASKS {
            let (a, b) = rt.block_on(async {
                let handles: Vec<_> = (0..tasks)
                    .map(|_| {
                        let f = f.clone();
                        tokio::spawn(async move {
                            calls(&f, kind, 100).await;
                            calls(&f, kind, CALLS).await
                        })
                    })
                    .collect();
                let mut sum = (0, 0);
                for h in handles {
                    let (a, b) = h.await.unwrap();
                    sum = (sum.0 + a, sum.1 + b);
                }
                sum
            });
            let total = CALLS * tasks as u64;
            println!(
                "{:<58} {:>6} {:>10} {:>12} {:>12} {:>10.3}",
                kind.name(),
                tasks,
                total,
                a,
                b,
                a as f64 / total as f64
            );
        }
    }
    println!();
}

fn bench_single(c: &mut Criterion, f: &Arc<Fixture>) {
    let rt = current_thread();
    let mut g = c.benchmark_group("hot_path");
    g.throughput(Throughput::Elements(1));
    let cases: [(&str, &DynProvider); 3] = [
        ("static_provider", &f.static_),
        ("refreshing_provider", &f.refreshing),
        ("refreshing_provider_manual_clock", &f.refreshing_manual),
    ];
    for (name, p) in cases {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(p.get_credential().await.unwrap());
                    }
                    start.elapsed()
                })
            })
        });
    }
    g.bench_function("refresher_direct", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(f.refresher.get_credential().await.unwrap());
                }
                start.elapsed()
            })
        })
    });
    g.finish();
}

/// The pieces of a hot-path call, to attribute the difference between the two providers.
fn bench_components(c: &mut Criterion, f: &Arc<Fixture>) {
    let mut g = c.benchmark_group("hot_path_components");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    g.bench_function("system_clock_now_millis", |b| {
        b.iter(|| black_box(clock.now_millis()))
    });
    let manual: Arc<dyn Clock> = Arc::new(ManualClock::new(T0));
    g.bench_function("manual_clock_now_millis", |b| {
        b.iter(|| black_box(manual.now_millis()))
    });
    g.bench_function("instant_now", |b| b.iter(Instant::now));
    let cred = Arc::new(aws_credential_from_options(&vended_options(1, T0)).unwrap());
    g.bench_function("arc_clone_drop", |b| b.iter(|| black_box(cred.clone())));
    let swap = arc_swap::ArcSwap::from(cred.clone());
    g.bench_function("arc_swap_load", |b| {
        b.iter(|| black_box(swap.load().key_id.len()))
    });
    g.bench_function("arc_swap_load_clone_inner", |b| {
        b.iter(|| black_box(Arc::clone(&swap.load())))
    });
    g.bench_function("box_alloc_16B", |b| {
        b.iter(|| black_box(Box::new([0u64; 2])))
    });
    g.bench_function("box_alloc_288B", |b| {
        b.iter(|| black_box(Box::new([0u64; 36])))
    });
    let _ = f;
    g.finish();
}

fn bench_concurrent(c: &mut Criterion, f: &Arc<Fixture>) {
    let rt = multi_thread();
    let mut g = c.benchmark_group("hot_path_concurrent");
    g.throughput(Throughput::Elements(1));
    for tasks in TASKS {
        for (name, kind) in [("static", Kind::Static), ("refreshing", Kind::Refreshing)] {
            g.bench_with_input(BenchmarkId::new(name, tasks), &tasks, |b, &tasks| {
                b.iter_custom(|iters| {
                    // `iters` calls in all, split over the tasks; time is wall time.
                    let per = iters / tasks as u64;
                    let extra = iters % tasks as u64;
                    rt.block_on(async {
                        let start = Instant::now();
                        let handles: Vec<_> = (0..tasks as u64)
                            .map(|i| {
                                let f = f.clone();
                                let n = per + u64::from(i < extra);
                                tokio::spawn(async move {
                                    calls(&f, kind, n).await;
                                })
                            })
                            .collect();
                        for h in handles {
                            h.await.unwrap();
                        }
                        start.elapsed()
                    })
                })
            });
        }
    }
    g.finish();
}

/// Where criterion writes its results (same rule as criterion's default).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join("criterion");
    }
    // target/<profile>/deps/<bench> -> target/criterion
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .nth(3)
        .map(|t| t.join("criterion"))
        .unwrap_or_else(|| "criterion".into())
}

/// (estimate, lower, upper) ns per call from this run's estimates.
fn estimate(
    dir: &std::path::Path,
    id: &str,
    since: std::time::SystemTime,
) -> Option<(f64, f64, f64)> {
    let p = dir.join(id).join("new").join("estimates.json");
    if std::fs::metadata(&p).ok()?.modified().ok()? < since {
        return None; // not run this time (filtered out)
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
    // `slope` (linear sampling, as criterion prints for iter_custom), else the mean.
    let m = if v["slope"].is_object() {
        &v["slope"]
    } else {
        &v["mean"]
    };
    Some((
        m["point_estimate"].as_f64()?,
        m["confidence_interval"]["lower_bound"].as_f64()?,
        m["confidence_interval"]["upper_bound"].as_f64()?,
    ))
}

fn ratio_report(since: std::time::SystemTime) {
    let dir = criterion_dir();
    println!(
        "\n== Ratios (criterion estimate (slope), ns per call; from {}) ==",
        dir.display()
    );
    println!(
        "{:<44} {:>22} {:>22} {:>8}",
        "case", "static [95% CI]", "ours [95% CI]", "ratio"
    );
    let mut rows: Vec<(String, String, String)> = vec![
        (
            "1 task, via dyn CredentialProvider".into(),
            "hot_path/static_provider".into(),
            "hot_path/refreshing_provider".into(),
        ),
        (
            "1 task, via dyn, ManualClock".into(),
            "hot_path/static_provider".into(),
            "hot_path/refreshing_provider_manual_clock".into(),
        ),
        (
            "1 task, refresher direct".into(),
            "hot_path/static_provider".into(),
            "hot_path/refresher_direct".into(),
        ),
    ];
    for t in TASKS {
        rows.push((
            format!("{t} tasks, multi-thread runtime"),
            format!("hot_path_concurrent/static/{t}"),
            format!("hot_path_concurrent/refreshing/{t}"),
        ));
    }
    for (label, a, b) in rows {
        match (estimate(&dir, &a, since), estimate(&dir, &b, since)) {
            (Some(x), Some(y)) => println!(
                "{:<44} {:>22} {:>22} {:>7.2}x",
                label,
                format!("{:.1} [{:.1}, {:.1}]", x.0, x.1, x.2),
                format!("{:.1} [{:.1}, {:.1}]", y.0, y.1, y.2),
                y.0 / x.0
            ),
            _ => println!("{label:<44} (not run)"),
        }
    }
    println!();
}

/// `n` calls in all from `tasks` tasks on `rt` (a current-thread runtime when `tasks == 0`).
fn timed(
    rt: &tokio::runtime::Runtime,
    f: &Arc<Fixture>,
    kind: Kind,
    tasks: usize,
    n: u64,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        if tasks == 0 {
            calls(f, kind, n).await;
        } else {
            let handles: Vec<_> = (0..tasks as u64)
                .map(|i| {
                    let f = f.clone();
                    let k = n / tasks as u64 + u64::from(i < n % tasks as u64);
                    tokio::spawn(async move {
                        calls(&f, kind, k).await;
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
        }
        start.elapsed()
    })
}

/// Static and ours measured in alternating short batches (A B, B A, ...), so that load from
/// other processes on a shared machine hits both sides alike; reports medians over the rounds
/// and the median of the per-round ratios.
fn paired_report(f: &Arc<Fixture>, quick: bool) {
    let ct = current_thread();
    let mt = multi_thread();
    let rounds = if quick { 3 } else { 201 };
    println!("\n== Paired ratios: static vs ours in alternating batches ({rounds} rounds; ns per call, wall time) ==");
    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>10} {:>16}",
        "case", "calls/rnd", "static", "ours", "ratio", "ratio p10..p90"
    );
    let cases: [(&str, Kind, usize, u64); 6] = [
        (
            "1 task (current-thread), via dyn",
            Kind::Refreshing,
            0,
            20_000,
        ),
        (
            "1 task (current-thread), via dyn, ManualClock",
            Kind::RefreshingManualClock,
            0,
            20_000,
        ),
        (
            "1 task (current-thread), refresher direct",
            Kind::Direct,
            0,
            20_000,
        ),
        ("1 task, multi-thread runtime", Kind::Refreshing, 1, 20_000),
        (
            "4 tasks, multi-thread runtime",
            Kind::Refreshing,
            4,
            100_000,
        ),
        (
            "64 tasks, multi-thread runtime",
            Kind::Refreshing,
            64,
            200_000,
        ),
    ];
    for (label, ours, tasks, n) in cases {
        let rt = if tasks == 0 { &ct } else { &mt };
        let per = |d: Duration| d.as_nanos() as f64 / n as f64;
        // warm both
        timed(rt, f, Kind::Static, tasks, n);
        timed(rt, f, ours, tasks, n);
        let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (x, y) = if round % 2 == 0 {
                let x = per(timed(rt, f, Kind::Static, tasks, n));
                (x, per(timed(rt, f, ours, tasks, n)))
            } else {
                let y = per(timed(rt, f, ours, tasks, n));
                (per(timed(rt, f, Kind::Static, tasks, n)), y)
            };
            a.push(x);
            b.push(y);
            r.push(y / x);
        }
        let med = |v: &mut Vec<f64>, q: f64| {
            v.sort_by(|x, y| x.partial_cmp(y).unwrap());
            v[((v.len() - 1) as f64 * q).round() as usize]
        };
        println!(
            "{:<44} {:>10} {:>10.1} {:>10.1} {:>9.2}x {:>16}",
            label,
            n,
            med(&mut a, 0.5),
            med(&mut b, 0.5),
            med(&mut r, 0.5),
            format!("{:.2}..{:.2}", med(&mut r, 0.1), med(&mut r, 0.9))
        );
    }
    println!();
}

fn main() {
    let f = Arc::new(Fixture::new());
    let started = std::time::SystemTime::now() - Duration::from_secs(1);
    // Short runs by default (the whole bench takes about 1.5 min); command-line flags override.
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    // `--list`, and `--profile-time` (for profilers): criterion only, no extra reports.
    let list_only = std::env::args().any(|a| a == "--list" || a == "--profile-time");
    if !list_only {
        set_counting(true);
        allocation_report(&f);
        set_counting(false);
    }
    // HOT_PATH_PAIRED_ONLY=1: only the allocation count and the paired ratios (a few seconds).
    let paired_only = std::env::var_os("HOT_PATH_PAIRED_ONLY").is_some_and(|v| v != "0");
    if !paired_only {
        bench_single(&mut c, &f);
        bench_components(&mut c, &f);
        bench_concurrent(&mut c, &f);
        c.final_summary();
    }
    if !list_only {
        if !paired_only {
            ratio_report(started);
        }
        let quick = !std::env::args().any(|a| a == "--bench");
        paired_report(&f, quick);
        let calls = f.provider.calls.load(Ordering::SeqCst);
        println!("provider calls during the hot-path benches: {calls} (expected 0)");
        assert_eq!(calls, 0, "a hot-path call reached the provider");
    }
}
