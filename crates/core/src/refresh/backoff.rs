//! The retry schedule after failures, written once: the credential refresher uses it between
//! failed refreshes, and the table opener (`TableOpens` in `table.rs`, a layer above) between
//! failed table opens.

use super::config::millis;
use super::RefreshConfig;

/// Exponential backoff: `initial_backoff` after the first failure, doubling per failure in a
/// row up to `max_backoff` ([`RefreshConfig`]); a failure that is not retryable (the catalog
/// says the table is gone, access was revoked...) waits `max_backoff` at once. A success
/// [`reset`](Self::reset)s it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backoff {
    /// The delay after the next retryable failure, ms (0: `initial_backoff`).
    next_millis: i64,
}

impl Backoff {
    /// The delay (ms, at least 1) to wait after one more failure, with `config`'s bounds;
    /// remembers the doubled delay for the next failure.
    pub fn next_delay(&mut self, config: &RefreshConfig, retryable: bool) -> i64 {
        let initial = millis(config.initial_backoff).max(1);
        let max = millis(config.max_backoff).max(initial);
        let delay = match (retryable, self.next_millis) {
            (false, _) => max,
            (true, 0) => initial,
            (true, b) => b.min(max),
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
        let delays: Vec<i64> = (0..7).map(|_| b.next_delay(&config, true)).collect();
        assert_eq!(delays, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
        b.reset();
        assert_eq!(b.next_delay(&config, false), 30_000);
        assert_eq!(b.next_delay(&config, true), 30_000);
        b.reset();
        assert_eq!(b.next_delay(&config, true), 1_000);
    }
}
