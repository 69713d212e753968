//! The credential refresher: keeps a valid credential from a [`StorageOptionsProvider`] and
//! renews it before it expires.
//!
//! - **Hot path**: while the current credential is before its refresh point,
//!   [`CredentialRefresher::get_credential`] is an `ArcSwap` load, a clock read and an `Arc`
//!   clone: no lock, no allocation.
//! - **Prefetch** (from the refresh point, see [`RefreshConfig`]): exactly one refresh runs in a
//!   spawned task; every request keeps signing with the still-valid credential.
//! - **Stale window** (shortly before expiry): requests wait for that refresh, at most
//!   `provider_timeout` and never past expiry.
//! - **Expired or invalidated** (after an auth failure): requests wait for a refresh; if it fails
//!   they get an error carrying the provider's message and source.
//! - A failed refresh is never cached as a result: the still-valid credential keeps serving and
//!   retries back off exponentially (never past expiry); once expired, the next request tries
//!   again at once (one provider call shared by all concurrent waiters).

mod clock;
mod config;
mod generation;
mod stats;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::RefreshConfig;
pub use generation::{CredentialMapper, Generation};
pub use stats::RefreshStats;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use futures::future::{BoxFuture, FutureExt, Shared};

use crate::error::{Error, Result};
use crate::options::{has_credentials, merge, StorageOptions};
use crate::provider::StorageOptionsProvider;
use config::millis;
use stats::Counters;

/// How much longer than the provider timeout a request waits for a refresh.
const WAIT_SLACK: Duration = Duration::from_millis(100);

/// How far behind [`Clock::now_millis_coarse`] may be, as far as the hot path is concerned.
const COARSE_CLOCK_MARGIN_MILLIS: i64 = 20;

type SharedRefresh<C> = Shared<BoxFuture<'static, Result<Arc<Generation<C>>>>>;

/// Keeps the credential of one store fresh. Cheap to clone (shared state).
pub struct CredentialRefresher<C> {
    inner: Arc<Inner<C>>,
}

impl<C> Clone for CredentialRefresher<C> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<C> std::fmt::Debug for CredentialRefresher<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.inner.current.load();
        f.debug_struct("CredentialRefresher")
            .field("provider", &self.inner.provider_id)
            .field("generation", &g.number)
            .field("expires_at_millis", &g.expires_at_millis)
            .finish_non_exhaustive()
    }
}

struct Inner<C> {
    provider: Arc<dyn StorageOptionsProvider>,
    provider_id: String,
    mapper: CredentialMapper<C>,
    config: RefreshConfig,
    clock: Arc<dyn Clock>,
    current: ArcSwap<Generation<C>>,
    /// Number of a generation an endpoint rejected (0: none).
    invalidated: AtomicU64,
    slow: Mutex<SlowState<C>>,
    /// Mirrors `slow.in_flight.is_some()` for lock-free checks in the prefetch window.
    refresh_pending: AtomicBool,
    /// Mirrors `slow.next_attempt_at_millis` (epoch ms) for lock-free checks.
    next_attempt_at_millis: AtomicI64,
    counters: Counters,
    warned_no_expiry: AtomicBool,
}

struct SlowState<C> {
    in_flight: Option<(u64, SharedRefresh<C>)>,
    attempts: u64,
    next_attempt_at_millis: i64,
    backoff_millis: i64,
}

impl<C: Send + Sync + 'static> CredentialRefresher<C> {
    /// Creates a refresher seeded with `initial_options` (no provider call happens here): if
    /// they carry a credential it serves until its refresh point; if they carry none, the
    /// first [`get_credential`](Self::get_credential) fetches.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] when the initial options have a bad `expires_at_millis` or a
    /// partial credential (for example a key id without a secret).
    pub fn new(
        provider: Arc<dyn StorageOptionsProvider>,
        initial_options: StorageOptions,
        mapper: CredentialMapper<C>,
        config: RefreshConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self> {
        let now = clock.now_millis();
        let seed = Generation::build(1, initial_options, now, &config, &mapper)?;
        let provider_id = provider.provider_id();
        let inner = Inner {
            provider,
            provider_id,
            mapper,
            config,
            clock,
            current: ArcSwap::from_pointee(seed),
            invalidated: AtomicU64::new(0),
            slow: Mutex::new(SlowState {
                in_flight: None,
                attempts: 0,
                next_attempt_at_millis: i64::MIN,
                backoff_millis: 0,
            }),
            refresh_pending: AtomicBool::new(false),
            next_attempt_at_millis: AtomicI64::new(i64::MIN),
            counters: Counters::default(),
            warned_no_expiry: AtomicBool::new(false),
        };
        inner.warn_if_no_expiry(&inner.current.load());
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// Returns a credential that is valid now, and its generation number (pass it to
    /// [`invalidate`](Self::invalidate) if the endpoint rejects it).
    ///
    /// # Errors
    /// - [`Error::CredentialsExpired`] when the credential expired (or was rejected) and the
    ///   refresh failed; it carries the provider's error.
    /// - [`Error::Timeout`] when the provider took longer than `provider_timeout`.
    /// - [`Error::Provider`] when there never was a credential and the fetch failed.
    pub async fn get_credential(&self) -> Result<(Arc<C>, u64)> {
        if let Some(fresh) = self.try_fresh() {
            return Ok(fresh);
        }
        self.slow_path(self.inner.clock.now_millis()).await
    }

    /// The hot path: the current credential and its generation when no request needs to wait,
    /// that is before the refresh point, or in the prefetch window (then it also starts the
    /// background refresh unless one is running or backing off); `None` when
    /// [`get_credential`](Self::get_credential) has work to do. Allocates nothing; takes a lock
    /// only in the one call that starts a refresh. Starting a refresh needs a Tokio runtime.
    pub fn try_fresh(&self) -> Option<(Arc<C>, u64)> {
        let inner = &self.inner;
        let now = inner.clock.now_millis_coarse();
        let g = inner.current.load();
        let c = g.credential.as_ref()?;
        if g.number == inner.invalidated.load(Ordering::Relaxed) {
            return None;
        }
        if now < g.refresh_at_millis {
            return Some((c.clone(), g.number));
        }
        // The coarse clock may lag by a few milliseconds: decide "before the stale point" only
        // with a margin, else let the precise slow path decide.
        if now.saturating_add(COARSE_CLOCK_MARGIN_MILLIS) < g.stale_at_millis {
            if !inner.refresh_pending.load(Ordering::Acquire)
                && now >= inner.next_attempt_at_millis.load(Ordering::Relaxed)
            {
                self.start_refresh(now, true);
            }
            return Some((c.clone(), g.number));
        }
        None
    }

    async fn slow_path(&self, now: i64) -> Result<(Arc<C>, u64)> {
        let inner = &self.inner;
        {
            let g = inner.current.load();
            if self.usable(&g, now) && now < g.stale_at_millis {
                // Prefetch window: refresh in the background, never wait. The atomics let
                // every request but the one that starts the refresh skip the lock.
                if !inner.refresh_pending.load(Ordering::Acquire)
                    && now >= inner.next_attempt_at_millis.load(Ordering::Relaxed)
                {
                    self.start_refresh(now, true);
                }
                return credential_of(&g, &inner.provider_id);
            }
        }
        let g = inner.current.load_full();
        if self.usable(&g, now) {
            // Stale window: wait for the refresh, but never past expiry.
            inner.counters.stale_waits.fetch_add(1, Ordering::Relaxed);
            if let Some(fut) = self.start_refresh(now, true) {
                let until_expiry = g.expires_at_millis.map_or(i64::MAX, |e| e - now);
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
            let now = inner.clock.now_millis();
            let g = inner.current.load_full();
            if self.usable(&g, now) {
                return credential_of(&g, &inner.provider_id);
            }
            return self.wait_for_fresh(now).await;
        }
        self.wait_for_fresh(now).await
    }

    /// Expired, missing or invalidated: wait for a refresh (backoff does not apply).
    async fn wait_for_fresh(&self, now: i64) -> Result<(Arc<C>, u64)> {
        let inner = &self.inner;
        let stale = inner.current.load_full();
        let Some(fut) = self.start_refresh(now, false) else {
            return Err(Error::provider(
                &inner.provider_id,
                "no refresh could be started",
            ));
        };
        // Slightly longer than the refresh's own provider timeout, so a waiter gets that
        // refresh's outcome (its Timeout included) rather than racing it.
        let timeout = inner.config.provider_timeout + WAIT_SLACK;
        match tokio::time::timeout(timeout, fut).await {
            Ok(Ok(fresh)) => {
                let now = inner.clock.now_millis();
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
            Ok(Err(e)) => Err(self.unusable_error(&stale, e)),
            Err(_) => Err(Error::Timeout {
                provider: inner.provider_id.clone(),
                waited_ms: millis(timeout) as u64,
            }),
        }
    }

    fn usable(&self, g: &Generation<C>, now: i64) -> bool {
        g.is_valid_at(now) && g.number != self.inner.invalidated.load(Ordering::Relaxed)
    }

    fn unusable_error(&self, g: &Generation<C>, cause: Error) -> Error {
        match g.expires_at_millis {
            Some(exp) if g.credential.is_some() && self.inner.clock.now_millis() >= exp => {
                Error::CredentialsExpired {
                    provider: self.inner.provider_id.clone(),
                    expired_at_millis: exp,
                    last_error: Box::new(cause),
                }
            }
            _ => cause,
        }
    }

    /// Starts a refresh unless one is in flight (then joins it) or, with `respect_backoff`, a
    /// failed one asked to wait. Returns the shared outcome, or `None` when backing off.
    fn start_refresh(&self, now: i64, respect_backoff: bool) -> Option<SharedRefresh<C>> {
        let mut slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, fut)) = &slow.in_flight {
            return Some(fut.clone());
        }
        if respect_backoff && now < slow.next_attempt_at_millis {
            return None;
        }
        slow.attempts += 1;
        let attempt = slow.attempts;
        let inner = self.inner.clone();
        let provider_id = self.inner.provider_id.clone();
        let fut: BoxFuture<'static, Result<Arc<Generation<C>>>> =
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    // The refresh runs in its own task so that a cancelled caller never wedges the
                    // others (C05).
                    let task = handle.spawn(async move { inner.run_refresh(attempt).await });
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
                Err(_) => async move { inner.run_refresh(attempt).await }.boxed(),
            };
        let shared = fut.shared();
        slow.in_flight = Some((attempt, shared.clone()));
        self.inner.refresh_pending.store(true, Ordering::Release);
        Some(shared)
    }

    /// Marks generation `number` as rejected by the endpoint; the next request fetches a new
    /// one. A no-op when a newer generation is already current.
    pub fn invalidate(&self, number: u64) {
        let current = self.inner.current.load().number;
        if current == number {
            self.inner.invalidated.fetch_max(number, Ordering::SeqCst);
            log::debug!(
                "credential generation {number} of provider '{}' was rejected by the endpoint; refetching",
                self.inner.provider_id
            );
        }
    }

    /// Offers storage options obtained elsewhere (a store re-opened with fresh initial options).
    /// They become the current generation only when they carry a valid credential that
    /// expires later than the current one.
    pub fn offer(&self, options: StorageOptions) {
        let inner = &self.inner;
        if !has_credentials(&options) {
            return;
        }
        let _slow = inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        let cur = inner.current.load_full();
        let now = inner.clock.now_millis();
        let merged = merge(&cur.options, &options);
        let Ok(g) = Generation::build(cur.number + 1, merged, now, &inner.config, &inner.mapper)
        else {
            return;
        };
        let later = match (g.expires_at_millis, cur.expires_at_millis) {
            (Some(new), Some(old)) => new > old,
            (_, _) => !self.usable(&cur, now),
        };
        if g.is_valid_at(now) && (later || !self.usable(&cur, now)) {
            inner.current.store(Arc::new(g));
        }
    }

    /// Waits for the refresh in flight, if any, and returns its outcome (`None` when no refresh
    /// is running). Useful to warm a store or to synchronise in tests.
    pub async fn wait_idle(&self) -> Option<Result<()>> {
        let fut = {
            let slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
            slow.in_flight.as_ref().map(|(_, f)| f.clone())
        }?;
        Some(fut.await.map(|_| ()))
    }

    /// The current generation number.
    pub fn generation(&self) -> u64 {
        self.inner.current.load().number
    }

    /// The current merged storage options (secrets included: never print them unredacted).
    pub fn current_options(&self) -> Arc<StorageOptions> {
        self.inner.current.load().options.clone()
    }

    /// The provider's id.
    pub fn provider_id(&self) -> &str {
        &self.inner.provider_id
    }

    /// Counters and timestamps of this refresher.
    pub fn stats(&self) -> RefreshStats {
        let g = self.inner.current.load();
        self.inner.counters.snapshot(g.number, g.expires_at_millis)
    }
}

/// A [`CredentialRefresher`] seen without its credential type: what stores, registries and
/// bindings need of it, whatever the cloud.
pub trait RefresherHandle: Send + Sync + std::fmt::Debug {
    /// See [`CredentialRefresher::generation`].
    fn generation(&self) -> u64;
    /// See [`CredentialRefresher::invalidate`].
    fn invalidate(&self, generation: u64);
    /// See [`CredentialRefresher::offer`].
    fn offer(&self, options: StorageOptions);
    /// See [`CredentialRefresher::stats`].
    fn stats(&self) -> RefreshStats;
    /// See [`CredentialRefresher::provider_id`].
    fn provider_id(&self) -> &str;
    /// See [`CredentialRefresher::current_options`].
    fn current_options(&self) -> Arc<StorageOptions>;
    /// See [`CredentialRefresher::wait_idle`].
    fn wait_idle(&self) -> BoxFuture<'_, Option<Result<()>>>;
}

impl<C: Send + Sync + 'static> RefresherHandle for CredentialRefresher<C> {
    fn generation(&self) -> u64 {
        CredentialRefresher::generation(self)
    }
    fn invalidate(&self, generation: u64) {
        CredentialRefresher::invalidate(self, generation)
    }
    fn offer(&self, options: StorageOptions) {
        CredentialRefresher::offer(self, options)
    }
    fn stats(&self) -> RefreshStats {
        CredentialRefresher::stats(self)
    }
    fn provider_id(&self) -> &str {
        CredentialRefresher::provider_id(self)
    }
    fn current_options(&self) -> Arc<StorageOptions> {
        CredentialRefresher::current_options(self)
    }
    fn wait_idle(&self) -> BoxFuture<'_, Option<Result<()>>> {
        CredentialRefresher::wait_idle(self).boxed()
    }
}

/// The credential of a generation that passed `usable` (which implies one).
fn credential_of<C>(g: &Generation<C>, provider_id: &str) -> Result<(Arc<C>, u64)> {
    match &g.credential {
        Some(c) => Ok((c.clone(), g.number)),
        None => Err(Error::provider(provider_id, "no credential available")),
    }
}

impl<C: Send + Sync + 'static> Inner<C> {
    async fn run_refresh(self: Arc<Self>, attempt: u64) -> Result<Arc<Generation<C>>> {
        // If this refresh never finishes (its task is cancelled, for example because the runtime
        // that ran it shut down), the guard still clears `in_flight`: otherwise every later
        // caller would join the dead refresh and the store would be wedged for good.
        let mut guard = InFlightGuard {
            inner: &self,
            attempt,
            armed: true,
        };
        let started = self.clock.now_millis();
        self.counters.fetches.fetch_add(1, Ordering::Relaxed);
        // A provider that panics is a failed refresh like any other (reported, backed off,
        // retried), never a refresh stuck "in flight" forever.
        let answer = tokio::time::timeout(
            self.config.provider_timeout,
            std::panic::AssertUnwindSafe(self.provider.fetch_storage_options()).catch_unwind(),
        )
        .await;
        let now = self.clock.now_millis();
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
                slow.backoff_millis = 0;
                slow.next_attempt_at_millis = i64::MIN;
                self.next_attempt_at_millis
                    .store(i64::MIN, Ordering::Relaxed);
                self.counters.record_success(now);
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
                let initial = millis(self.config.initial_backoff).max(1);
                let max = millis(self.config.max_backoff).max(initial);
                // A failure the catalog calls permanent (table gone, access revoked) is retried
                // at the slowest pace at once; transient ones back off from `initial_backoff`.
                let permanent = !e.is_retryable();
                let delay = match (permanent, slow.backoff_millis) {
                    (true, _) => max,
                    (false, 0) => initial,
                    (false, b) => b,
                };
                slow.backoff_millis = delay.saturating_mul(2).min(max);
                let cur = self.current.load();
                let mut next = now.saturating_add(delay);
                if let Some(exp) = cur.expires_at_millis {
                    next = next.min(exp);
                }
                slow.next_attempt_at_millis = next;
                self.next_attempt_at_millis.store(next, Ordering::Relaxed);
                log::warn!(
                    "credential refresh failed (retry in {} ms): {e}",
                    next - now
                );
            }
        }
        outcome
    }

    fn as_provider_error(&self, e: Error) -> Error {
        match e {
            Error::Provider { .. } | Error::Timeout { .. } => e,
            other => Error::Provider {
                provider: self.provider_id.clone(),
                message: other.to_string(),
                retryable: other.is_retryable() || other.kind() != crate::error::ErrorKind::InvalidOptions,
                source: Some(Arc::new(other)),
            },
        }
    }

    /// Validates a provider's answer and builds the next generation from it.
    fn accept(&self, fresh: Option<StorageOptions>, now: i64) -> Result<Arc<Generation<C>>> {
        let fail = |msg: String| Error::provider(&self.provider_id, msg);
        let Some(fresh) = fresh else {
            return Err(fail("returned no storage options (null)".into()));
        };
        if !has_credentials(&fresh) {
            return Err(fail(format!(
                "returned no credentials ({} options, none of them a credential)",
                fresh.len()
            )));
        }
        let cur = self.current.load();
        let merged = merge(&cur.options, &fresh);
        let g = Generation::build(cur.number + 1, merged, now, &self.config, &self.mapper)
            .map_err(|e| fail(format!("returned unusable storage options: {e}")))?;
        if g.credential.is_none() {
            return Err(fail("returned an expiry but no credential".into()));
        }
        match g.expires_at_millis {
            Some(exp) if exp <= now => {
                return Err(fail(format!(
                    "returned expired credentials: expires_at_millis={exp} is {} ms in the past",
                    now - exp
                )))
            }
            Some(exp) if exp - now <= millis(self.config.min_remaining) => {
                return Err(fail(format!(
                    "returned credentials that expire in {} ms (expires_at_millis={exp}), too soon to use",
                    exp - now
                )))
            }
            _ => {}
        }
        self.warn_if_no_expiry(&g);
        Ok(Arc::new(g))
    }

    fn warn_if_no_expiry(&self, g: &Generation<C>) {
        if g.credential.is_some()
            && g.expires_at_millis.is_none()
            && !self.warned_no_expiry.swap(true, Ordering::Relaxed)
        {
            log::warn!(
                "provider '{}' vended credentials without expires_at_millis: they are used until the endpoint rejects them, then refetched once",
                self.provider_id
            );
        }
    }
}

impl<C> Inner<C> {
    fn clear_in_flight(&self, slow: &mut SlowState<C>, attempt: u64) {
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

#[cfg(test)]
mod tests;
