//! Wall clocks for the refresher: the system clock, and a manual one for tests.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A wall clock in epoch milliseconds. Expiries are absolute epoch times, so the refresher
/// compares them with this clock.
pub trait Clock: Send + Sync + Debug {
    /// Now, epoch milliseconds.
    fn now_millis(&self) -> i64;

    /// Now, epoch milliseconds, possibly a few milliseconds behind (a cheaper read). The
    /// refresher uses it only to decide that a credential is still before its refresh point,
    /// which lies at least the stale window before expiry. Defaults to
    /// [`now_millis`](Self::now_millis).
    fn now_millis_coarse(&self) -> i64 {
        self.now_millis()
    }
}

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis().min(i64::MAX as u128) as i64,
            Err(_) => 0,
        }
    }

    /// `CLOCK_REALTIME_COARSE` on Linux (the kernel's last tick, typically 1–4 ms behind, about
    /// six times cheaper than a precise read); elsewhere the precise clock.
    #[cfg(target_os = "linux")]
    fn now_millis_coarse(&self) -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_REALTIME_COARSE exists on every
        // Linux since 2.6.32. On failure fall back to the precise clock.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        if rc != 0 {
            return self.now_millis();
        }
        ts.tv_sec
            .saturating_mul(1000)
            .saturating_add(ts.tv_nsec / 1_000_000)
    }
}

/// A clock that only moves when told to (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    /// A clock reading `now_millis` (epoch ms).
    pub fn new(now_millis: i64) -> Self {
        Self {
            now: AtomicI64::new(now_millis),
        }
    }
    /// Moves the clock forward by `millis`.
    pub fn advance(&self, millis: i64) {
        self.now.fetch_add(millis, Ordering::SeqCst);
    }
    /// Sets the clock to `now_millis` (epoch ms).
    pub fn set(&self, now_millis: i64) {
        self.now.store(now_millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}
