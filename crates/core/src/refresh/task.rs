//! The refresh task: one provider call (bounded by `provider_timeout`, panics caught), its
//! outcome stored as the next generation or scheduled for backoff, and the in-flight marker
//! cleared even when the task is cancelled.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures::future::FutureExt;

use super::backoff::Serving;
use super::config::millis;
use super::{Generation, Inner, SlowState};
use crate::error::{Error, Result};

impl<C: Send + Sync + 'static> Inner<C> {
    pub(super) async fn run_refresh(
        self: Arc<Self>,
        attempt: u64,
        after_rejection: bool,
    ) -> Result<Arc<Generation<C>>> {
        // If this refresh never finishes (its task is cancelled, for example because the runtime
        // that ran it shut down), the guard still clears `in_flight`: otherwise every later
        // caller would join the dead refresh and the store would be wedged for good.
        let mut guard = InFlightGuard {
            inner: &self,
            attempt,
            armed: true,
        };
        let started = self.now();
        self.counters.fetches.fetch_add(1, Ordering::Relaxed);
        if after_rejection {
            self.counters.auth_refetches.fetch_add(1, Ordering::Relaxed);
        }
        // A provider that panics is a failed refresh like any other (reported, backed off,
        // retried), never a refresh stuck "in flight" forever.
        let answer = tokio::time::timeout(
            self.config.provider_timeout,
            std::panic::AssertUnwindSafe(self.provider.fetch_storage_options()).catch_unwind(),
        )
        .await;
        let now = self.now();
        let outcome = match answer {
            Err(_) => Err(Error::Timeout {
                provider: self.provider_id.clone(),
                waited_ms: millis(self.config.provider_timeout) as u64,
            }),
            Ok(Err(panic)) => Err(Error::provider(
                &self.provider_id,
                format!(
                    "the provider panicked: {}",
                    crate::error::panic_message(panic.as_ref())
                ),
            )),
            Ok(Ok(Err(e))) => Err(self.as_provider_error(e)),
            Ok(Ok(Ok(fresh))) => self.accept(fresh, now),
        };
        guard.armed = false;
        let mut slow = self.slow.lock().unwrap_or_else(|p| p.into_inner());
        self.clear_in_flight(&mut slow, attempt);
        match &outcome {
            Ok(g) => {
                self.current.store(g.clone());
                if after_rejection {
                    // Whether the endpoint accepts it is still open: a rejection soon after
                    // continues the backoff rather than restarting it.
                    slow.unproven_generation = g.number;
                } else {
                    slow.unproven_generation = 0;
                    slow.backoff.reset();
                }
                slow.last_error = None;
                slow.next_attempt_at_millis = i64::MIN;
                self.next_attempt_at_millis
                    .store(i64::MIN, Ordering::Relaxed);
                self.counters.record_success(self.clock.now_millis());
                log::debug!(
                    "provider '{}' vended generation {} in {} ms, expires_at_millis={:?}",
                    self.provider_id,
                    g.number,
                    now - started,
                    g.expires_at_millis
                );
            }
            Err(e) => {
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                // A failure the catalog calls permanent (table gone, access revoked) is retried
                // at the slowest pace at once; transient ones back off from `initial_backoff`,
                // growing only while a valid credential still serves (C22).
                let delay = self.next_delay(&mut slow, now, e.is_retryable());
                self.back_off(&mut slow, now, delay, e.clone());
            }
        }
        outcome
    }

    /// Whether the current generation can still sign at `now` (epoch ms, offset clock): not
    /// expired, not rejected by the endpoint.
    fn serving(&self, now: i64) -> Serving {
        let cur = self.current.load();
        if cur.is_valid_at(now) && cur.number != self.invalidated.load(Ordering::SeqCst) {
            Serving::Valid
        } else {
            Serving::Nothing
        }
    }

    /// The delay (ms) after one more failure at `now` (epoch ms, offset clock): growing while
    /// the current credential still serves, the fixed `initial_backoff` once nothing valid is
    /// left (see [`Backoff`](super::Backoff)).
    pub(super) fn next_delay(&self, slow: &mut SlowState<C>, now: i64, retryable: bool) -> i64 {
        let serving = self.serving(now);
        slow.backoff.next_delay(&self.config, retryable, serving)
    }

    /// Schedules the next provider call `delay` ms after `now` (never past the expiry of a
    /// credential that is still usable, so one attempt happens at expiry), and keeps `e` for
    /// the requests that fail fast until then.
    pub(super) fn back_off(&self, slow: &mut SlowState<C>, now: i64, delay: i64, e: Error) {
        let cur = self.current.load();
        let mut next = now.saturating_add(delay);
        if let (Serving::Valid, Some(exp)) = (self.serving(now), cur.expires_at_millis) {
            next = next.min(exp);
        }
        slow.next_attempt_at_millis = next;
        self.next_attempt_at_millis.store(next, Ordering::Relaxed);
        log::warn!(
            "credential refresh failed (provider '{}', next attempt in {} ms): {e}",
            self.provider_id,
            next - now
        );
        slow.last_error = Some(e);
    }

    fn as_provider_error(&self, e: Error) -> Error {
        match e {
            Error::Provider { .. } | Error::Timeout { .. } => e,
            other => Error::Provider {
                provider: self.provider_id.clone(),
                message: other.to_string(),
                retryable: other.is_retryable()
                    || other.kind() != crate::error::ErrorKind::InvalidOptions,
                source: Some(Arc::new(other)),
            },
        }
    }
}

impl<C> Inner<C> {
    pub(super) fn clear_in_flight(&self, slow: &mut SlowState<C>, attempt: u64) {
        if slow.in_flight.as_ref().is_some_and(|(a, _)| *a == attempt) {
            slow.in_flight = None;
            self.refresh_pending.store(false, Ordering::Release);
        }
    }
}

/// Clears the in-flight marker of a refresh that was dropped before it finished.
struct InFlightGuard<'a, C> {
    inner: &'a Inner<C>,
    attempt: u64,
    armed: bool,
}

impl<C> Drop for InFlightGuard<'_, C> {
    fn drop(&mut self) {
        if self.armed {
            let mut slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
            self.inner.clear_in_flight(&mut slow, self.attempt);
        }
    }
}
