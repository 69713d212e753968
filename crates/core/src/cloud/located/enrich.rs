//! [`enrich`]: a [`RequestFailure`] with the store's location put into an `object_store`
//! error, its endpoint text scrubbed of secrets (see [`crate::redact`]).

use super::{failure_mut, parts};
use crate::error::{RequestFailure, Scrubbed};

/// Puts a [`RequestFailure`] naming `location` (and `operation`, printed instead of the HTTP
/// method when set, e.g. `LIST`) into `e`: same variant, same path; the original source becomes
/// the failure's source. Errors that are no HTTP request failure (credential provider errors,
/// invalid paths) and errors that already carry one are returned unchanged.
///
/// The endpoint's text is read through the well-known secret patterns
/// ([`crate::redact::scrub_patterns`]); a store's errors also through its own secret values
/// (see [`super::LocatedStore::with_secrets`]).
pub fn enrich(
    e: object_store::Error,
    location: String,
    operation: Option<&'static str>,
) -> object_store::Error {
    enrich_scrubbed(e, location, operation, &|t| {
        crate::redact::scrub_patterns(t).into_owned()
    })
}

/// [`enrich`] reading the endpoint's text through `scrub`: the failure's code and message, and
/// its source (the original error, which quotes the whole answer) kept as scrubbed text only.
pub(super) fn enrich_scrubbed(
    mut e: object_store::Error,
    location: String,
    operation: Option<&'static str>,
    scrub: &dyn Fn(&str) -> String,
) -> object_store::Error {
    if RequestFailure::find(&e).is_some() {
        return e;
    }
    let Some(failure) = RequestFailure::parse_scrubbed(&e, scrub) else {
        return e;
    };
    if let Some((_, source)) = parts(&mut e) {
        let original = std::mem::replace(source, Box::from(""));
        let mut failure = failure
            .with_location(location)
            .with_operation(operation)
            .with_source(original);
        failure.scrub(scrub);
        *source = Box::new(failure);
    }
    e
}

/// `e` with no text that `scrub` changes: the [`RequestFailure`] that is its direct source
/// scrubbed (see [`RequestFailure::scrub`]); any other source replaced by its scrubbed text
/// when that differs (so an error that quotes no secret keeps its source chain, which the
/// listing resumption reads).
pub(super) fn scrub_error(
    mut e: object_store::Error,
    scrub: &dyn Fn(&str) -> String,
) -> object_store::Error {
    if let Some(f) = failure_mut(&mut e) {
        f.scrub(scrub);
        return e;
    }
    if let Some((_, source)) = parts(&mut e) {
        let as_is = Scrubbed::of(source.as_ref(), &|t| t.to_string());
        let scrubbed = Scrubbed::of(source.as_ref(), scrub);
        if scrubbed.0 != as_is.0 {
            *source = Box::new(scrubbed);
        }
    }
    e
}
