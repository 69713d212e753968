//! The credential refresher: keeps a valid credential from a [`StorageOptionsProvider`] and
//! renews it before it expires.
//!
//! - **Hot path**: while the current credential is before its refresh point,
//!   [`CredentialRefresher::get_credential`] is an `ArcSwap` load, a clock read, two atomic
//!   loads and an `Arc` clone: no lock, no allocation.
//! - **Prefetch** (from the refresh point, see [`RefreshConfig`]): exactly one refresh runs in a
//!   spawned task; every request keeps signing with the still-valid credential.
//! - **Stale window** (shortly before expiry): requests wait for that refresh, at most
//!   `provider_timeout` and never past expiry.
//! - **Expired, missing or invalidated** (after the endpoint rejected it): requests wait for a
//!   refresh (one provider call shared by all concurrent waiters); if it fails they get an
//!   error carrying the provider's message and source.
//! - **Backoff**: a failed refresh is never cached as a result. The still-valid credential
//!   keeps serving, and retries back off exponentially from `initial_backoff` to `max_backoff`
//!   (while a credential is valid, never past its expiry, so one attempt happens at expiry).
//!   The same schedule holds once no valid credential is left: during backoff a request that
//!   needs a new credential fails at once with the last error (no provider call, no waiting);
//!   the first request after the backoff tries again. So a provider that keeps failing sees a
//!   handful of calls, never one per request (case C17).
//! - **Rejections**: [`CredentialRefresher::invalidate`] (the endpoint rejected a generation)
//!   makes the next request refetch at once. When a generation vended by such a refetch is
//!   rejected too (the endpoint rejects what the provider vends), that counts as a failed
//!   refresh for the backoff, with an error saying the endpoint rejected freshly vended
//!   credentials (case C18).
//! - **Clock skew**: [`CredentialRefresher::observe_server_time`] records the offset between
//!   the endpoint's clock and ours; all expiry decisions use the local clock plus that offset.

mod clock;
mod config;
mod generation;
mod stats;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{setting, RefreshConfig, MAX_SETTING};
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

/// A generation vended in answer to a rejection and rejected within this long of being vended
/// (ms) counts as "the endpoint rejects freshly vended credentials": a failed refresh for the
/// backoff. One rejected later served in between, so it starts a new, immediate refetch.
const FRESH_REJECTION_WINDOW_MILLIS: i64 = 60_000;

/// Clock offsets (ms) up to this size are treated as no offset: a `Date` header has second
/// precision and the response took time to arrive.
pub const CLOCK_SKEW_THRESHOLD_MILLIS: i64 = 2_000;

/// Clock offset samples (ms) larger than this (one hour) are ignored as absurd (a wrong time
/// zone, a broken proxy), never applied.
pub const MAX_CLOCK_OFFSET_MILLIS: i64 = 3_600_000;

/// `offset_estimate` before the first sample.
const NO_ESTIMATE: i64 = i64::MIN;

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
            .field(
                "clock_offset_millis",
                &self.inner.clock_offset.load(Ordering::Relaxed),
            )
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
    /// Offset applied to the clock for every expiry decision (endpoint minus local, ms).
    clock_offset: AtomicI64,
    /// Smoothed offset samples (ms); `NO_ESTIMATE` before the first.
    offset_estimate: AtomicI64,
    warned_absurd_offset: AtomicBool,
}

struct SlowState<C> {
    in_flight: Option<(u64, SharedRefresh<C>)>,
    attempts: u64,
    /// No provider call before this time (epoch ms, on the offset clock).
    next_attempt_at_millis: i64,
    /// The delay after the next failure (0: `initial_backoff`).
    backoff_millis: i64,
    /// The last failure, returned to requests that fail fast during backoff.
    last_error: Option<Error>,
    /// A generation vended by a refetch that a rejection triggered and not yet confirmed by
    /// the endpoint (0: none). Its rejection soon after is a failure for the backoff.
    unproven_generation: u64,
}

/// What [`CredentialRefresher::start_refresh`] did.
enum Start<C> {
    /// A refresh runs (started now or joined).
    Running(SharedRefresh<C>),
    /// Backing off after a failure: no provider call until the backoff elapses.
    BackingOff,
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
                last_error: None,
                unproven_generation: 0,
            }),
            refresh_pending: AtomicBool::new(false),
            next_attempt_at_millis: AtomicI64::new(i64::MIN),
            counters: Counters::default(),
            warned_no_expiry: AtomicBool::new(false),
            clock_offset: AtomicI64::new(0),
            offset_estimate: AtomicI64::new(NO_ESTIMATE),
            warned_absurd_offset: AtomicBool::new(false),
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
    /// - [`Error::CredentialsExpired`] when the credential expired and the refresh failed, or
    ///   failed last and is backing off; `last_error` is the provider's error (its message and
    ///   source, see [`Error::provider_source`]).
    /// - [`Error::Timeout`] when the provider took longer than `provider_timeout`.
    /// - [`Error::Provider`] when there never was a credential, or the endpoint rejected the
    ///   current one, and the fetch failed (or failed last and is backing off); after repeated
    ///   rejections, one saying the endpoint rejected freshly vended credentials.
    pub async fn get_credential(&self) -> Result<(Arc<C>, u64)> {
        if let Some(fresh) = self.try_fresh() {
            return Ok(fresh);
        }
        // Boxed so that this future stays a few words: callers that await it directly move
        // and initialise it on every call, hot path included; the slow path's state (timeouts,
        // shared refreshes) is allocated only when the slow path runs.
        Box::pin(self.slow_path(self.inner.now())).await
    }

    /// The hot path: the current credential and its generation when no request needs to wait,
    /// that is before the refresh point, or in the prefetch window (then it also starts the
    /// background refresh unless one is running or backing off); `None` when
    /// [`get_credential`](Self::get_credential) has work to do. Allocates nothing; takes a lock
    /// only in the one call that starts a refresh. Starting a refresh needs a Tokio runtime.
    pub fn try_fresh(&self) -> Option<(Arc<C>, u64)> {
        let inner = &self.inner;
        let now = inner
            .clock
            .now_millis_coarse()
            .saturating_add(inner.clock_offset.load(Ordering::Relaxed));
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
                self.start_refresh(now);
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
                    self.start_refresh(now);
                }
                return credential_of(&g, &inner.provider_id);
            }
        }
        let g = inner.current.load_full();
        if self.usable(&g, now) {
            // Stale window: wait for the refresh, but never past expiry.
            inner.counters.stale_waits.fetch_add(1, Ordering::Relaxed);
            if let Start::Running(fut) = self.start_refresh(now) {
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
            let now = inner.now();
            let g = inner.current.load_full();
            if self.usable(&g, now) {
                return credential_of(&g, &inner.provider_id);
            }
            return self.wait_for_fresh(now).await;
        }
        self.wait_for_fresh(now).await
    }

    /// Expired, missing or invalidated: wait for a refresh, or fail at once during backoff.
    async fn wait_for_fresh(&self, now: i64) -> Result<(Arc<C>, u64)> {
        let inner = &self.inner;
        let stale = inner.current.load_full();
        let fut = match self.start_refresh(now) {
            Start::Running(fut) => fut,
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
            Some(exp) if g.credential.is_some() && self.inner.now() >= exp => {
                Error::CredentialsExpired {
                    provider: self.inner.provider_id.clone(),
                    expired_at_millis: exp,
                    last_error: Box::new(cause),
                }
            }
            _ => cause,
        }
    }

    /// Starts a refresh unless one is in flight (then joins it) or a failed one asked to wait
    /// until a later time than `now` (epoch ms, on the offset clock).
    fn start_refresh(&self, now: i64) -> Start<C> {
        let mut slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, fut)) = &slow.in_flight {
            return Start::Running(fut.clone());
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
        let fut: BoxFuture<'static, Result<Arc<Generation<C>>>> =
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    // The refresh runs in its own task so that a cancelled caller never wedges the
                    // others (C05).
                    let task = handle
                        .spawn(async move { inner.run_refresh(attempt, after_rejection).await });
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
                Err(_) => async move { inner.run_refresh(attempt, after_rejection).await }.boxed(),
            };
        let shared = fut.shared();
        slow.in_flight = Some((attempt, shared.clone()));
        self.inner.refresh_pending.store(true, Ordering::Release);
        Start::Running(shared)
    }

    /// Marks generation `number` as rejected by the endpoint (the store layer calls this after
    /// an authentication failure); the next request fetches a new one. A no-op when a newer
    /// generation is already current or `number` was already invalidated.
    ///
    /// Refetches after rejections share the failure backoff: when `number` was itself vended
    /// by a refetch after a rejection, was not confirmed with
    /// [`report_auth_retry`](Self::report_auth_retry)`(number, true)`, and is rejected within
    /// a minute of being vended, the endpoint rejects what the provider vends. That counts as
    /// a failed refresh: requests fail fast with an [`Error::Provider`] saying the endpoint
    /// rejected freshly vended credentials until the backoff elapses, then one refetch runs.
    pub fn invalidate(&self, number: u64) {
        let inner = &self.inner;
        let mut slow = inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        let cur = inner.current.load();
        if cur.number != number || inner.invalidated.load(Ordering::SeqCst) >= number {
            return;
        }
        inner.invalidated.fetch_max(number, Ordering::SeqCst);
        inner
            .counters
            .endpoint_rejections
            .fetch_add(1, Ordering::Relaxed);
        let now = inner.now();
        let age = now.saturating_sub(cur.fetched_at_millis);
        if slow.unproven_generation == number {
            slow.unproven_generation = 0;
            if age <= FRESH_REJECTION_WINDOW_MILLIS {
                let delay = inner.next_delay(&mut slow, true);
                let e = Error::provider(
                    &inner.provider_id,
                    format!(
                        "the endpoint rejected freshly vended credentials: generation {number}, \
                         vended after the previous one was rejected, was rejected {age} ms later; \
                         refetching again in {delay} ms"
                    ),
                );
                inner.back_off(&mut slow, now, delay, e);
                return;
            }
            // It served for a while: this is a new rejection, not a streak.
            slow.backoff_millis = 0;
        }
        log::debug!(
            "credential generation {number} of provider '{}' was rejected by the endpoint; refetching",
            inner.provider_id
        );
    }

    /// For the store layer, after it retried a rejected request once with a fresh credential:
    /// `generation` is the generation the retry was signed with (read right after the retry,
    /// like the one passed to [`invalidate`](Self::invalidate)), `accepted` whether the
    /// endpoint accepted the retry.
    ///
    /// - `accepted == false` is [`invalidate`](Self::invalidate)`(generation)`: when the
    ///   endpoint also rejects the credential the refetch vended, the next refetch waits for
    ///   the backoff (the caller's request should fail; the next requests fail fast with an
    ///   error saying the endpoint rejected freshly vended credentials).
    /// - `accepted == true` confirms `generation`: the rejection streak ends and the next
    ///   rejection refetches at once again.
    pub fn report_auth_retry(&self, generation: u64, accepted: bool) {
        if !accepted {
            self.invalidate(generation);
            return;
        }
        let mut slow = self.inner.slow.lock().unwrap_or_else(|p| p.into_inner());
        if slow.unproven_generation == generation {
            slow.unproven_generation = 0;
            slow.backoff_millis = 0;
        }
    }

    /// Records the endpoint's clock: `server_millis` is the time an endpoint response carried
    /// (epoch ms; from an HTTP `Date` header, RFC 9110 section 6.6.1, which has second
    /// precision), `local_millis` the local time (epoch ms, same clock as this refresher's,
    /// the system clock in production) when that response arrived. Call it for every response
    /// that carries a `Date`; it takes no lock and allocates nothing.
    ///
    /// The offset (endpoint minus local, counting the truncated `Date` as its second's
    /// midpoint) is smoothed over samples (each moves the estimate a quarter of the way). It
    /// is applied only when it exceeds [`CLOCK_SKEW_THRESHOLD_MILLIS`] (2 s); a sample beyond
    /// [`MAX_CLOCK_OFFSET_MILLIS`] (1 h) is ignored with a warning. Once applied, every expiry
    /// decision (refresh point, stale window, expiry, "already expired" answers) uses local
    /// time plus the offset, so a slow local clock refreshes before the endpoint's expiry and
    /// a fast one does not throw away credentials that are still valid.
    pub fn observe_server_time(&self, server_millis: i64, local_millis: i64) {
        let inner = &self.inner;
        let sample = server_millis
            .saturating_add(500)
            .saturating_sub(local_millis);
        if sample.saturating_abs() > MAX_CLOCK_OFFSET_MILLIS {
            if !inner.warned_absurd_offset.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "ignoring an endpoint clock {sample} ms away from the local clock (provider '{}'): more than {MAX_CLOCK_OFFSET_MILLIS} ms",
                    inner.provider_id
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
            match inner
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
        let previous = inner.clock_offset.swap(applied, Ordering::Relaxed);
        if (previous == 0) != (applied == 0) {
            log::info!(
                "provider '{}': endpoint clock offset {applied} ms now applied to credential expiry",
                inner.provider_id
            );
        }
    }

    /// The clock offset applied to expiry decisions, ms (see
    /// [`observe_server_time`](Self::observe_server_time)).
    pub fn clock_offset_millis(&self) -> i64 {
        self.inner.clock_offset.load(Ordering::Relaxed)
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
        let now = inner.now();
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
        self.inner.counters.snapshot(
            g.number,
            g.expires_at_millis,
            self.inner.clock_offset.load(Ordering::Relaxed),
        )
    }
}

/// A [`CredentialRefresher`] seen without its credential type: what stores, registries and
/// bindings need of it, whatever the cloud.
pub trait RefresherHandle: Send + Sync + std::fmt::Debug {
    /// See [`CredentialRefresher::generation`].
    fn generation(&self) -> u64;
    /// See [`CredentialRefresher::invalidate`].
    fn invalidate(&self, generation: u64);
    /// See [`CredentialRefresher::report_auth_retry`].
    fn report_auth_retry(&self, generation: u64, accepted: bool);
    /// See [`CredentialRefresher::observe_server_time`] (epoch ms both).
    fn observe_server_time(&self, server_millis: i64, local_millis: i64);
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
    fn report_auth_retry(&self, generation: u64, accepted: bool) {
        CredentialRefresher::report_auth_retry(self, generation, accepted)
    }
    fn observe_server_time(&self, server_millis: i64, local_millis: i64) {
        CredentialRefresher::observe_server_time(self, server_millis, local_millis)
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
    async fn run_refresh(
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
                    slow.backoff_millis = 0;
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
                // at the slowest pace at once; transient ones back off from `initial_backoff`.
                let delay = self.next_delay(&mut slow, e.is_retryable());
                self.back_off(&mut slow, now, delay, e.clone());
            }
        }
        outcome
    }

    /// The delay (ms) after one more failure, and the one after it doubled for next time.
    fn next_delay(&self, slow: &mut SlowState<C>, retryable: bool) -> i64 {
        let initial = millis(self.config.initial_backoff).max(1);
        let max = millis(self.config.max_backoff).max(initial);
        let delay = match (retryable, slow.backoff_millis) {
            (false, _) => max,
            (true, 0) => initial,
            (true, b) => b.min(max),
        };
        slow.backoff_millis = delay.saturating_mul(2).min(max);
        delay
    }

    /// Schedules the next provider call `delay` ms after `now` (never past the expiry of a
    /// credential that is still usable, so one attempt happens at expiry), and keeps `e` for
    /// the requests that fail fast until then.
    fn back_off(&self, slow: &mut SlowState<C>, now: i64, delay: i64, e: Error) {
        let cur = self.current.load();
        let mut next = now.saturating_add(delay);
        let usable = cur.is_valid_at(now) && cur.number != self.invalidated.load(Ordering::SeqCst);
        if let (true, Some(exp)) = (usable, cur.expires_at_millis) {
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
    /// Now, epoch ms, on the endpoint's clock as far as it is known (local clock plus the
    /// observed offset).
    fn now(&self) -> i64 {
        self.clock
            .now_millis()
            .saturating_add(self.clock_offset.load(Ordering::Relaxed))
    }

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
