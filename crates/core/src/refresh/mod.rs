//! The credential refresher: keeps a valid credential from a [`StorageOptionsProvider`] and
//! renews it before it expires.
//!
//! - **Hot path**: while the current credential is before its refresh point,
//!   [`CredentialRefresher::get_credential`] is an `ArcSwap` load, a clock read, two atomic
//!   loads and an `Arc` clone: no lock, no allocation.
//! - **Prefetch** (from the refresh point, see [`RefreshConfig`]): exactly one refresh runs in a
//!   spawned task; every request keeps signing with the still-valid credential. The refresh
//!   point is jittered per credential, up to `jitter` (default half) of the lead earlier, so a
//!   fleet of stores opened at once with one expiry spreads its catalog calls over the window.
//! - **Stale window** (shortly before expiry): requests wait for that refresh, at most
//!   `provider_timeout` and never past expiry.
//! - **Signing margin** (the last [`SIGNING_MARGIN_MILLIS`], 1 s, before expiry, or a tenth of
//!   the lifetime of a shorter-lived credential; see [`signing_margin_millis`]): no request is
//!   signed with a credential inside it, so none reaches the endpoint after the expiry
//!   (transit, a loaded machine, one-second clocks; case C31). Requests there wait for the
//!   refresh already under way (lead time and stale window are never shorter than it); if that
//!   refresh fails, the credential still serves until its expiry (case C22).
//! - **Expired, missing or invalidated** (after the endpoint rejected it): requests wait for a
//!   refresh (one provider call shared by all concurrent waiters); if it fails they get an
//!   error carrying the provider's message and source.
//! - **Backoff**: a failed refresh is never cached as a result. While the credential is valid
//!   it keeps serving, and retries back off exponentially from `initial_backoff` to
//!   `max_backoff` (never past its expiry, so one attempt happens at expiry). Once no valid
//!   credential is left (expired, missing or rejected) the store is down until a call
//!   succeeds, so retries stay at the fixed `initial_backoff` (default 1 s): about one provider
//!   call a second per refresher, never growing, and service returns within about that long of
//!   the provider's return (case C22). Meanwhile a request that needs a new credential fails at
//!   once with the last error (no provider call, no waiting); the first request after the
//!   delay tries again. So a provider that keeps failing sees about one call a second, never
//!   one per request (case C17). A failure the provider calls permanent waits `max_backoff`.
//! - **Rejections**: [`CredentialRefresher::invalidate`] (the endpoint rejected a generation)
//!   makes the next request refetch at once. When a generation vended by such a refetch is
//!   rejected too (the endpoint rejects what the provider vends), that counts as a failed
//!   refresh for the backoff, with an error saying the endpoint rejected freshly vended
//!   credentials (case C18).
//! - **Clock skew**: [`CredentialRefresher::observe_server_time`] takes each `Date` sample as
//!   bounds on the offset between the endpoint's clock and ours (from the request's send time
//!   and the answer's read time), and applies an offset only when agreeing samples prove it
//!   beyond a couple of seconds; all expiry decisions use the local clock plus that offset. A
//!   late read or a one-second `Date` never gives an offset (case C23).

mod accept;
mod backoff;
mod clock;
mod config;
mod generation;
mod skew;
mod slow;
mod stats;
mod task;

pub(crate) use accept::too_soon_to_use;
pub use backoff::{Backoff, Serving};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{setting, RefreshConfig, MAX_SETTING};
pub use generation::{signing_margin_millis, CredentialMapper, Generation, SIGNING_MARGIN_MILLIS};
pub use skew::{CLOCK_SKEW_THRESHOLD_MILLIS, MAX_CLOCK_OFFSET_MILLIS, MIN_SAMPLES};
pub use stats::RefreshStats;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use futures::future::{BoxFuture, FutureExt, Shared};

use crate::error::{Error, Result};
use crate::options::{has_credentials, merge, StorageOptions};
use crate::provider::StorageOptionsProvider;
use skew::SkewEvidence;
use stats::Counters;

/// How far behind [`Clock::now_millis_coarse`] may be, as far as the hot path is concerned.
const COARSE_CLOCK_MARGIN_MILLIS: i64 = 20;

/// A generation vended in answer to a rejection and rejected within this long of being vended
/// (ms) counts as "the endpoint rejects freshly vended credentials": a failed refresh for the
/// backoff. One rejected later served in between, so it starts a new, immediate refetch.
const FRESH_REJECTION_WINDOW_MILLIS: i64 = 60_000;

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
    /// The evidence the offset is learned from (see `skew.rs`).
    skew: Mutex<SkewEvidence>,
    warned_absurd_offset: AtomicBool,
}

struct SlowState<C> {
    in_flight: Option<(u64, SharedRefresh<C>)>,
    attempts: u64,
    /// No provider call before this time (epoch ms, on the offset clock).
    next_attempt_at_millis: i64,
    /// The schedule of the next failure's delay.
    backoff: Backoff,
    /// The last failure, returned to requests that fail fast during backoff.
    last_error: Option<Error>,
    /// A generation vended by a refetch that a rejection triggered and not yet confirmed by
    /// the endpoint (0: none). Its rejection soon after is a failure for the backoff.
    unproven_generation: u64,
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
                backoff: Backoff::default(),
                last_error: None,
                unproven_generation: 0,
            }),
            refresh_pending: AtomicBool::new(false),
            next_attempt_at_millis: AtomicI64::new(i64::MIN),
            counters: Counters::default(),
            warned_no_expiry: AtomicBool::new(false),
            clock_offset: AtomicI64::new(0),
            skew: Mutex::new(SkewEvidence::default()),
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
                self.start_refresh(now, g.number);
            }
            return Some((c.clone(), g.number));
        }
        None
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
        // On the local clock, like `fetched_at_millis`: a clock offset learned in between
        // never makes the age negative or shorter than it was.
        let age = inner
            .clock
            .now_millis()
            .saturating_sub(cur.fetched_at_millis)
            .max(0);
        if slow.unproven_generation == number {
            slow.unproven_generation = 0;
            if age <= FRESH_REJECTION_WINDOW_MILLIS {
                let delay = inner.next_delay(&mut slow, now, true);
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
            slow.backoff.reset();
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
            slow.backoff.reset();
        }
    }

    /// Whether a request signed with generation `number` that the endpoint rejected may simply
    /// have expired in flight (queued, resent by the HTTP client after a 503 or a reset, or
    /// delayed past the stale window by a paused process), which is no evidence against the
    /// provider's credentials: `number` is the current generation and its expiry has passed
    /// (on the offset clock), or a newer generation has replaced it since. Either way the next
    /// request gets a fresh credential without an invalidation, so the store layer retries
    /// instead of reporting freshly vended credentials as rejected.
    pub fn expired_in_flight(&self, number: u64) -> bool {
        let g = self.inner.current.load();
        number < g.number || (number == g.number && self.inner.now() >= g.sign_until_millis)
    }

    /// Records one sample of the endpoint's clock: `server_millis` is the time an endpoint
    /// answer carried (epoch ms; from an HTTP `Date` header, RFC 9110 section 6.6.1, truncated
    /// to the second), `sent_millis` the local time (epoch ms, the same clock as this
    /// refresher's: the system clock in production) just before the request was sent, and
    /// `received_millis` the local time its answer was read. Call it for every answer that
    /// carries a `Date`; it allocates nothing and never blocks (a sample arriving while another
    /// is recorded is dropped).
    ///
    /// A sample bounds the offset (endpoint minus local) to `[server - received, server +
    /// 1000 - sent]` (plus 100 ms slack per side): a late read, a GC pause or a starved
    /// scheduler only widens it. Agreeing samples are intersected; the offset is applied only
    /// when at least [`MIN_SAMPLES`] agree and their common interval lies entirely beyond
    /// ±[`CLOCK_SKEW_THRESHOLD_MILLIS`] (2 s), and then it is that interval's upper bound (the
    /// latest the endpoint's clock can read, so no credential looks valid longer than the
    /// endpoint allows; the error is towards refreshing early, at most the interval's width).
    /// Samples that disagree with the interval replace it once [`MIN_SAMPLES`] of them agree
    /// (the endpoint's clock was corrected). A sample whose bounds lie beyond
    /// [`MAX_CLOCK_OFFSET_MILLIS`] (1 h) is ignored with a warning. Once applied, every expiry
    /// decision (refresh point, stale window, expiry, "already expired" answers) uses local
    /// time plus the offset, so a slow local clock refreshes before the endpoint's expiry and
    /// a fast one does not throw away credentials that are still valid (case C23: delayed or
    /// coarse samples never give an offset; one of minutes is learned).
    pub fn observe_server_time(&self, server_millis: i64, sent_millis: i64, received_millis: i64) {
        self.inner
            .observe_server_time(server_millis, sent_millis, received_millis)
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
        let Ok(mut g) =
            Generation::build(cur.number + 1, merged, now, &inner.config, &inner.mapper)
        else {
            return;
        };
        g.fetched_at_millis = inner.clock.now_millis();
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
    /// See [`CredentialRefresher::expired_in_flight`].
    fn expired_in_flight(&self, generation: u64) -> bool;
    /// See [`CredentialRefresher::observe_server_time`] (epoch ms, all three).
    fn observe_server_time(&self, server_millis: i64, sent_millis: i64, received_millis: i64);
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
    fn expired_in_flight(&self, generation: u64) -> bool {
        CredentialRefresher::expired_in_flight(self, generation)
    }
    fn observe_server_time(&self, server_millis: i64, sent_millis: i64, received_millis: i64) {
        CredentialRefresher::observe_server_time(self, server_millis, sent_millis, received_millis)
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

impl<C> Inner<C> {
    /// Now, epoch ms, on the endpoint's clock as far as it is known (local clock plus the
    /// observed offset).
    fn now(&self) -> i64 {
        self.clock
            .now_millis()
            .saturating_add(self.clock_offset.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests;
