//! The HTTP status and error code of a failed cloud request, for the adapters' auth-failure
//! rules: one reading of `object_store`'s errors ([`RequestFailure`]) shared by every cloud.
//!
//! `object_store` 0.14 keeps the status in its crate-private `RetryError`; what it exposes is
//! the error variant (`Unauthenticated` for 401, `PermissionDenied` for 403 on most requests,
//! `Generic` on lists and bulk calls) and the text
//! `Server returned non-2xx status code: <status>: <body>` in the error chain (see
//! `object_store::client::retry::RequestError::Status`).

/// Runs `f` on the endpoint's failed answer that `error` reports (see [`RequestFailure`]:
/// the one reading of `object_store`'s request errors), or returns `None` when `error` is not
/// an endpoint's answer. An error that passed through this library's own credential refresher
/// (a [`crate::Error`] anywhere in its chain) is never an endpoint's answer, whatever its text
/// says: a catalog's "403" must not count as the storage endpoint rejecting a credential.
pub fn with_request_failure<T>(
    error: &object_store::Error,
    f: impl FnOnce(&RequestFailure) -> T,
) -> Option<T> {
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        if s.downcast_ref::<crate::Error>().is_some() {
            return None;
        }
        source = s.source();
    }
    if let Some(found) = RequestFailure::find(error) {
        return Some(f(found));
    }
    RequestFailure::parse(error).map(|parsed| f(&parsed))
}

/// The HTTP status of the endpoint's answer that `error` reports and the error code the answer
/// carried (`None` for answers without an error document, such as every answer to `HEAD`), or
/// `None` when no answer came.
pub fn endpoint_status(error: &object_store::Error) -> Option<(u16, Option<String>)> {
    with_request_failure(error, |f| f.status.map(|s| (s, f.code.clone()))).flatten()
}

use crate::error::RequestFailure;

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
    fn status_and_body_are_read_from_the_chain() {
        let e = object_store::Error::PermissionDenied {
            path: "p".into(),
            source: Box::new(Answer(
                "Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 403 Forbidden: <Code>AuthorizationFailure</Code>",
            )),
        };
        let (status, code) = endpoint_status(&e).unwrap();
        assert_eq!(status, 403);
        assert_eq!(code.as_deref(), Some("AuthorizationFailure"));
        let e = object_store::Error::Generic {
            store: "x",
            source: Box::new(Answer("connection refused")),
        };
        assert_eq!(endpoint_status(&e), None);
    }

    #[test]
    fn a_provider_error_is_never_an_endpoint_answer() {
        let provider = crate::Error::provider(
            "catalog",
            "Server returned non-2xx status code: 403 Forbidden",
        );
        let e = object_store::Error::Generic {
            store: "MicrosoftAzure",
            source: Box::new(provider.into_object_store()),
        };
        assert_eq!(endpoint_status(&e), None);
    }
}
