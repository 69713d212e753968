//! Which GCS answers mean "the endpoint rejected the credential", and which 404 answers mean a
//! missing bucket rather than a missing object.
//!
//! GCS answers an expired, revoked or malformed OAuth2 token with 401 (`Invalid Credentials`,
//! <https://cloud.google.com/storage/docs/json_api/v1/status-codes#401-unauthorized>); a 403
//! means a valid token lacks a permission, which a fresh token of the same grant would not fix.

use crate::cloud::status::endpoint_status;
use crate::error::RequestFailure;

/// Whether `e` is GCS rejecting the token: a 401 answer.
pub fn is_auth_failure(e: &object_store::Error) -> bool {
    matches!(endpoint_status(e), Some((401, _)))
}

/// What a GCS 404 answer says is missing (see [`crate::cloud::located::CloudTerms`]): the XML
/// API's codes `NoSuchBucket` / `NoSuchKey`, or the JSON API's messages (`The specified bucket
/// does not exist.`, `No such object: b/k`; fake-gcs-server: `bucket not found`, `object not
/// found`): `Some(true)` the bucket, `Some(false)` the object, else `None`.
pub fn bucket_missing(f: &RequestFailure) -> Option<bool> {
    match f.code.as_deref() {
        Some("NoSuchBucket") => return Some(true),
        Some("NoSuchKey") => return Some(false),
        _ => {}
    }
    let message = f.message.as_deref()?.to_ascii_lowercase();
    if message.contains("bucket does not exist") || message.contains("bucket not found") {
        Some(true)
    } else if message.contains("no such object") || message.contains("object not found") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Answer(&'static str);
    impl std::fmt::Display for Answer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for Answer {}

    #[test]
    fn only_401_is_a_rejection() {
        let e = |text| object_store::Error::Generic {
            store: "GCS",
            source: Box::new(Answer(text)),
        };
        assert!(is_auth_failure(&e(
            "Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 401 Unauthorized: Invalid Credentials"
        )));
        assert!(!is_auth_failure(&e(
            "Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 403 Forbidden: "
        )));
        assert!(!is_auth_failure(&e("connection refused")));
    }
}
