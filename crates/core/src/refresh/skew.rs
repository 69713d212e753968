//! Clock skew: the offset between the endpoint's clock (its `Date` headers) and ours, smoothed
//! over samples and applied to every expiry decision (see
//! [`CredentialRefresher::observe_server_time`](super::CredentialRefresher::observe_server_time)).

use std::sync::atomic::Ordering;

use super::Inner;

/// Clock offsets (ms) up to this size are treated as no offset: a `Date` header has second
/// precision and the response took time to arrive.
pub const CLOCK_SKEW_THRESHOLD_MILLIS: i64 = 2_000;

/// Clock offset samples (ms) larger than this (one hour) are ignored as absurd (a wrong time
/// zone, a broken proxy), never applied.
pub const MAX_CLOCK_OFFSET_MILLIS: i64 = 3_600_000;

/// `offset_estimate` before the first sample.
pub(super) const NO_ESTIMATE: i64 = i64::MIN;

impl<C> Inner<C> {
    /// Takes one sample of the endpoint's clock (`server_millis`, epoch ms, from a `Date`
    /// header) against the local clock when the response arrived (`local_millis`, epoch ms)
    /// and updates the smoothed estimate and the applied offset. Lock-free, no allocation.
    pub(super) fn observe_server_time(&self, server_millis: i64, local_millis: i64) {
        let sample = server_millis
            .saturating_add(500)
            .saturating_sub(local_millis);
        if sample.saturating_abs() > MAX_CLOCK_OFFSET_MILLIS {
            if !self.warned_absurd_offset.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "ignoring an endpoint clock {sample} ms away from the local clock (provider '{}'): more than {MAX_CLOCK_OFFSET_MILLIS} ms",
                    self.provider_id
                );
            }
            return;
        }
        let update = |old: i64| {
            Some(if old == NO_ESTIMATE {
                sample
            } else {
                old + (sample - old) / 4
            })
        };
        let estimate =
            match self
                .offset_estimate
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, update)
            {
                Ok(old) | Err(old) => update(old).unwrap_or(sample),
            };
        let applied = if estimate.abs() > CLOCK_SKEW_THRESHOLD_MILLIS {
            estimate
        } else {
            0
        };
        let previous = self.clock_offset.swap(applied, Ordering::Relaxed);
        if (previous == 0) != (applied == 0) {
            log::info!(
                "provider '{}': endpoint clock offset {applied} ms now applied to credential expiry",
                self.provider_id
            );
        }
    }
}
