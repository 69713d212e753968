//! The retry schedule after failures, written once: the credential refresher uses it between
//! failed refreshes, and the table opener (`TableOpens` in `table.rs`, a layer above) between
//! failed table opens.
//!
//! Two regimes (case C22):
//! - **Something valid still serves** (a refresher whose credential has not expired): the
//!   delay grows, from `initial_backoff` doubling up to `max_backoff`, to spare a struggling
//!   catalog while nothing is lost by waiting.
//! - **Nothing valid is left** (the credential expired, never existed or was rejected; a table
//!   that could not be opened): the caller is down until a provider call succeeds, so the
//!   delay stays at `initial_backoff` (default 1 s): about one attempt a second per credential
//!   source, never one per request, never growing, and service returns within about that long
//!   of the catalog's return. A failure the catalog calls permanent (table gone, access
//!   revoked) still waits `max_backoff` in both regimes.

use super::config::millis;
use super::RefreshConfig;

/// Whether the caller of [`Backoff::next_delay`] still has a valid credential to serve with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serving {
    /// A valid credential still serves: the delay grows.
    Valid,
    /// Nothing valid is left (expired, missing, rejected, or a table never opened): retryable
    /// failures are retried at the fixed `initial_backoff`.
    Nothing,
}

/// Exponential backoff: `initial_backoff` after the first failure, doubling per failure in a
/// row up to `max_backoff` ([`RefreshConfig`]) while something valid serves, a fixed
/// `initial_backoff` once nothing is (see the module docs); a failure that is not retryable
/// (the catalog says the table is gone, access was revoked...) waits `max_backoff` at once. A
/// success [`reset`](Self::reset)s it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the next retryable failure while something valid serves, ms
    /// (0: `initial_backoff`).
    next_millis: i64,
}

impl Backoff {
    /// The delay (ms, at least 1) to wait after one more failure, with `config`'s bounds.
    /// With [`Serving::Valid`] it remembers the doubled delay for the next failure; with
    /// [`Serving::Nothing`] a retryable failure gets `initial_backoff` and the schedule does not
    /// grow.
    pub fn next_delay(&mut self, config: &RefreshConfig, retryable: bool, serving: Serving) -> i64 {
        let initial = millis(config.initial_backoff).max(1);
        let max = millis(config.max_backoff).max(initial);
        let delay = match (retryable, serving, self.next_millis) {
            (false, _, _) => max,
            (true, Serving::Nothing, _) => return initial,
            (true, Serving::Valid, 0) => initial,
            (true, Serving::Valid, b) => b.min(max),
        };
        self.next_millis = delay.saturating_mul(2).min(max);
        delay
    }

    /// Starts the schedule over (after a success).
    pub fn reset(&mut self) {
        self.next_millis = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_initial_to_max_and_starts_at_max_when_not_retryable() {
        let config = RefreshConfig::default();
        let mut b = Backoff::default();
        let delays: Vec<i64> = (0..7)
            .map(|_| b.next_delay(&config, true, Serving::Valid))
            .collect();
        assert_eq!(delays, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
        b.reset();
        assert_eq!(b.next_delay(&config, false, Serving::Valid), 30_000);
        assert_eq!(b.next_delay(&config, true, Serving::Valid), 30_000);
        b.reset();
        assert_eq!(b.next_delay(&config, true, Serving::Valid), 1_000);
    }

    #[test]
    fn c22_with_nothing_valid_retryable_failures_stay_at_the_initial_delay() {
        let config = RefreshConfig::default();
        let mut b = Backoff::default();
        // Grown while a credential served...
        for _ in 0..4 {
            b.next_delay(&config, true, Serving::Valid);
        }
        // ...then it expired: one attempt a second, however long the outage.
        let delays: Vec<i64> = (0..50)
            .map(|_| b.next_delay(&config, true, Serving::Nothing))
            .collect();
        assert!(delays.iter().all(|&d| d == 1_000), "{delays:?}");
        // A permanent failure still waits the longest delay.
        assert_eq!(b.next_delay(&config, false, Serving::Nothing), 30_000);
    }
}
