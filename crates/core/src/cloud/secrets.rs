//! [`StoreSecrets`]: the secret values one cloud store holds, scrubbed from its errors with the
//! well-known secret patterns (see [`crate::redact`]).

use std::sync::Arc;

use crate::options::{is_secret_key, StorageOptions};
use crate::redact::{Scrubber, MIN_PART_LEN};
use crate::refresh::RefresherHandle;

/// The secret values one store holds, for scrubbing its errors: those of the options it was
/// opened with and, when a refresher keeps its credentials, those of the refresher's current
/// generation (read when an error is scrubbed: errors are rare, the hot path pays nothing).
///
/// A value is secret when its key is not on the allow-list of non-secret keys
/// ([`is_secret_key`]), and it is scrubbed when it has at least [`MIN_PART_LEN`] characters
/// (credential material is long; a short value of an unknown key would scrub common words).
#[derive(Clone, Default)]
pub struct StoreSecrets {
    opened_with: Arc<Scrubber>,
    refresher: Option<Arc<dyn RefresherHandle>>,
}

impl std::fmt::Debug for StoreSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSecrets")
            .field("opened_with", &self.opened_with)
            .field("refreshing", &self.refresher.is_some())
            .finish()
    }
}

impl StoreSecrets {
    /// The secrets of a store opened with `options` whose credentials `refresher` (if any)
    /// keeps fresh.
    pub fn new(options: &StorageOptions, refresher: Option<Arc<dyn RefresherHandle>>) -> Self {
        Self {
            opened_with: Arc::new(of_options(options)),
            refresher,
        }
    }

    /// A scrubber of the store's secret values now: those it was opened with and its
    /// refresher's current ones. Build it once per error (it reads the refresher's options).
    pub fn current(&self) -> Scrubber {
        match &self.refresher {
            Some(r) => self
                .opened_with
                .as_ref()
                .clone()
                .merged(of_options(&r.current_options())),
            None => self.opened_with.as_ref().clone(),
        }
    }

    /// `text` with the store's secret values and the well-known patterns scrubbed.
    pub fn scrub(&self, text: &str) -> String {
        self.current().scrub(text)
    }
}

/// A scrubber of the values of every secret key of `options`.
fn of_options(options: &StorageOptions) -> Scrubber {
    Scrubber::new(
        options
            .iter()
            .filter(|(k, _)| is_secret_key(k))
            .map(|(_, v)| v.as_str()),
        MIN_PART_LEN,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_scrubs_its_opening_options() {
        let options = [("google_storage_token", "ya29.abcdefgh-token")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let secrets = StoreSecrets::new(&options, None);
        assert_eq!(
            secrets.scrub("token ya29.abcdefgh-token at ?sig=zz"),
            "token *** at ?sig=***"
        );
        assert!(!format!("{secrets:?}").contains("ya29"));
    }
}
