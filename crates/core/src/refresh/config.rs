//! Refresh timing settings.

use std::time::Duration;

use crate::error::{Error, Result};

/// When and how the refresher renews credentials. All fields are `Duration`s.
///
/// For a credential with lifetime `L` (expiry minus the time it was fetched):
/// - the effective lead time is `lead = min(lead_time, L / 2)`;
/// - the refresh point is `expiry - lead - j`, with `j` drawn uniformly from
///   `[0, jitter × lead]` once per credential (default `jitter` 0.5: up to half the lead
///   earlier, so between `expiry - 1.5 × lead` and `expiry - lead`, never later than the
///   deterministic lead and never earlier than a quarter into the lifetime). Stores opened at
///   the same moment with the same expiry (a fleet of executors opening one table) so call
///   the catalog spread over `jitter × lead` (150 s for the default 5 min lead) instead of in
///   the same second. From the refresh point one background refresh runs while requests keep
///   signing with the current credential (prefetch);
/// - the effective stale window is `min(stale_window, lead / 2)`: from `expiry` minus that,
///   requests wait for the refresh, at most `provider_timeout` and never with an expired
///   credential;
/// - the signing margin is `min(1 s, L / 10)` ([`crate::refresh::signing_margin_millis`],
///   not a setting): no request is signed within it of the expiry, so a request signed just
///   before expiry never reaches the endpoint after it (transit, a loaded machine, one-second
///   clocks; case C31). Requests in it wait for the refresh already under way: the effective
///   lead time and stale window are never shorter than the margin. If that refresh fails, the
///   credential still serves until its expiry (case C22).
///
/// A failed refresh backs off: while the credential still serves, from `initial_backoff`
/// doubling per failure up to `max_backoff` (never past its expiry, so one attempt happens at
/// expiry); once nothing valid is left (expired, never existed, rejected by the endpoint) at
/// the fixed `initial_backoff`, about one provider call a second, never one per request and
/// never growing, so service returns within about that long of the catalog's return (case
/// C22). A failure the provider calls permanent waits `max_backoff`.
///
/// Build one from milliseconds with [`RefreshConfig::from_millis`], which checks the bounds;
/// [`RefreshConfig::validate`] checks a hand-built one.
#[derive(Debug, Clone)]
pub struct RefreshConfig {
    /// How long before expiry a refresh starts. Default 5 minutes.
    pub lead_time: Duration,
    /// How long before expiry requests start waiting for the refresh. Default 30 s.
    pub stale_window: Duration,
    /// How long one provider call may take before it counts as failed, and the longest a
    /// request waits for a refresh. Default 30 s.
    pub provider_timeout: Duration,
    /// First retry delay after a failed refresh (doubles per failure while the credential
    /// is valid), and the fixed retry interval once nothing valid is left. Default 1 s.
    pub initial_backoff: Duration,
    /// Longest retry delay. Default 30 s. While the credential is valid, retries are never
    /// scheduled past its expiry.
    pub max_backoff: Duration,
    /// How far before the deterministic refresh point a credential's refresh point may be
    /// moved, as a fraction of the effective lead time, `0.0..=0.5` (0: no jitter). Default
    /// 0.5.
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
            jitter: 0.5,
            min_remaining: Duration::from_millis(500),
        }
    }
}

/// The longest any duration setting may be: one day (86,400,000 ms). Credentials are vended
/// for minutes to hours; a lead time, timeout or backoff beyond a day is a unit mistake
/// (seconds taken for milliseconds, or a sentinel), not a plan.
pub const MAX_SETTING: Duration = Duration::from_secs(86_400);

/// Setting names as [`Error::InvalidOption`] reports them (`key`).
pub mod setting {
    /// [`super::RefreshConfig::lead_time`], in milliseconds.
    pub const LEAD_TIME_MILLIS: &str = "refresh_lead_time_millis";
    /// [`super::RefreshConfig::stale_window`], in milliseconds.
    pub const STALE_WINDOW_MILLIS: &str = "refresh_stale_window_millis";
    /// [`super::RefreshConfig::provider_timeout`], in milliseconds.
    pub const PROVIDER_TIMEOUT_MILLIS: &str = "refresh_provider_timeout_millis";
    /// [`super::RefreshConfig::initial_backoff`], in milliseconds.
    pub const INITIAL_BACKOFF_MILLIS: &str = "refresh_initial_backoff_millis";
    /// [`super::RefreshConfig::max_backoff`], in milliseconds.
    pub const MAX_BACKOFF_MILLIS: &str = "refresh_max_backoff_millis";
    /// [`super::RefreshConfig::jitter`], a fraction.
    pub const JITTER: &str = "refresh_jitter";
    /// [`super::RefreshConfig::min_remaining`], in milliseconds.
    pub const MIN_REMAINING_MILLIS: &str = "refresh_min_remaining_millis";
}

impl RefreshConfig {
    /// The default settings with another lead time.
    pub fn with_lead_time(lead_time: Duration) -> Self {
        Self {
            lead_time,
            ..Self::default()
        }
    }

    /// Builds a configuration from milliseconds; `None` keeps a setting's default (the JNI
    /// binding maps Java's `-1` to `None`). Jitter and `min_remaining` keep their defaults.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the setting (see [`setting`]) when a value is 0 or above
    /// [`MAX_SETTING`] (one day, 86,400,000 ms), or when the initial backoff exceeds the
    /// maximum backoff (each as given or defaulted: an `initial_backoff_ms` of 60,000 with the
    /// default 30 s maximum is an error naming `refresh_initial_backoff_millis`).
    pub fn from_millis(
        lead_time_ms: Option<u64>,
        stale_window_ms: Option<u64>,
        provider_timeout_ms: Option<u64>,
        initial_backoff_ms: Option<u64>,
        max_backoff_ms: Option<u64>,
    ) -> Result<Self> {
        let d = Self::default();
        let pick = |ms: Option<u64>, default: Duration, key: &str| -> Result<Duration> {
            match ms {
                None => Ok(default),
                Some(ms) => check_duration(key, Duration::from_millis(ms)),
            }
        };
        let config = Self {
            lead_time: pick(lead_time_ms, d.lead_time, setting::LEAD_TIME_MILLIS)?,
            stale_window: pick(
                stale_window_ms,
                d.stale_window,
                setting::STALE_WINDOW_MILLIS,
            )?,
            provider_timeout: pick(
                provider_timeout_ms,
                d.provider_timeout,
                setting::PROVIDER_TIMEOUT_MILLIS,
            )?,
            initial_backoff: pick(
                initial_backoff_ms,
                d.initial_backoff,
                setting::INITIAL_BACKOFF_MILLIS,
            )?,
            max_backoff: pick(max_backoff_ms, d.max_backoff, setting::MAX_BACKOFF_MILLIS)?,
            ..d
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks the bounds [`from_millis`](Self::from_millis) documents, plus `jitter` in
    /// `0.0..=0.5` and `min_remaining` at most [`MAX_SETTING`] (it may be 0).
    ///
    /// # Errors
    /// [`Error::InvalidOption`] naming the first setting out of bounds (see [`setting`]).
    pub fn validate(&self) -> Result<()> {
        check_duration(setting::LEAD_TIME_MILLIS, self.lead_time)?;
        check_duration(setting::STALE_WINDOW_MILLIS, self.stale_window)?;
        check_duration(setting::PROVIDER_TIMEOUT_MILLIS, self.provider_timeout)?;
        check_duration(setting::INITIAL_BACKOFF_MILLIS, self.initial_backoff)?;
        check_duration(setting::MAX_BACKOFF_MILLIS, self.max_backoff)?;
        if self.initial_backoff > self.max_backoff {
            return Err(Error::invalid_option(
                setting::INITIAL_BACKOFF_MILLIS,
                format!(
                    "{} ms is more than {} = {} ms",
                    self.initial_backoff.as_millis(),
                    setting::MAX_BACKOFF_MILLIS,
                    self.max_backoff.as_millis()
                ),
            ));
        }
        if !(0.0..=0.5).contains(&self.jitter) {
            return Err(Error::invalid_option(
                setting::JITTER,
                format!("must be a fraction in 0.0..=0.5, got {}", self.jitter),
            ));
        }
        if self.min_remaining > MAX_SETTING {
            return Err(Error::invalid_option(
                setting::MIN_REMAINING_MILLIS,
                format!(
                    "must be at most {} ms (one day), got {} ms",
                    MAX_SETTING.as_millis(),
                    self.min_remaining.as_millis()
                ),
            ));
        }
        Ok(())
    }
}

fn check_duration(key: &str, d: Duration) -> Result<Duration> {
    if d.is_zero() || d > MAX_SETTING {
        return Err(Error::invalid_option(
            key,
            format!(
                "must be between 1 and {} ms (one day), got {} ms",
                MAX_SETTING.as_millis(),
                d.as_millis()
            ),
        ));
    }
    Ok(d)
}

pub(crate) fn millis(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_millis_with_no_values_is_the_default() {
        let c = RefreshConfig::from_millis(None, None, None, None, None).unwrap();
        let d = RefreshConfig::default();
        assert_eq!(
            (
                c.lead_time,
                c.stale_window,
                c.provider_timeout,
                c.initial_backoff,
                c.max_backoff
            ),
            (
                d.lead_time,
                d.stale_window,
                d.provider_timeout,
                d.initial_backoff,
                d.max_backoff
            )
        );
        assert_eq!(c.jitter, d.jitter);
    }

    #[test]
    fn from_millis_sets_each_value_in_milliseconds() {
        let c = RefreshConfig::from_millis(
            Some(120_000),
            Some(10_000),
            Some(5_000),
            Some(250),
            Some(60_000),
        )
        .unwrap();
        assert_eq!(c.lead_time, Duration::from_secs(120));
        assert_eq!(c.stale_window, Duration::from_secs(10));
        assert_eq!(c.provider_timeout, Duration::from_secs(5));
        assert_eq!(c.initial_backoff, Duration::from_millis(250));
        assert_eq!(c.max_backoff, Duration::from_secs(60));
        // The bounds themselves are accepted.
        RefreshConfig::from_millis(Some(1), Some(86_400_000), Some(1), Some(1), Some(1)).unwrap();
    }

    #[test]
    fn from_millis_rejects_zero_and_absurd_values_naming_the_setting() {
        type Args = [Option<u64>; 5];
        let cases: [(Args, &str); 10] = [
            ([Some(0), None, None, None, None], setting::LEAD_TIME_MILLIS),
            (
                [None, Some(0), None, None, None],
                setting::STALE_WINDOW_MILLIS,
            ),
            (
                [None, None, Some(0), None, None],
                setting::PROVIDER_TIMEOUT_MILLIS,
            ),
            (
                [None, None, None, Some(0), None],
                setting::INITIAL_BACKOFF_MILLIS,
            ),
            (
                [None, None, None, None, Some(0)],
                setting::MAX_BACKOFF_MILLIS,
            ),
            (
                [Some(86_400_001), None, None, None, None],
                setting::LEAD_TIME_MILLIS,
            ),
            (
                [None, Some(u64::MAX), None, None, None],
                setting::STALE_WINDOW_MILLIS,
            ),
            (
                [None, None, Some(u64::MAX), None, None],
                setting::PROVIDER_TIMEOUT_MILLIS,
            ),
            // Initial above the (default 30 s) maximum, and above an explicit maximum.
            (
                [None, None, None, Some(60_000), None],
                setting::INITIAL_BACKOFF_MILLIS,
            ),
            (
                [None, None, None, Some(2_000), Some(1_000)],
                setting::INITIAL_BACKOFF_MILLIS,
            ),
        ];
        for ([a, b, c, d, e], key) in cases {
            let err = RefreshConfig::from_millis(a, b, c, d, e).unwrap_err();
            match &err {
                Error::InvalidOption { key: k, .. } => assert_eq!(k, key, "{err}"),
                other => panic!("not InvalidOption: {other}"),
            }
            assert_eq!(err.kind(), crate::ErrorKind::InvalidOptions);
        }
        let e = RefreshConfig::from_millis(Some(0), None, None, None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("between 1 and 86400000 ms") && e.contains("got 0 ms"),
            "{e}"
        );
    }

    #[test]
    fn validate_checks_jitter_and_hand_built_values() {
        assert!(RefreshConfig::default().validate().is_ok());
        for jitter in [-0.1, 0.6, f64::NAN, f64::INFINITY] {
            let c = RefreshConfig {
                jitter,
                ..RefreshConfig::default()
            };
            let e = c.validate().unwrap_err();
            assert!(e.to_string().contains(setting::JITTER), "{e}");
        }
        let c = RefreshConfig {
            max_backoff: Duration::from_millis(10),
            ..RefreshConfig::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("initial_backoff"));
    }
}
