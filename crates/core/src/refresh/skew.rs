//! Clock skew from evidence: the offset between the endpoint's clock (its `Date` headers) and
//! ours, learned only when the samples prove it (see
//! [`CredentialRefresher::observe_server_time`](super::CredentialRefresher::observe_server_time)).
//!
//! One sample does not give the offset, it bounds it. The endpoint stamped `Date` (truncated to
//! the second: its clock read somewhere in `[date, date + 1000)`) after the request was sent
//! (`sent`, local) and before its answer was read (`received`, local), so
//! `date - received <= offset < date + 1000 - sent`. A late read (a starved or GC-paused
//! process, a queue) only widens that interval: it never moves it off the true offset. The
//! samples that agree are intersected, so the interval narrows to about the fastest round
//! trip; a sample that disagrees with it (the offset really changed, or a bogus `Date` such as
//! a cached answer's) starts a competing interval, which replaces the current one once it has
//! [`MIN_SAMPLES`] agreeing samples of its own. The offset is applied only when at least
//! [`MIN_SAMPLES`] samples agree and their interval lies entirely beyond
//! ±[`CLOCK_SKEW_THRESHOLD_MILLIS`]; then its upper bound is applied: the latest the
//! endpoint's clock can read. So an estimate never makes a credential look valid longer than
//! the endpoint allows (no request is signed late); it errs towards refreshing early, by at
//! most the interval's width (the request's transit time plus at most a second once samples
//! at several phases of the second agree). Anything else applies no offset.

use std::sync::atomic::Ordering;
use std::sync::TryLockError;

use super::Inner;

/// An offset (ms) is applied only when the evidence puts it beyond this, in either direction:
/// closer offsets are left to the stale window and to the retry after a rejection.
pub const CLOCK_SKEW_THRESHOLD_MILLIS: i64 = 2_000;

/// Clock offset samples (ms) whose bounds lie beyond this (one hour) are ignored as absurd (a
/// wrong time zone, a broken proxy), never applied.
pub const MAX_CLOCK_OFFSET_MILLIS: i64 = 3_600_000;

/// How many agreeing samples an offset needs before it is applied, or before samples that
/// disagree with the current interval replace it.
pub const MIN_SAMPLES: u32 = 3;

/// Added to each side of a sample's interval (ms), for clock reads taken a little before or
/// after the instants they stand for.
const SAMPLE_SLACK_MILLIS: i64 = 100;

/// The offset evidence: the intersection of the agreeing samples, and a competing one.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct SkewEvidence {
    current: Interval,
    candidate: Interval,
}

/// Bounds of the offset (endpoint minus local, ms), `lo <= offset <= hi`, from `samples`
/// agreeing samples (0: no evidence).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Interval {
    lo: i64,
    hi: i64,
    samples: u32,
}

impl Interval {
    fn one(lo: i64, hi: i64) -> Self {
        Self { lo, hi, samples: 1 }
    }

    /// Narrows by a sample that agrees (overlaps); `false` when it does not.
    fn narrow(&mut self, lo: i64, hi: i64) -> bool {
        if self.samples == 0 {
            *self = Self::one(lo, hi);
            return true;
        }
        if lo > self.hi || hi < self.lo {
            return false;
        }
        self.lo = self.lo.max(lo);
        self.hi = self.hi.min(hi);
        self.samples = self.samples.saturating_add(1);
        true
    }
}

impl SkewEvidence {
    /// Adds one sample's bounds (ms) and returns the offset to apply (0: none).
    pub(super) fn add(&mut self, lo: i64, hi: i64) -> i64 {
        if self.current.narrow(lo, hi) {
            self.candidate = Interval::default();
        } else if !self.candidate.narrow(lo, hi) {
            self.candidate = Interval::one(lo, hi);
        }
        if self.candidate.samples >= MIN_SAMPLES {
            self.current = self.candidate;
            self.candidate = Interval::default();
        }
        self.applied()
    }

    /// The offset the current evidence supports (see the module docs).
    fn applied(&self) -> i64 {
        let Interval { lo, hi, samples } = self.current;
        let beyond = lo > CLOCK_SKEW_THRESHOLD_MILLIS || hi < -CLOCK_SKEW_THRESHOLD_MILLIS;
        if samples >= MIN_SAMPLES && beyond {
            hi
        } else {
            0
        }
    }
}

impl<C> Inner<C> {
    /// Takes one sample of the endpoint's clock: `server_millis` (epoch ms) from a `Date`
    /// header, truncated to the second; `sent_millis` and `received_millis` (epoch ms, local)
    /// when the request was sent and its answer read. Updates the evidence and the applied
    /// offset. Allocates nothing and never blocks: a sample that arrives while another one is
    /// being recorded is dropped (the evidence is in the samples that agree, not in each one).
    pub(super) fn observe_server_time(
        &self,
        server_millis: i64,
        sent_millis: i64,
        received_millis: i64,
    ) {
        if received_millis < sent_millis {
            return; // the local clock stepped back during the request: no evidence
        }
        let lo = server_millis
            .saturating_sub(received_millis)
            .saturating_sub(SAMPLE_SLACK_MILLIS);
        let hi = server_millis
            .saturating_add(1_000)
            .saturating_sub(sent_millis)
            .saturating_add(SAMPLE_SLACK_MILLIS);
        if lo > MAX_CLOCK_OFFSET_MILLIS || hi < -MAX_CLOCK_OFFSET_MILLIS {
            if !self.warned_absurd_offset.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "ignoring an endpoint clock more than {MAX_CLOCK_OFFSET_MILLIS} ms away from the local clock (provider '{}'; offset between {lo} and {hi} ms)",
                    self.provider_id
                );
            }
            return;
        }
        let mut evidence = match self.skew.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        let applied = evidence.add(lo, hi);
        let previous = self.clock_offset.swap(applied, Ordering::Relaxed);
        drop(evidence);
        if (previous == 0) != (applied == 0) {
            log::info!(
                "provider '{}': endpoint clock offset {applied} ms now applied to credential expiry (from at least {MIN_SAMPLES} agreeing Date samples)",
                self.provider_id
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample on a machine whose clock is `offset` ms behind the endpoint's: sent at `sent`
    /// (local), stamped after `to_server` ms, read `to_reader` ms after the stamp.
    fn sample(e: &mut SkewEvidence, offset: i64, sent: i64, to_server: i64, to_reader: i64) -> i64 {
        let stamped = sent + to_server + offset;
        let date = stamped - stamped.rem_euclid(1_000);
        let received = sent + to_server + to_reader;
        let lo = date - received - SAMPLE_SLACK_MILLIS;
        let hi = date + 1_000 - sent + SAMPLE_SLACK_MILLIS;
        assert!(lo <= offset && offset <= hi, "the bounds hold the truth");
        e.add(lo, hi)
    }

    #[test]
    fn c23_late_reads_and_coarse_dates_never_give_an_offset() {
        let mut e = SkewEvidence::default();
        for i in 0..1_000 {
            // Read 2-3 s after the stamp, at every phase of the second.
            let late = 2_000 + (i * 37) % 1_000;
            assert_eq!(sample(&mut e, 0, 1_800_000_000_000 + i * 173, 5, late), 0);
        }
    }

    #[test]
    fn c23_a_real_offset_is_learned_within_the_intervals_width_and_its_change_too() {
        let mut e = SkewEvidence::default();
        let t0 = 1_800_000_000_000;
        assert_eq!(
            sample(&mut e, 120_000, t0, 5, 2_500),
            0,
            "one sample is not enough"
        );
        assert_eq!(sample(&mut e, 120_000, t0 + 333, 5, 2_500), 0);
        let learned = sample(&mut e, 120_000, t0 + 666, 5, 5);
        assert!(
            (120_000..=121_200).contains(&learned),
            "never below the truth: {learned}"
        );
        for i in 0..50 {
            sample(&mut e, 120_000, t0 + 1_000 + i * 137, 3, 3);
        }
        let narrowed = e.applied();
        assert!((120_000..=120_300).contains(&narrowed), "{narrowed}");
        // One bogus sample (a cached answer's old Date) changes nothing.
        assert_eq!(sample(&mut e, 0, t0 + 20_000, 5, 5), narrowed);
        // The endpoint's clock is corrected: three agreeing samples replace the old interval.
        for i in 0..3 {
            sample(&mut e, 0, t0 + 30_000 + i * 300, 5, 5);
        }
        assert_eq!(e.applied(), 0);
    }
}
