//! The crate's error type.
//!
//! Errors are cheap to clone (sources are behind `Arc`) because one failed refresh is reported
//! to every caller that waited on it. No variant ever carries a secret: messages name option
//! keys, never their values when the key is secret.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use object_store::client::{HttpError, HttpErrorKind};

/// A shareable error source (for example a Java throwable captured by the JNI bridge).
pub type SharedSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    #[error("credentials from provider '{provider}' expired at {expired_at_millis} (epoch ms) and could not be refreshed: {last_error}")]
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
            Error::ObjectStore(e) => object_store_kind(e),
        }
    }

    /// Whether trying the same call again later may succeed without any change: transient
    /// failures and timeouts, and provider failures the provider marks retryable (see
    /// [`Error::Provider`]'s `retryable`).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Provider { retryable, .. } => *retryable,
            Error::CredentialsExpired { last_error, .. } => last_error.is_retryable(),
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
/// there is one (found or parsed), else `object_store`'s own text.
fn object_store_message(e: &object_store::Error) -> String {
    if let Some(f) = RequestFailure::find(e) {
        return f.to_string();
    }
    match RequestFailure::parse(e) {
        Some(f) => f.to_string(),
        None => e.to_string(),
    }
}

/// One HTTP request of an object store that failed, reduced to what a program acts on: the
/// method, what it addressed, the answer's status and the endpoint's error code and message
/// (no raw XML, no request ids), or the transport failure, and how many attempts were made.
///
/// Built from `object_store` 0.14's request error (`client::retry::RetryError`, a private
/// type, so read from its `Display` text: `Error performing {METHOD} {url} in {elapsed}[,
/// after {n} retries, max_retries: {m}, retry_timeout: {t} ] - {reason}`) and the S3/Azure
/// error document of the body (`<Error><Code>..</Code><Message>..</Message>..</Error>`, see
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html>). Cloud stores put it
/// into the errors they return (as the error source, keeping the original error as its source)
/// with the location spelled as the user wrote it (`s3://bucket/path`).
#[derive(Debug)]
pub struct RequestFailure {
    /// The HTTP method, e.g. `GET`.
    pub method: String,
    /// What was addressed: `s3://bucket/path` where the store knows it, else the request URL
    /// (`REDACTED` for requests `object_store` marks sensitive).
    pub location: String,
    /// The answer's HTTP status; `None` when no answer came (timeout, connection failure).
    pub status: Option<u16>,
    /// The endpoint's error code, e.g. `AccessDenied`, when the answer carried one (answers to
    /// `HEAD` never do: they have no body).
    pub code: Option<String>,
    /// The endpoint's error message, or the first line of a body that is not an error
    /// document; for transport failures the innermost error's text.
    pub message: Option<String>,
    /// The kind of transport failure when no answer came.
    pub transport: Option<HttpErrorKind>,
    /// How many times the request was sent (`object_store` retries 5xx answers, 429, and
    /// transport failures of idempotent requests).
    pub attempts: usize,
    /// Time from the first attempt until `object_store` gave up.
    pub elapsed: Duration,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

const HTTP_METHODS: [&str; 7] = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"];

impl RequestFailure {
    /// The failure already placed in `e`'s source chain by a cloud store, if any.
    pub fn find<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a RequestFailure> {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(c) = current {
            if let Some(f) = c.downcast_ref::<RequestFailure>() {
                return Some(f);
            }
            current = c.source();
        }
        None
    }

    /// Reads the failed request out of `e`'s source chain (the first error whose text is
    /// `object_store`'s request error); `None` when `e` is no HTTP request failure (for example
    /// a credential provider error). The result has no source and the request URL as location.
    pub fn parse(e: &(dyn std::error::Error + 'static)) -> Option<RequestFailure> {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(c) = current {
            if c.downcast_ref::<Error>().is_some() {
                // A credential provider's error travelling through object_store.
                return None;
            }
            if let Some(mut f) = Self::parse_text(&c.to_string()) {
                let mut inner = c.source();
                while let Some(s) = inner {
                    if let Some(h) = s.downcast_ref::<HttpError>() {
                        f.transport = Some(h.kind());
                    }
                    if s.source().is_none() && f.status.is_none() {
                        f.message = Some(one_line(&s.to_string()));
                    }
                    inner = s.source();
                }
                return Some(f);
            }
            current = c.source();
        }
        None
    }

    fn parse_text(text: &str) -> Option<RequestFailure> {
        let rest = text.strip_prefix("Error performing ")?;
        let (method, rest) = rest.split_once(' ')?;
        if !HTTP_METHODS.contains(&method) {
            return None;
        }
        let (url, rest) = rest.split_once(" in ")?;
        let (meta, reason) = rest.split_once(" - ")?;
        let elapsed = parse_debug_duration(meta.split(',').next().unwrap_or("").trim());
        let retries = meta
            .split_once(", after ")
            .and_then(|(_, r)| r.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        let mut f = RequestFailure {
            method: method.to_string(),
            location: url.to_string(),
            status: None,
            code: None,
            message: None,
            transport: None,
            attempts: retries + 1,
            elapsed: elapsed.unwrap_or_default(),
            source: None,
        };
        let body = if let Some(r) = reason.strip_prefix("Server returned non-2xx status code: ") {
            f.status = r.get(..3).and_then(|s| s.parse().ok());
            r.split_once(": ").map(|(_, b)| b).unwrap_or("")
        } else if let Some(b) = reason.strip_prefix("Server returned error response: ") {
            // An error document in a 200 answer (S3 may do this); object_store keeps no status.
            b
        } else {
            f.message = Some(one_line(reason));
            ""
        };
        if !body.trim().is_empty() {
            f.code = xml_element(body, "Code");
            f.message = xml_element(body, "Message")
                .or_else(|| (!body.trim_start().starts_with('<')).then(|| one_line(body)));
        }
        Some(f)
    }

    /// Sets the location to print (e.g. `s3://bucket/path`).
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = location.into();
        self
    }

    /// Sets the error this failure was read from (kept as this error's source).
    pub fn with_source(
        mut self,
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    ) -> Self {
        self.source = Some(source);
        self
    }
}

impl fmt::Display for RequestFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.method, self.location)?;
        match self.status {
            Some(status) => {
                write!(f, "{status}")?;
                match (&self.code, &self.message) {
                    (Some(code), Some(message)) => write!(f, " {code}: {message}")?,
                    (Some(code), None) => write!(f, " {code}")?,
                    (None, Some(message)) => write!(f, " {}: {message}", reason(status))?,
                    (None, None) if self.method == "HEAD" => write!(
                        f,
                        " {} (an answer to HEAD carries no error code)",
                        reason(status)
                    )?,
                    (None, None) => write!(f, " {} (no error document)", reason(status))?,
                }
                if self.attempts > 1 {
                    write!(
                        f,
                        " (gave up after {}, {} attempts)",
                        seconds(self.elapsed),
                        self.attempts
                    )?;
                }
                Ok(())
            }
            None => {
                let what = match self.transport {
                    Some(HttpErrorKind::Timeout) => "timed out",
                    Some(HttpErrorKind::Connect) => "could not connect",
                    Some(HttpErrorKind::Request) => "could not send the request",
                    Some(HttpErrorKind::Interrupted) => "connection interrupted",
                    Some(HttpErrorKind::Decode) => "could not read the answer",
                    _ => "request failed",
                };
                let attempts = if self.attempts == 1 {
                    "attempt"
                } else {
                    "attempts"
                };
                write!(
                    f,
                    "{what} after {}, {} {attempts}",
                    seconds(self.elapsed),
                    self.attempts
                )?;
                if let Some(m) = &self.message {
                    write!(f, " ({m})")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RequestFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// The reason phrase of an HTTP status (RFC 9110 §15), for the statuses object stores answer.
fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        412 => "Precondition Failed",
        416 => "Range Not Satisfiable",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "error",
    }
}

/// `1 s`, `1.5 s`, `250 ms`.
fn seconds(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        return format!("{} ms", d.as_millis());
    }
    let s = format!("{:.1}", d.as_secs_f64());
    format!("{} s", s.strip_suffix(".0").unwrap_or(&s))
}

/// A `Duration`'s `Debug` text (`1.5s`, `250.1ms`, `12µs`, `7ns`) back to a `Duration`.
fn parse_debug_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" | "us" => 1e-6,
        "ns" => 1e-9,
        _ => return None,
    };
    Duration::try_from_secs_f64(value * scale).ok()
}

/// The text of the first `<name>` element of an XML document, entities decoded.
fn xml_element(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{name}>"))?;
    let text = xml[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    let text = one_line(&text);
    (!text.is_empty()).then_some(text)
}

/// The first non-empty line of `text`, trimmed, at most 300 characters.
fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
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
