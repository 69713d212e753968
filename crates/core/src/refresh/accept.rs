//! Acceptance of a provider's answer: what makes it the next generation, and what makes it
//! a failed refresh (no options, no credential, already or almost expired).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::config::millis;
use super::{Generation, Inner};
use crate::error::{Error, Result};
use crate::options::{has_credentials, merge, StorageOptions};

/// Whether credentials expiring at `expires_at_millis` are refused at `now_millis` (epoch ms):
/// already expired, or expiring within `min_remaining` ([`RefreshConfig::min_remaining`]). The
/// one rule a store applies to every answer; a provider with an answer of its own in hand (the
/// Iceberg REST provider's first answer) asks it too, to call its catalog instead of serving
/// one the store would refuse.
///
/// [`RefreshConfig::min_remaining`]: super::RefreshConfig::min_remaining
pub(crate) fn too_soon_to_use(
    expires_at_millis: i64,
    now_millis: i64,
    min_remaining: Duration,
) -> bool {
    expires_at_millis.saturating_sub(now_millis) <= millis(min_remaining)
}

impl<C: Send + Sync + 'static> Inner<C> {
    /// Validates a provider's answer and builds the next generation from it.
    pub(super) fn accept(
        &self,
        fresh: Option<StorageOptions>,
        now: i64,
    ) -> Result<Arc<Generation<C>>> {
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
        let mut g = Generation::build(cur.number + 1, merged, now, &self.config, &self.mapper)
            .map_err(|e| fail(format!("returned unusable storage options: {e}")))?;
        g.fetched_at_millis = self.clock.now_millis();
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
            Some(exp) if too_soon_to_use(exp, now, self.config.min_remaining) => {
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

    pub(super) fn warn_if_no_expiry(&self, g: &Generation<C>) {
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
