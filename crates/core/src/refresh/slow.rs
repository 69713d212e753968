//! The slow path of [`CredentialRefresher::get_credential`]: the prefetch window, the stale
//! window (wait for the refresh, never past expiry), the expired/invalidated case (wait, or
//! fail fast during backoff), and starting or joining the one refresh task.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};

use super::config::millis;
use super::{CredentialRefresher, Generation, SharedRefresh};
use crate::error::{Error, Result};

/// How much longer than the provider timeout a request waits for a refresh.
const WAIT_SLACK: Duration = Duration::from_millis(100);

/// What [`CredentialRefresher::start_refresh`] did.
pub(super) enum Start<C> {
    /// A refresh runs (started now or joined).
    Running(SharedRefresh<C>),
    /// A refresh finished after the caller looked: this newer generation serves, before its
    /// own refresh point, so no provider call is needed.
    Current(Arc<Generation<C>>),
    /// Backing off after a failure: no provider call until the backoff elapses.
    BackingOff,
}

impl<C: Send + Sync + 'static> CredentialRefresher<C> {
    pub(super) async fn slow_path(&self, now: i64) -> Result<(Arc<C>, u64)> {
        let inner = &self.inner;
        {
            let g = inner.current.load();
            if self.usable(&g, now) && now < g.stale_at_millis {
                // Prefetch window: refresh in the background, never wait. The atomics let
                // every request but the one that starts the refresh skip the lock.
                if !inner.refresh_pending.load(Ordering::Acquire)
                    && now >= inner.next_attempt_at_millis.load(Ordering::Relaxed)
                {
                    self.start_refresh(now, g.number);
                }
                return credential_of(&g, &inner.provider_id);
            }
        }
        let g = inner.current.load_full();
        if self.usable(&g, now) {
            // Stale window: wait for the refresh, but never past expiry.
            inner.counters.stale_waits.fetch_add(1, Ordering::Relaxed);
            if let Start::Running(fut) = self.start_refresh(now, g.number) {
                // Never past the last moment it may sign (expiry minus the signing margin).
                let until_expiry = g.sign_until_millis.saturating_sub(now);
                let bound = millis(inner.config.provider_timeout)
                    .min(until_expiry)
                    .max(0);
                if let Ok(Ok(fresh)) =
                    tokio::time::timeout(Duration::from_millis(bound as u64), fut).await
                {
                    if fresh.credential.is_some() {
                        return credential_of(&fresh, &inner.provider_id);
                    }
                }
            }
            let now = inner.now();
            let g = inner.current.load_full();
            if self.usable(&g, now) {
                return credential_of(&g, &inner.provider_id);
            }
            return self.wait_for_fresh(now, g.number).await;
        }
        self.wait_for_fresh(now, g.number).await
    }

    /// Expired, missing or invalidated (generation `seen` was found unusable): wait for a
    /// refresh, or fail at once during backoff.
    async fn wait_for_fresh(&self, now: i64, seen: u64) -> Result<(Arc<C>, u64)> {
        let inner = &self.inner;
        let stale = inner.current.load_full();
        let fut = match self.start_refresh(now, seen) {
            Start::Running(fut) => fut,
            Start::Current(fresh) => return credential_of(&fresh, &inner.provider_id),
            Start::BackingOff if self.last_resort(&stale, now) => {
                return credential_of(&stale, &inner.provider_id);
            }
            Start::BackingOff => {
                // Fail fast with the last error (C17): no provider call and no waiting until
                // the backoff elapses.
                inner
                    .counters
                    .backoff_rejections
                    .fetch_add(1, Ordering::Relaxed);
                let last = {
                    let slow = inner.slow.lock().unwrap_or_else(|p| p.into_inner());
                    slow.last_error.clone()
                };
                let cause = last.unwrap_or_else(|| {
                    Error::provider(&inner.provider_id, "backing off after a failed refresh")
                });
                return Err(self.unusable_error(&stale, cause));
            }
        };
        // Slightly longer than the refresh's own provider timeout, so a waiter gets that
        // refresh's outcome (its Timeout included) rather than racing it.
        let timeout = inner.config.provider_timeout + WAIT_SLACK;
        match tokio::time::timeout(timeout, fut).await {
            Ok(Ok(fresh)) => {
                let now = inner.now();
                if self.usable(&fresh, now) {
                    credential_of(&fresh, &inner.provider_id)
                } else {
                    Err(self.unusable_error(
                        &fresh,
                        Error::provider(
                            &inner.provider_id,
                            "the refreshed credential is not usable",
                        ),
                    ))
                }
            }
            Ok(Err(_)) | Err(_) if self.last_resort(&stale, inner.now()) => {
                credential_of(&stale, &inner.provider_id)
            }
            Ok(Err(e)) => Err(self.unusable_error(&stale, e)),
            Err(_) => Err(Error::Timeout {
                provider: inner.provider_id.clone(),
                waited_ms: millis(timeout) as u64,
            }),
        }
    }

    /// Whether `g`, which may no longer sign because it is inside its signing margin, still
    /// serves after its refresh failed: not expired and not rejected by the endpoint. The margin
    /// keeps a healthy store from signing just before expiry (C31); once the catalog is down the
    /// old credential is all there is, and the endpoint still accepts it until its expiry (C22:
    /// no failed read while the last credential is valid).
    fn last_resort(&self, g: &Generation<C>, now: i64) -> bool {
        g.credential.is_some()
            && g.number != self.inner.invalidated.load(Ordering::Relaxed)
            && g.expires_at_millis.is_some_and(|e| now < e)
    }

    pub(super) fn usable(&self, g: &Generation<C>, now: i64) -> bool {
        g.is_valid_at(now) && g.number != self.inner.invalidated.load(Ordering::Relaxed)
    }

    fn unusable_error(&self, g: &Generation<C>, cause: Error) -> Error {
        match g.expires_at_millis {
            Some(exp) if g.credential.is_some() && self.inner.now() >= g.sign_until_millis => {
                Error::CredentialsExpired {
                    provider: self.inner.provider_id.clone(),
                    expired_at_millis: exp,
                    last_error: Box::new(cause),
                }
            }
            _ => cause,
        }
    }

    /// Starts a refresh unless one is in flight (then joins it), one finished since the caller
    /// looked at generation `seen` and its result serves before its own refresh point (then
    /// returns it: without this check, a caller that found `seen` unusable just before that
    /// refresh completed started a second provider call), or a failed one asked to wait until a
    /// later time than `now` (epoch ms, on the offset clock).
    pub(super) fn start_refresh(&self, now: i64, seen: u64) -> Start<C> {
        let mut slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, fut)) = &slow.in_flight {
            return Start::Running(fut.clone());
        }
        let cur = self.inner.current.load_full();
        if cur.number > seen
            && cur.credential.is_some()
            && now < cur.refresh_at_millis
            && self.usable(&cur, now)
        {
            return Start::Current(cur);
        }
        if now < slow.next_attempt_at_millis {
            return Start::BackingOff;
        }
        slow.attempts += 1;
        let attempt = slow.attempts;
        // A refetch because the endpoint rejected the current credential.
        let cur = self.inner.current.load();
        let after_rejection =
            cur.credential.is_some() && cur.number == self.inner.invalidated.load(Ordering::SeqCst);
        let inner = self.inner.clone();
        let provider_id = self.inner.provider_id.clone();
        let fut: BoxFuture<'static, Result<Arc<Generation<C>>>> = match crate::driven::background()
        {
            Some(handle) => {
                // The refresh runs in its own task so that a cancelled caller never wedges the
                // others (C05); a caller-driven read's runtime is never that task's home.
                let task =
                    handle.spawn(async move { inner.run_refresh(attempt, after_rejection).await });
                async move {
                    task.await.unwrap_or_else(|e| {
                        Err(Error::provider(
                            provider_id,
                            format!("the refresh task failed: {e}"),
                        ))
                    })
                }
                .boxed()
            }
            None => async move { inner.run_refresh(attempt, after_rejection).await }.boxed(),
        };
        let shared = fut.shared();
        slow.in_flight = Some((attempt, shared.clone()));
        self.inner.refresh_pending.store(true, Ordering::Release);
        Start::Running(shared)
    }
}

/// The credential of a generation that passed `usable` (which implies one).
pub(super) fn credential_of<C>(g: &Generation<C>, provider_id: &str) -> Result<(Arc<C>, u64)> {
    match &g.credential {
        Some(c) => Ok((c.clone(), g.number)),
        None => Err(Error::provider(provider_id, "no credential available")),
    }
}
