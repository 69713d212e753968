//! Refresh timing settings.

use std::time::Duration;

/// When and how the refresher renews credentials. All fields are `Duration`s.
///
/// For a credential with lifetime `L` (expiry minus the local time it was fetched):
/// - the effective lead time is `min(lead_time, L / 2)`, less a random jitter of up to
///   `jitter` of it, chosen once per credential: from then on one background refresh runs while
///   requests keep signing with the current credential (prefetch);
/// - the effective stale window is `min(stale_window, effective lead / 2)`: from then on
///   requests wait for the refresh, at most `provider_timeout` and never with an expired
///   credential.
#[derive(Debug, Clone)]
pub struct RefreshConfig {
    /// How long before expiry a refresh starts. Default 5 minutes.
    pub lead_time: Duration,
    /// How long before expiry requests start waiting for the refresh. Default 30 s.
    pub stale_window: Duration,
    /// How long one provider call may take before it counts as failed, and the longest a
    /// request waits for a refresh. Default 30 s.
    pub provider_timeout: Duration,
    /// First retry delay after a failed refresh (doubles per failure). Default 1 s.
    pub initial_backoff: Duration,
    /// Longest retry delay. Default 30 s. Retries are never scheduled past expiry.
    pub max_backoff: Duration,
    /// Jitter as a fraction of the effective lead time, `0.0..=0.5`. Default 0.1.
    pub jitter: f64,
    /// A fresh credential whose remaining lifetime is at most this is rejected as "about to
    /// expire". Default 500 ms.
    pub min_remaining: Duration,
}

impl Default for RefreshConfig {
    fn default() -> Self {
        Self {
            lead_time: Duration::from_secs(300),
            stale_window: Duration::from_secs(30),
            provider_timeout: Duration::from_secs(30),
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            jitter: 0.1,
            min_remaining: Duration::from_millis(500),
        }
    }
}

impl RefreshConfig {
    /// The default settings with another lead time.
    pub fn with_lead_time(lead_time: Duration) -> Self {
        Self {
            lead_time,
            ..Self::default()
        }
    }
}

pub(crate) fn millis(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}
