//! Shared fixtures for the benchmarks: a counting global allocator, storage options with a
//! realistic AWS session credential, providers, and percentile helpers.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use vended_storage::{Result, StorageOptions, StorageOptionsProvider};

// ---------------------------------------------------------------------------------------------
// Counting allocator
// ---------------------------------------------------------------------------------------------

/// The system allocator, counting allocations (alloc, alloc_zeroed, realloc) per thread while
/// [`set_counting`] is on. Off, it costs one relaxed load and a branch per allocation, so the
/// timing benchmarks are not skewed; on, only thread-local (unlocked) increments. Each bench
/// binary that counts installs it with `#[global_allocator]`.
pub struct CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static THREAD_ALLOCS: Cell<u64> = const { Cell::new(0) };
    static THREAD_BYTES: Cell<u64> = const { Cell::new(0) };
}

#[inline]
fn count(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
        let _ = THREAD_BYTES.try_with(|c| c.set(c.get() + size as u64));
    }
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Turns counting on or off (all threads).
pub fn set_counting(on: bool) {
    COUNTING.store(on, Ordering::SeqCst);
}

/// (allocations, bytes) counted on the current thread so far.
pub fn thread_allocs() -> (u64, u64) {
    (THREAD_ALLOCS.with(Cell::get), THREAD_BYTES.with(Cell::get))
}

// ---------------------------------------------------------------------------------------------
// Options and providers
// ---------------------------------------------------------------------------------------------

/// Epoch ms used as "now" by the ManualClock scenarios (2027-01-15).
pub const T0: i64 = 1_800_000_000_000;

/// Storage options as the local endpoint vends them (same keys and value lengths as an STS
/// session credential), expiring at `expires_at_millis`.
pub fn vended_options(serial: u64, expires_at_millis: i64) -> StorageOptions {
    HashMap::from([
        ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
        ("aws_region".into(), "us-east-1".into()),
        ("aws_allow_http".into(), "true".into()),
        ("aws_access_key_id".into(), format!("ASIABENCH{serial:011}")),
        ("aws_secret_access_key".into(), format!("{serial:040}")),
        ("aws_session_token".into(), "T".repeat(700)),
        ("expires_at_millis".into(), expires_at_millis.to_string()),
    ])
}

/// A provider the hot path must never call: counts calls (the benches assert zero).
#[derive(Debug, Default)]
pub struct CountingProvider {
    pub calls: AtomicUsize,
}

#[async_trait]
impl StorageOptionsProvider for CountingProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as u64 + 1;
        Ok(Some(vended_options(n, vended_clock_now() + 3_600_000)))
    }
    fn provider_id(&self) -> String {
        "bench-counting".into()
    }
}

fn vended_clock_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A provider that takes `latency` (a tokio sleep) and vends a credential living `ttl` from
/// `clock`'s now. Counts calls.
#[derive(Debug)]
pub struct SlowProvider {
    pub clock: Arc<vended_storage::ManualClock>,
    pub latency: Duration,
    pub ttl_millis: i64,
    pub calls: AtomicUsize,
    /// When the last call returned.
    pub finished: std::sync::Mutex<Option<std::time::Instant>>,
}

#[async_trait]
impl StorageOptionsProvider for SlowProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as u64 + 1;
        tokio::time::sleep(self.latency).await;
        *self.finished.lock().unwrap() = Some(std::time::Instant::now());
        use vended_storage::Clock;
        Ok(Some(vended_options(
            1000 + n,
            self.clock.now_millis() + self.ttl_millis,
        )))
    }
    fn provider_id(&self) -> String {
        "bench-slow".into()
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

/// Nearest-rank percentile of sorted `v` (`q` in 0..=1).
pub fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
