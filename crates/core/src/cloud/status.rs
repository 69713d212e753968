//! The HTTP status of a failed cloud request, as `object_store` reports it, for the adapters'
//! auth-failure rules.
//!
//! `object_store` 0.14 keeps the status in its crate-private `RetryError`; what it exposes is
//! the error variant (`Unauthenticated` for 401, `PermissionDenied` for 403 on most requests,
//! `Generic` on lists and bulk calls) and the text `Server returned non-2xx status code: <status>:
//! <body>` in the error chain (see `object_store::client::retry::RequestError::Status`).

/// The text `object_store` puts before the status code of a non-2xx answer.
const STATUS_MARKER: &str = "non-2xx status code: ";

/// The HTTP status of the endpoint's answer that `error` reports, and the text after it (the
/// answer's body, empty for a HEAD request), or `None` when `error` is not an endpoint's
/// non-2xx answer. An error that passed through this library's own credential refresher (a
/// [`crate::Error`] anywhere in its chain) is never an endpoint's answer, whatever its text
/// says: a catalog's "403" must not count as the storage endpoint rejecting a credential.
pub fn endpoint_status(error: &object_store::Error) -> Option<(u16, String)> {
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        if s.downcast_ref::<crate::Error>().is_some() {
            return None;
        }
        source = s.source();
    }
    let text = error.to_string();
    let at = text.find(STATUS_MARKER)? + STATUS_MARKER.len();
    let rest = &text[at..];
    let code: u16 = rest.get(..3)?.parse().ok()?;
    let body = rest.get(3..).unwrap_or("").to_string();
    Some((code, body))
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
    fn status_and_body_are_read_from_the_chain() {
        let e = object_store::Error::PermissionDenied {
            path: "p".into(),
            source: Box::new(Answer(
                "Error performing GET REDACTED in 1ms - Server returned non-2xx status code: 403 Forbidden: <Code>AuthorizationFailure</Code>",
            )),
        };
        let (code, body) = endpoint_status(&e).unwrap();
        assert_eq!(code, 403);
        assert!(body.contains("AuthorizationFailure"), "{body}");
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
