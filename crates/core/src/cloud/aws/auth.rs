//! Which S3 answers mean "the endpoint rejected the credential".

/// Error codes with which S3 and S3-compatible endpoints reject a credential (as opposed to
/// refusing an authorised identity access).
const AUTH_FAILURE_CODES: [&str; 6] = [
    "ExpiredToken",
    "InvalidToken",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "TokenRefreshRequired",
    "InvalidClientTokenId",
];

/// Whether `e` is the endpoint rejecting the credential (ExpiredToken, InvalidToken,
/// InvalidAccessKeyId, SignatureDoesNotMatch...), judged from the error and its sources.
pub fn is_auth_failure(e: &object_store::Error) -> bool {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&s.to_string());
        source = s.source();
    }
    AUTH_FAILURE_CODES.iter().any(|c| text.contains(c))
}

