//! Refresher counters.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A snapshot of a refresher's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Provider calls made (successful or not), the initial options not included.
    pub fetches: u64,
    /// Provider calls that failed, timed out, or returned unusable options.
    pub failures: u64,
    /// Local time of the last accepted refresh, epoch ms; `None` before the first.
    pub last_refresh_millis: Option<i64>,
    /// Expiry of the current credential, epoch ms; `None` when it has none.
    pub expires_at_millis: Option<i64>,
    /// Requests that reached the stale window and waited for a refresh.
    pub stale_waits: u64,
    /// The current generation number (1 = the options the store was opened with).
    pub generation: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) fetches: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) stale_waits: AtomicU64,
    last_refresh_millis: AtomicI64,
}

impl Counters {
    pub(crate) fn record_success(&self, now: i64) {
        self.last_refresh_millis.store(now, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, generation: u64, expires_at_millis: Option<i64>) -> RefreshStats {
        let last = self.last_refresh_millis.load(Ordering::Relaxed);
        RefreshStats {
            fetches: self.fetches.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            last_refresh_millis: (last != 0).then_some(last),
            expires_at_millis,
            stale_waits: self.stale_waits.load(Ordering::Relaxed),
            generation,
        }
    }
}
