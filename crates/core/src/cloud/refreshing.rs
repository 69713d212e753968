//! The `object_store` credential provider every cloud uses for vended credentials: it serves
//! the [`CredentialRefresher`]'s current credential, whatever the credential type.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use object_store::CredentialProvider;

use crate::error::Error;
use crate::refresh::CredentialRefresher;

/// An `object_store` [`CredentialProvider`] backed by a [`CredentialRefresher`]: the hot path
/// is the refresher's lock-free [`try_fresh`](CredentialRefresher::try_fresh); otherwise it
/// waits for the refresher (prefetch, stale window, expiry, backoff).
pub struct RefreshingCredentialProvider<C> {
    refresher: CredentialRefresher<C>,
}

impl<C> RefreshingCredentialProvider<C> {
    /// Wraps `refresher`.
    pub fn new(refresher: CredentialRefresher<C>) -> Self {
        Self { refresher }
    }
}

impl<C> Clone for RefreshingCredentialProvider<C> {
    fn clone(&self) -> Self {
        Self {
            refresher: self.refresher.clone(),
        }
    }
}

impl<C> fmt::Debug for RefreshingCredentialProvider<C> {
    /// The refresher's provider and generation; never the credential.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefreshingCredentialProvider")
            .field("refresher", &self.refresher)
            .finish()
    }
}

#[async_trait]
impl<C: Send + Sync + fmt::Debug + 'static> CredentialProvider for RefreshingCredentialProvider<C> {
    type Credential = C;

    async fn get_credential(&self) -> object_store::Result<Arc<C>> {
        if let Some((c, _)) = self.refresher.try_fresh() {
            return Ok(c);
        }
        // Boxed so that this trait's own (per-call) future stays small: the slow path's state
        // is allocated only when the slow path runs.
        Box::pin(self.refresher.get_credential())
            .await
            .map(|(c, _)| c)
            .map_err(Error::into_object_store)
    }
}
