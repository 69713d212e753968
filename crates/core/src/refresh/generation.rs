//! One credential generation: the merged options a provider answered with, the credential
//! built from them, and when to refresh them.

use std::sync::Arc;

use crate::error::Result;
use crate::options::{
    is_credential_key, parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS,
};
use crate::refresh::config::{millis, RefreshConfig};

/// Builds a cloud credential (for example `object_store::aws::AwsCredential`) from storage
/// options.
///
/// # Errors
/// An [`crate::Error::InvalidOption`] naming the missing or bad key.
pub type CredentialMapper<C> = Arc<dyn Fn(&StorageOptions) -> Result<C> + Send + Sync>;

/// A generation of credentials. Generation numbers start at 1 and grow by one per accepted
/// refresh.
pub struct Generation<C> {
    /// 1 for the options the store was opened with, then +1 per accepted refresh.
    pub number: u64,
    /// The merged storage options of this generation.
    pub options: Arc<StorageOptions>,
    /// The credential, or `None` when the options carry none (the first use then fetches).
    pub credential: Option<Arc<C>>,
    /// Local time this generation was accepted, epoch ms: the refresher's clock without the
    /// endpoint's clock offset, so that ages stay right when the offset changes.
    pub fetched_at_millis: i64,
    /// Expiry, epoch ms; `None` when the provider gave none (used until the endpoint rejects
    /// it).
    pub expires_at_millis: Option<i64>,
    /// From this time (epoch ms) one background refresh starts.
    pub refresh_at_millis: i64,
    /// From this time (epoch ms) requests wait for the refresh.
    pub stale_at_millis: i64,
    /// The last time (epoch ms, exclusive) this generation signs a request: its expiry minus
    /// the signing margin ([`signing_margin_millis`]), so a request signed just before expiry
    /// does not reach the endpoint after it (case C31). `i64::MAX` without an expiry,
    /// `i64::MIN` without a credential.
    pub sign_until_millis: i64,
}

/// The most a credential's signing margin is: 1,000 ms (see [`signing_margin_millis`]).
pub const SIGNING_MARGIN_MILLIS: i64 = 1_000;

/// The signing margin of a credential expiring at `expires_at_millis` and received at
/// `now_millis` (epoch ms): [`SIGNING_MARGIN_MILLIS`] (1 s), or a tenth of the credential's
/// lifetime when that is shorter (a credential vended for 3 s gets 300 ms). No request is
/// signed with a credential within this margin of its expiry: it covers the time a request
/// spends between signing and reaching the endpoint (queueing, a loaded machine, transit) and
/// the endpoint's one-second clock granularity. Requests inside it wait for the refresh that
/// the lead time started. The effective lead time and stale window are never shorter than the
/// margin, so that refresh is always under way by then; it is at most a tenth of the lifetime,
/// so a credential the refresher accepts (more than `min_remaining` left) always serves.
pub fn signing_margin_millis(expires_at_millis: i64, now_millis: i64) -> i64 {
    let lifetime = expires_at_millis.saturating_sub(now_millis).max(0);
    SIGNING_MARGIN_MILLIS.min(lifetime / 10)
}

impl<C> Generation<C> {
    /// Builds generation `number` from merged `options` at `now` (epoch ms, on the clock
    /// expiries are judged by: local plus the endpoint's offset). `fetched_at_millis` is set to
    /// `now`; a caller with a clock offset sets it to local time.
    ///
    /// # Errors
    /// [`crate::Error::InvalidOption`] for a bad `expires_at_millis` or a credential the mapper
    /// rejects (missing secret...).
    pub fn build(
        number: u64,
        options: StorageOptions,
        now: i64,
        config: &RefreshConfig,
        mapper: &CredentialMapper<C>,
    ) -> Result<Self> {
        let expires_at_millis = options
            .get(EXPIRES_AT_MILLIS)
            .map(|v| parse_expires_at_millis(v))
            .transpose()?;
        let has_keys = options
            .keys()
            .any(|k| is_credential_key(k) && k != EXPIRES_AT_MILLIS);
        let credential = if has_keys {
            Some(Arc::new(mapper(&options)?))
        } else {
            None
        };
        let (refresh_at_millis, stale_at_millis, sign_until_millis) =
            match (&credential, expires_at_millis) {
                (None, _) => (i64::MIN, i64::MIN, i64::MIN),
                (Some(_), None) => (i64::MAX, i64::MAX, i64::MAX),
                (Some(_), Some(exp)) => {
                    let (refresh, stale) = schedule(exp, now, config);
                    let margin = signing_margin_millis(exp, now);
                    (refresh, stale, exp.saturating_sub(margin))
                }
            };
        Ok(Self {
            number,
            options: Arc::new(options),
            credential,
            fetched_at_millis: now,
            expires_at_millis,
            refresh_at_millis,
            stale_at_millis,
            sign_until_millis,
        })
    }

    /// Whether this generation can sign a request at `now` (epoch ms): it has a credential and
    /// `now` is before its expiry minus the signing margin ([`Self::sign_until_millis`]).
    pub fn is_valid_at(&self, now: i64) -> bool {
        self.credential.is_some() && now < self.sign_until_millis
    }
}

/// Refresh and stale points for a credential expiring at `exp`, fetched at `now` (epoch ms).
/// Neither is later than the signing margin before expiry (refresh <= stale <= expiry -
/// margin), so requests that may no longer sign always find a refresh under way.
fn schedule(exp: i64, now: i64, config: &RefreshConfig) -> (i64, i64) {
    let lifetime = exp.saturating_sub(now).max(0);
    let margin = signing_margin_millis(exp, now);
    let lead = millis(config.lead_time).min(lifetime / 2).max(margin);
    let jitter_frac = config.jitter.clamp(0.0, 0.5);
    let jitter = (lead as f64 * jitter_frac * rand::random::<f64>()) as i64;
    let stale = millis(config.stale_window).min(lead / 2).max(margin);
    (
        exp.saturating_sub(lead).saturating_sub(jitter),
        exp.saturating_sub(stale),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cfg(lead_s: u64) -> RefreshConfig {
        RefreshConfig {
            lead_time: Duration::from_secs(lead_s),
            jitter: 0.0,
            ..RefreshConfig::default()
        }
    }

    #[test]
    fn c02_lead_time_is_at_most_half_the_lifetime() {
        let now = 1_800_000_000_000;
        // 10 min credential, 5 min lead: refresh 5 min before expiry, stale 30 s before.
        let (r, s) = schedule(now + 600_000, now, &cfg(300));
        assert_eq!(r, now + 300_000);
        assert_eq!(s, now + 600_000 - 30_000);
        // 60 s credential, 5 min lead: lead capped at 30 s, stale window at 15 s.
        let (r, s) = schedule(now + 60_000, now, &cfg(300));
        assert_eq!(r, now + 30_000);
        assert_eq!(s, now + 45_000);
    }

    #[test]
    fn c31_no_signing_within_the_margin_and_the_refresh_starts_before_it() {
        let now = 1_800_000_000_000;
        let mapper: CredentialMapper<()> = Arc::new(|_| Ok(()));
        let build = |lifetime: i64, config: &RefreshConfig| {
            let options: StorageOptions = [
                ("aws_access_key_id", "AKID"),
                ("aws_secret_access_key", "s"),
                ("expires_at_millis", &(now + lifetime).to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            Generation::build(2, options, now, config, &mapper).unwrap()
        };
        // A 10 min credential: 1 s margin, lead and stale window unchanged.
        let g = build(600_000, &cfg(300));
        assert_eq!(g.sign_until_millis, now + 599_000);
        assert!(g.is_valid_at(now + 598_999) && !g.is_valid_at(now + 599_000));
        // 3 s: a tenth, 300 ms; a tiny lead time (100 ms) still refreshes before the margin.
        let tiny = RefreshConfig {
            lead_time: Duration::from_millis(100),
            stale_window: Duration::from_millis(10),
            jitter: 0.0,
            ..RefreshConfig::default()
        };
        let g = build(3_000, &tiny);
        assert_eq!(g.sign_until_millis, now + 2_700);
        assert!(
            !g.is_valid_at(now + 2_999),
            "never signs 1 ms before expiry"
        );
        assert!(g.refresh_at_millis <= g.stale_at_millis);
        assert!(g.stale_at_millis <= g.sign_until_millis);
    }

    #[test]
    fn jitter_only_moves_the_refresh_earlier_and_within_bounds() {
        let now = 1_800_000_000_000;
        let config = RefreshConfig {
            jitter: 0.5,
            ..RefreshConfig::default()
        };
        for _ in 0..100 {
            let (r, _) = schedule(now + 600_000, now, &config);
            assert!(r <= now + 300_000 && r >= now + 150_000, "{r}");
        }
    }
}
