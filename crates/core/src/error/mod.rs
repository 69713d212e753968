//! The crate's error type.
//!
//! Errors are cheap to clone (sources are behind `Arc`) because one failed refresh is reported
//! to every caller that waited on it. No variant ever carries a secret: messages name option
//! keys, never their values when the key is secret.

use std::sync::Arc;

use object_store::client::{HttpError, HttpErrorKind};

mod request;

pub use request::{BodyCut, Missing, RequestFailure, Scrubbed};

/// A shareable error source (for example a Java throwable captured by the JNI bridge).
pub type SharedSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How many times a whole-object read is made when its bytes do not have the stored checksum
/// (the first read and one more), see [`Error::rereads_whole_object`].
pub const WHOLE_READ_ATTEMPTS: usize = 2;

/// Everything that can go wrong in vended-storage.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A storage option is missing or has a bad value. `key` names the option; `message` says
    /// what was wrong (it quotes the value only when the key is not secret).
    #[error("invalid storage option '{key}': {message}")]
    InvalidOption {
        /// The option key, e.g. `expires_at_millis`.
        key: String,
        /// What was wrong with it.
        message: String,
    },

    /// The URI cannot be opened (unknown scheme, no bucket, unparsable).
    #[error("invalid URI '{uri}': {message}")]
    InvalidUri {
        /// The URI as given.
        uri: String,
        /// What was wrong with it.
        message: String,
    },

    /// The credential provider failed or returned unusable storage options.
    #[error("credential provider '{provider}' failed: {message}")]
    Provider {
        /// The provider's id (see [`crate::StorageOptionsProvider::provider_id`]).
        provider: String,
        /// The provider's own message, or what was wrong with its answer.
        message: String,
        /// The provider's own error (for the JVM: the Java throwable).
        #[source]
        source: Option<SharedSource>,
        /// Whether the failure may heal by itself (a catalog's 5xx, a timeout, a Java exception)
        /// rather than need a person (a catalog's 404, 401, 403, a malformed answer). The
        /// refresher retries permanent failures at its slowest pace at once.
        retryable: bool,
    },

    /// The credential has expired and no fresh one could be obtained.
    #[error("credentials from provider '{provider}' expired at {} ({expired_at_millis} epoch ms) and could not be refreshed: {last_error}", utc_time(*.expired_at_millis))]
    CredentialsExpired {
        /// The provider's id.
        provider: String,
        /// When the last good credential expired, epoch milliseconds.
        expired_at_millis: i64,
        /// The last refresh error (provider message included).
        last_error: Box<Error>,
    },

    /// Waiting for the provider took longer than the provider timeout.
    #[error("timed out after {waited_ms} ms waiting for credential provider '{provider}'")]
    Timeout {
        /// The provider's id.
        provider: String,
        /// How long the caller waited, milliseconds.
        waited_ms: u64,
    },

    /// An error from the object store (not found, precondition, I/O, permission...). When the
    /// failure was an HTTP request, the message is one line naming the method, the location,
    /// the status and the endpoint's error code and message (see [`RequestFailure`]), e.g.
    /// `GET s3://bucket/path: 403 AccessDenied: Access Denied`.
    #[error("{}", object_store_message(.0))]
    ObjectStore(Arc<object_store::Error>),

    /// The store or session was closed.
    #[error("the {0} is closed")]
    Closed(&'static str),

    /// A whole-object read received bytes whose checksum differs from the one the service
    /// stores for the object. `get` and `get_into` read the object once more first
    /// ([`WHOLE_READ_ATTEMPTS`]) and return no byte of a mismatched read; a body streamed to
    /// its end fails at its end.
    #[error("GET {location}: checksum mismatch ({algorithm}): the service stores {expected}, the bytes received have {actual}: something between the service and this process, or the service itself, altered them (option 'checksums' turns checking off)")]
    ChecksumMismatch {
        /// The object, e.g. `s3://bucket/path`.
        location: String,
        /// The algorithm: `CRC64NVME`, `CRC32C` or `MD5`.
        algorithm: &'static str,
        /// The stored checksum (base64, as the service's header carries it).
        expected: String,
        /// The checksum of the bytes received the second time (base64).
        actual: String,
    },

    /// The endpoint ignores create-only conditions (`If-None-Match: *`): a probe written twice
    /// with create-only PUTs was accepted twice, so commits written there could overwrite each
    /// other without an error. Refused before any commit is written (see
    /// `VendedStore::put_commit`).
    #[error("refusing to commit {location}: {endpoint} ignores create-only writes ({condition}): a probe object written twice with the condition was accepted both times, so concurrent commits would overwrite each other silently; use an endpoint that honours conditional writes (Amazon S3, Azure Blob Storage, Google Cloud Storage), or, on this endpoint, a single writer per table or a commit coordinator such as Delta's S3DynamoDBLogStore")]
    ConditionIgnored {
        /// The commit that was refused, e.g. `s3://bucket/table/_delta_log/00000000000000000003.json`.
        location: String,
        /// The endpoint, for messages: `the endpoint <its option's value>`, or the cloud's
        /// default service.
        endpoint: String,
        /// The create-only condition the endpoint ignored (`If-None-Match: *` on S3 and Azure,
        /// `x-goog-if-generation-match: 0` on GCS).
        condition: &'static str,
    },

    /// A write failed with `cause`, and its multipart upload could not be aborted (yet), so
    /// parts it uploaded may still be stored (and billed) at `location`, invisible to reads and
    /// listings. `message` says so, names the upload and what becomes of it. The kind,
    /// retryability and provider cause are those of `cause`.
    #[error("{cause}; {message}")]
    UploadLeft {
        /// Where the object was being written, e.g. `s3://bucket/path`.
        location: String,
        /// The multipart upload's id (S3, GCS); `None` where the store has none (Azure: the
        /// parts are the blob's uncommitted blocks).
        upload_id: Option<String>,
        /// What is left and what becomes of it.
        message: String,
        /// Why the write failed.
        cause: Box<Error>,
    },
}

/// What kind of failure an [`Error`] is: the part a program acts on. Decided here, in the core;
/// the JNI binding maps each kind to one Java exception class and decides nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The object does not exist.
    NotFound,
    /// The object exists already (create-only writes, `copy_if_not_exists`).
    AlreadyExists,
    /// A precondition failed (ETag or version mismatch, not modified).
    Precondition,
    /// The credentials were refused by the endpoint (after one retry with fresh ones), lack a
    /// permission, or could not be obtained from the provider.
    Credentials,
    /// The URI, an option, or an argument cannot be used.
    InvalidOptions,
    /// A provider or a request took longer than allowed.
    Timeout,
    /// A failure that may heal by itself (a 5xx answer, a dropped connection): retrying later
    /// makes sense.
    Transient,
    /// Any other I/O failure (an unexpected answer, an unsupported operation).
    Io,
    /// The store or session was closed.
    Closed,
    /// The bytes received do not have the checksum the service stores for them (see
    /// [`Error::ChecksumMismatch`]).
    Integrity,
}

impl ErrorKind {
    /// The kind's name in `UPPER_SNAKE_CASE`, as the Java binding's `StorageException.Kind` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::AlreadyExists => "ALREADY_EXISTS",
            ErrorKind::Precondition => "PRECONDITION",
            ErrorKind::Credentials => "CREDENTIALS",
            ErrorKind::InvalidOptions => "INVALID_OPTIONS",
            ErrorKind::Timeout => "TIMEOUT",
            ErrorKind::Transient => "TRANSIENT",
            ErrorKind::Io => "IO",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::Integrity => "INTEGRITY",
        }
    }
}

impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        // A refresher error travels through object_store as an error source: unwrap it so
        // callers see the original kind (provider failure, expiry, timeout).
        let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&e);
        while let Some(s) = source {
            if let Some(inner) = s.downcast_ref::<Error>() {
                return inner.clone();
            }
            source = s.source();
        }
        Error::ObjectStore(Arc::new(e))
    }
}

impl Error {
    /// Builds an [`Error::InvalidOption`].
    pub fn invalid_option(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidOption {
            key: key.into(),
            message: message.into(),
        }
    }

    /// Builds an [`Error::Provider`] without a source.
    pub fn provider(provider: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Provider {
            provider: provider.into(),
            message: message.into(),
            source: None,
            retryable: true,
        }
    }

    /// Converts this error into an `object_store::Error` (for the credential provider
    /// boundary); [`From<object_store::Error>`] recovers it.
    pub fn into_object_store(self) -> object_store::Error {
        object_store::Error::Generic {
            store: "vended-storage",
            source: Box::new(self),
        }
    }

    /// The first provider-supplied error source in this error's chain, if any (a Java
    /// throwable for providers implemented in Java).
    pub fn provider_source(&self) -> Option<&SharedSource> {
        match self {
            Error::Provider { source, .. } => source.as_ref(),
            Error::CredentialsExpired { last_error, .. } => last_error.provider_source(),
            Error::UploadLeft { cause, .. } => cause.provider_source(),
            _ => None,
        }
    }

    /// What kind of failure this is (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidOption { .. } | Error::InvalidUri { .. } => ErrorKind::InvalidOptions,
            Error::Provider { .. } | Error::CredentialsExpired { .. } => ErrorKind::Credentials,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Closed(_) => ErrorKind::Closed,
            Error::ChecksumMismatch { .. } => ErrorKind::Integrity,
            Error::ConditionIgnored { .. } => ErrorKind::Io,
            Error::ObjectStore(e) => object_store_kind(e),
            Error::UploadLeft { cause, .. } => cause.kind(),
        }
    }

    /// Whether a whole-object read that failed with this error is to be read once more before
    /// the error is reported: a checksum mismatch on the first of
    /// [`WHOLE_READ_ATTEMPTS`] reads (the checksums of the `cloud::integrity` module).
    pub fn rereads_whole_object(&self, attempt: usize) -> bool {
        matches!(self, Error::ChecksumMismatch { .. }) && attempt < WHOLE_READ_ATTEMPTS
    }

    /// Whether trying the same call again later may succeed without any change: transient
    /// failures and timeouts, and provider failures the provider marks retryable (see
    /// [`Error::Provider`]'s `retryable`).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Provider { retryable, .. } => *retryable,
            Error::CredentialsExpired { last_error, .. } => last_error.is_retryable(),
            Error::UploadLeft { cause, .. } => cause.is_retryable(),
            other => matches!(other.kind(), ErrorKind::Transient | ErrorKind::Timeout),
        }
    }
}

/// The kind of an `object_store` error, from its variant and, for other failures, the
/// transport error kind (`object_store::client::HttpError`) found among its sources.
fn object_store_kind(e: &object_store::Error) -> ErrorKind {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => ErrorKind::NotFound,
        E::AlreadyExists { .. } => ErrorKind::AlreadyExists,
        E::Precondition { .. } | E::NotModified { .. } => ErrorKind::Precondition,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => ErrorKind::Credentials,
        E::InvalidPath { .. } | E::UnknownConfigurationKey { .. } => ErrorKind::InvalidOptions,
        _ => {
            let parsed;
            let failure = match RequestFailure::find(e) {
                Some(f) => Some(f),
                None => {
                    parsed = RequestFailure::parse(e);
                    parsed.as_ref()
                }
            };
            if let Some(f) = failure {
                return match (f.status, f.transport) {
                    (Some(s), _) if s >= 500 || s == 429 || s == 408 => ErrorKind::Transient,
                    // A refusal that object_store reports as Generic (listings, bulk calls):
                    // the same kind as a PermissionDenied or Unauthenticated on other calls.
                    (Some(401 | 403), _) => ErrorKind::Credentials,
                    (Some(404), _) => ErrorKind::NotFound,
                    (Some(409), _) => ErrorKind::AlreadyExists,
                    (Some(412 | 304), _) => ErrorKind::Precondition,
                    (Some(_), _) => ErrorKind::Io,
                    (None, Some(HttpErrorKind::Timeout)) => ErrorKind::Timeout,
                    (
                        None,
                        Some(
                            HttpErrorKind::Connect
                            | HttpErrorKind::Request
                            | HttpErrorKind::Interrupted,
                        ),
                    ) => ErrorKind::Transient,
                    (None, _) => ErrorKind::Io,
                };
            }
            let mut source: Option<&(dyn std::error::Error + 'static)> =
                std::error::Error::source(e);
            while let Some(s) = source {
                if let Some(h) = s.downcast_ref::<HttpError>() {
                    return match h.kind() {
                        HttpErrorKind::Timeout => ErrorKind::Timeout,
                        HttpErrorKind::Connect
                        | HttpErrorKind::Request
                        | HttpErrorKind::Interrupted => ErrorKind::Transient,
                        _ => ErrorKind::Io,
                    };
                }
                source = s.source();
            }
            ErrorKind::Io
        }
    }
}

/// The one-line message of an `object_store` error: the [`RequestFailure`] in its chain if
/// there is one (found or parsed), else `object_store`'s own text; read through the
/// well-known secret patterns ([`crate::redact::scrub_patterns`]) unless a cloud store already
/// scrubbed it (with its own secret values too).
fn object_store_message(e: &object_store::Error) -> String {
    if let Some(f) = RequestFailure::find(e) {
        return f.to_string();
    }
    let scrub = |t: &str| crate::redact::scrub_patterns(t).into_owned();
    match RequestFailure::parse_scrubbed(e, &scrub) {
        Some(f) => f.to_string(),
        None => scrub(&e.to_string()),
    }
}

/// The text of a panic payload (`&str` and `String` payloads; others generically).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// `millis` (epoch ms) as an RFC 3339 UTC time with milliseconds, e.g.
/// `2026-12-02T05:25:26.123Z`, for messages read by people; the raw number when out of range.
fn utc_time(millis: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(millis).map_or_else(
        || millis.to_string(),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )
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

    fn generic(text: &'static str) -> Error {
        Error::from(object_store::Error::Generic {
            store: "S3",
            source: Box::new(Answer(text)),
        })
    }

    #[test]
    fn a_generic_refusal_has_the_kind_of_its_status() {
        let denied = generic(
            "Error performing GET http://127.0.0.1/b?list-type=2 in 1ms - Server returned non-2xx status code: 403 Forbidden: <Error><Code>AccessDenied</Code><Message>no</Message></Error>",
        );
        assert_eq!(denied.kind(), ErrorKind::Credentials);
        assert!(!denied.is_retryable());
        let busy = generic(
            "Error performing GET http://127.0.0.1/b in 1ms, after 2 retries, max_retries: 2, retry_timeout: 3s  - Server returned non-2xx status code: 503 Service Unavailable: ",
        );
        assert_eq!(busy.kind(), ErrorKind::Transient);
        assert!(busy.is_retryable());
    }

    #[test]
    fn an_expiry_in_a_message_is_a_utc_time_and_the_epoch_number() {
        let e = Error::CredentialsExpired {
            provider: "p".into(),
            expired_at_millis: 1_796_188_957_552,
            last_error: Box::new(Error::provider("p", "catalog down")),
        };
        let text = e.to_string();
        assert!(
            text.contains("expired at 2026-12-02T05:22:37.552Z (1796188957552 epoch ms)"),
            "{text}"
        );
        assert_eq!(utc_time(i64::MAX), i64::MAX.to_string());
    }
}
