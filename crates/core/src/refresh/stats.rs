//! Refresher counters.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A snapshot of a refresher's counters.
///
/// The JNI binding flattens it into a `long[]` in field order, `None` as `-1`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Calls of the provider's `fetch_storage_options`, counted when the call starts, whatever
    /// its outcome (an accepted answer, an error, a timeout, a panic, an unusable answer) and
    /// whatever the reason (prefetch, stale window, expiry, no credential yet, a rejection by
    /// the endpoint). The initial options a store is opened with are not a call, nor is a
    /// request that failed fast during backoff.
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
    /// Generations the store layer reported as rejected by the endpoint (each generation
    /// counted once, however many requests it failed).
    pub endpoint_rejections: u64,
    /// Provider calls made because the endpoint rejected the current credential (a subset of
    /// `fetches`).
    pub auth_refetches: u64,
    /// Requests that needed a new credential while the refresher was backing off after a
    /// failure, and so failed at once with the last error, without a provider call.
    pub backoff_rejections: u64,
    /// The offset applied to the local clock for expiry decisions, ms (endpoint clock minus
    /// local clock: the upper bound of what agreeing `Date` samples prove; 0 unless they prove
    /// it beyond 2 s). See [`crate::CredentialRefresher::observe_server_time`].
    pub clock_offset_millis: i64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) fetches: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) stale_waits: AtomicU64,
    pub(crate) endpoint_rejections: AtomicU64,
    pub(crate) auth_refetches: AtomicU64,
    pub(crate) backoff_rejections: AtomicU64,
    last_refresh_millis: AtomicI64,
}

impl Counters {
    pub(crate) fn record_success(&self, local_now: i64) {
        self.last_refresh_millis.store(local_now, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        generation: u64,
        expires_at_millis: Option<i64>,
        clock_offset_millis: i64,
    ) -> RefreshStats {
        let last = self.last_refresh_millis.load(Ordering::Relaxed);
        RefreshStats {
            fetches: self.fetches.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            last_refresh_millis: (last != 0).then_some(last),
            expires_at_millis,
            stale_waits: self.stale_waits.load(Ordering::Relaxed),
            generation,
            endpoint_rejections: self.endpoint_rejections.load(Ordering::Relaxed),
            auth_refetches: self.auth_refetches.load(Ordering::Relaxed),
            backoff_rejections: self.backoff_rejections.load(Ordering::Relaxed),
            clock_offset_millis,
        }
    }
}
