//! Which S3 answers mean "the endpoint rejected the credential" (the one place that decides
//! it), and which 404 answers mean a missing bucket rather than a missing object.

use crate::cloud::status::with_request_failure;
use crate::error::RequestFailure;

/// Error codes with which S3 and S3-compatible endpoints reject a credential (as opposed to
/// refusing an authorised identity access, `AccessDenied`). Sources: the S3 error code list
/// (<https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html>) and STS/IAM codes
/// that S3-compatible servers answer (`InvalidClientTokenId`).
const AUTH_FAILURE_CODES: [&str; 6] = [
    "ExpiredToken",
    "InvalidToken",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "TokenRefreshRequired",
    "InvalidClientTokenId",
];

/// Whether `e` is the endpoint rejecting the credential, so that a freshly fetched one may
/// succeed. Decided from the failed request (see [`RequestFailure`]), never from free text:
///
/// - an answer with an error document: its `<Code>` is one of ExpiredToken, InvalidToken,
///   InvalidAccessKeyId, SignatureDoesNotMatch, TokenRefreshRequired, InvalidClientTokenId;
/// - an answer to `HEAD` (which has no body, hence no code) with status 400, 401 or 403: an
///   expired token answers 400 and a revoked or unknown key 403, and the two cannot be told
///   apart from a missing permission (`AccessDenied`, also 403), so a bodiless 403 counts as a
///   rejected credential (one refetch and one retry at most, which the refresher rate-limits).
///
/// A credential provider's own failure (which `object_store` carries as a `Generic` error) is
/// never an auth failure: refetching would not help.
pub fn is_auth_failure(e: &object_store::Error) -> bool {
    with_request_failure(e, is_rejection).unwrap_or(false)
}

/// [`is_auth_failure`] for an already read request failure.
pub fn is_rejection(f: &RequestFailure) -> bool {
    match (&f.code, f.status) {
        (Some(code), _) => AUTH_FAILURE_CODES.contains(&code.as_str()),
        (None, Some(400 | 401 | 403)) => f.method == "HEAD" && f.message.is_none(),
        (None, _) => false,
    }
}

/// What an S3 404 answer says is missing (see [`crate::cloud::located::CloudTerms`]):
/// `NoSuchBucket` the bucket (`Some(true)`), `NoSuchKey` the object (`Some(false)`), else `None`.
pub fn bucket_missing(f: &RequestFailure) -> Option<bool> {
    match f.code.as_deref()? {
        "NoSuchBucket" => Some(true),
        "NoSuchKey" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with `object_store`'s request error text.
    #[derive(Debug)]
    struct Text(String);
    impl std::fmt::Display for Text {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl std::error::Error for Text {}

    fn generic(text: &str) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: Box::new(Text(text.to_string())),
        }
    }

    fn denied(text: &str) -> object_store::Error {
        object_store::Error::PermissionDenied {
            path: "p".into(),
            source: Box::new(Text(text.to_string())),
        }
    }

    const BODY_403: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message><RequestId>1</RequestId></Error>";

    #[test]
    fn c18_codes_and_bodiless_head_answers_are_rejections() {
        let get = denied(&format!("Error performing GET http://h/b/k in 1.2ms - Server returned non-2xx status code: 403 Forbidden: {BODY_403}"));
        assert!(is_auth_failure(&get));
        let head_403 = denied("Error performing HEAD http://h/b/k in 812.3µs - Server returned non-2xx status code: 403 Forbidden: ");
        assert!(is_auth_failure(&head_403));
        let head_400 = generic("Error performing HEAD http://h/b/k in 2ms - Server returned non-2xx status code: 400 Bad Request: ");
        assert!(is_auth_failure(&head_400));
        let list = generic("Error performing GET http://h/b?list-type=2 in 3ms - Server returned non-2xx status code: 400 Bad Request: <Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>");
        assert!(is_auth_failure(&list));
    }

    #[test]
    fn access_denied_missing_objects_and_provider_errors_are_not() {
        let get = denied("Error performing GET http://h/b/k in 1ms - Server returned non-2xx status code: 403 Forbidden: <Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
        assert!(!is_auth_failure(&get));
        let head_404 = generic("Error performing HEAD http://h/b/k in 1ms - Server returned non-2xx status code: 404 Not Found: ");
        assert!(!is_auth_failure(&head_404));
        // Free text naming a code is not an answer carrying it.
        let provider =
            crate::Error::provider("p", "catalog said InvalidAccessKeyId").into_object_store();
        assert!(!is_auth_failure(&provider));
        assert!(!is_auth_failure(&generic("InvalidAccessKeyId somewhere")));
    }
}
