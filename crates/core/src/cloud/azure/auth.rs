//! Which Azure Blob answers mean "the endpoint rejected the credential", and which 404 answers
//! mean a missing container rather than a missing blob.
//!
//! Real Azure rejects an expired or wrong SAS, token or key with 403 `AuthenticationFailed`
//! (401 `InvalidAuthenticationInfo` for a bad bearer token); Azurite answers 403
//! `AuthorizationFailure` after the SAS `se` passed. The codes differ, and a HEAD answer has no
//! body at all, so the rule keys on the status: every 401, and every 403 except the codes that
//! say an accepted credential lacks a permission (a fresh credential of the same grant would be
//! refused the same way).
//! Codes: <https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes>
//! and <https://learn.microsoft.com/en-us/rest/api/storageservices/common-rest-api-error-codes>.

use crate::cloud::status::endpoint_status;
use crate::error::RequestFailure;

/// 403 codes meaning "credential accepted, operation not permitted".
const NOT_A_REJECTION: [&str; 6] = [
    "AuthorizationPermissionMismatch",
    "AuthorizationResourceTypeMismatch",
    "AuthorizationServiceMismatch",
    "AuthorizationProtocolMismatch",
    "AuthorizationSourceIPMismatch",
    "InsufficientAccountPermissions",
];

/// Whether `e` is Azure (or Azurite) rejecting the credential: a 401, or a 403 other than the
/// permission-mismatch codes.
pub fn is_auth_failure(e: &object_store::Error) -> bool {
    match endpoint_status(e) {
        Some((401, _)) => true,
        Some((403, code)) => code.is_none_or(|c| !NOT_A_REJECTION.contains(&c.as_str())),
        _ => false,
    }
}

/// What an Azure 404 answer says is missing (see [`crate::cloud::located::CloudTerms`]):
/// `ContainerNotFound` (ADLS Gen2: `FilesystemNotFound`) the container (`Some(true)`),
/// `BlobNotFound` (ADLS Gen2: `PathNotFound`) the blob (`Some(false)`), else `None`.
pub fn container_missing(f: &RequestFailure) -> Option<bool> {
    match f.code.as_deref()? {
        "ContainerNotFound" | "FilesystemNotFound" => Some(true),
        "BlobNotFound" | "PathNotFound" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Answer(String);
    impl std::fmt::Display for Answer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl std::error::Error for Answer {}

    fn answer(status: &str, body: &str) -> object_store::Error {
        object_store::Error::PermissionDenied {
            path: "p".into(),
            source: Box::new(Answer(format!(
                "Error performing GET REDACTED in 1ms - Server returned non-2xx status code: {status}: {body}"
            ))),
        }
    }

    #[test]
    fn rejections_are_recognised_by_status() {
        assert!(is_auth_failure(&answer(
            "403 Forbidden",
            "<Code>AuthenticationFailed</Code>"
        )));
        assert!(is_auth_failure(&answer(
            "403 Forbidden",
            "<Code>AuthorizationFailure</Code>"
        )));
        assert!(
            is_auth_failure(&answer("403 Forbidden", "")),
            "HEAD: no body"
        );
        assert!(is_auth_failure(&answer("401 Unauthorized", "")));
        assert!(!is_auth_failure(&answer(
            "403 Forbidden",
            "<Code>AuthorizationPermissionMismatch</Code>"
        )));
        assert!(!is_auth_failure(&answer(
            "404 Not Found",
            "<Code>BlobNotFound</Code>"
        )));
    }
}
