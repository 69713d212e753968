//! The probe that tells a refused permission from a rejected credential when a `HEAD` answer
//! has no body (case C29; see [`LocatedStore`]).

use object_store::path::Path;
use object_store::{GetOptions, ObjectStore};

use super::{enrich_scrubbed, LocatedStore};
use crate::error::RequestFailure;

/// How long a key whose `HEAD` was refused a permission is remembered as refused (a grant is
/// the same for every credential a provider vends; a catalog that widens a table's scope is
/// seen within this time).
pub const DENIAL_MEMO_TTL: std::time::Duration = std::time::Duration::from_secs(60);

/// How many refused keys a store remembers (the least recently used are forgotten first).
pub(super) const DENIAL_MEMO_KEYS: u64 = 4096;

impl<S: ObjectStore> LocatedStore<S> {
    /// For a 403 `HEAD` without a body (no code: a rejected credential and a refused
    /// permission look the same, case C29): the code and message of one probe `GET` of the
    /// first byte of the same key, which has a body. `AccessDenied` then tells a path outside
    /// the credential's scope (the credential stays valid for every other path; nothing is
    /// invalidated and no credential is fetched), `InvalidAccessKeyId`/`ExpiredToken` a
    /// rejected credential (refetched and retried once, as before). A probe the endpoint
    /// allows means the credential was accepted: the `HEAD` was refused a permission
    /// (`AccessDenied`). A probe that tells nothing (no answer, no code) leaves the answer
    /// ambiguous, treated as a rejected credential.
    pub(super) async fn probe_denial(&self, location: &Path) -> (Option<String>, Option<String>) {
        let options = GetOptions::new().with_range(Some(0..1));
        match self.inner.get_opts(location, options).await {
            Ok(_) => (
                Some("AccessDenied".to_string()),
                Some(
                    "HEAD was refused while a GET of the same key with the same credential was \
                     allowed"
                        .to_string(),
                ),
            ),
            Err(probe) => {
                let scrubber = self.place.scrubber();
                let probe = enrich_scrubbed(probe, String::new(), None, &|t| scrubber.scrub(t));
                match RequestFailure::find(&probe) {
                    Some(f) if f.code.is_some() => (f.code.clone(), f.message.clone()),
                    _ => (None, None),
                }
            }
        }
    }
}
