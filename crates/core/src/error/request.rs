//! [`RequestFailure`]: the reading of `object_store` request errors (method, location, status,
//! the endpoint's error code and message, transport failure, attempts), and [`Missing`]: what
//! a 404 answer says is missing.

use std::fmt;
use std::time::Duration;

use object_store::client::{HttpError, HttpErrorKind};

use super::Error;

/// One HTTP request of an object store that failed, reduced to what a program acts on: the
/// method, what it addressed, the answer's status and the endpoint's error code and message
/// (no raw XML, no request ids), or the transport failure, and how many attempts were made.
///
/// Built from `object_store` 0.14's request error (`client::retry::RetryError`, a private
/// type, so read from its `Display` text: `Error performing {METHOD} {url} in {elapsed}[,
/// after {n} retries, max_retries: {m}, retry_timeout: {t} ] - {reason}`) and the S3/Azure
/// error document of the body (`<Error><Code>..</Code><Message>..</Message>..</Error>`, see
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html>) or the GCS JSON API's
/// (`{"error":{"code":404,"message":"..","errors":[{"reason":"notFound",..}]}}`, see
/// <https://cloud.google.com/storage/docs/json_api/v1/status-codes>). Cloud stores put it into
/// the errors they return (as the error source, keeping the original error as its source) with
/// the location spelled in the store's own terms (`s3://bucket/path`, `az://container/path`,
/// `gs://bucket/path`; see the cloud module's `LocatedStore`), never the request URL.
///
/// Its `Display` is one line, `<METHOD> <location>: <status> <code>: <message>`, e.g.
/// `GET s3://b/k: 403 AccessDenied: Access Denied`; `LIST` for listings; for a 404 whose cause is
/// known the message says what is missing (`bucket 'b' does not exist`, `no object at
/// s3://b/k`).
#[derive(Debug)]
pub struct RequestFailure {
    /// The HTTP method, e.g. `GET`.
    pub method: String,
    /// The store operation when the method does not tell it, e.g. `LIST` (a `GET` of the
    /// bucket) or `COPY`; printed instead of the method.
    pub operation: Option<&'static str>,
    /// What was addressed: `s3://bucket/path` (`az://`, `gs://`) as every cloud store names it,
    /// `LIST`'s prefix ending in `/`; only a failure read straight from `object_store` (never
    /// shown by this library's stores) has the request URL, `REDACTED` for requests it marks
    /// sensitive.
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
    /// For a 404: whether the bucket/container or the object is missing, when the answer (or a
    /// probe, for a bodiless `HEAD` answer) told.
    pub missing: Option<Missing>,
    /// How many times the request was sent (`object_store` retries 5xx answers, 429, and
    /// transport failures of idempotent requests).
    pub attempts: usize,
    /// Time from the first attempt until `object_store` gave up.
    pub elapsed: Duration,
    /// For a GET whose answer came but whose body ended before its announced end (the
    /// connection closed or failed while it was read, after `object_store` asked again for
    /// the rest as often as its retries allow): the range and how far it got.
    pub body: Option<BodyCut>,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// How far the body of a GET got before it ended early (see [`RequestFailure::body`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyCut {
    /// The bytes of the object the answer announced (start inclusive, end exclusive).
    pub range: std::ops::Range<u64>,
    /// The offset in the object of the first byte that did not arrive.
    pub reached: u64,
}

/// What a 404 answer says is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The bucket or container itself.
    Container {
        /// What the cloud calls it: `bucket` or `container`.
        word: &'static str,
        /// Its name.
        name: String,
    },
    /// The object (its bucket or container exists).
    Object {
        /// Where it was looked for, e.g. `s3://bucket/path`.
        at: String,
    },
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Container { word, name } => write!(f, "{word} '{name}' does not exist"),
            Missing::Object { at } => write!(f, "no object at {at}"),
        }
    }
}

/// The GCS JSON API's error document.
#[derive(serde::Deserialize)]
struct JsonErrorDocument {
    error: JsonError,
}

#[derive(serde::Deserialize)]
struct JsonError {
    message: Option<String>,
    #[serde(default)]
    errors: Vec<JsonErrorItem>,
}

#[derive(serde::Deserialize)]
struct JsonErrorItem {
    reason: Option<String>,
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
        Self::parse_scrubbed(e, &|text| text.to_string())
    }

    /// [`parse`](Self::parse) reading every text of `e`'s chain through `scrub` first (before
    /// it is cut to one line, so no part of a secret survives a cut), and the code and message
    /// read from it once more (after XML entities are decoded); see [`crate::redact`].
    pub fn parse_scrubbed(
        e: &(dyn std::error::Error + 'static),
        scrub: &dyn Fn(&str) -> String,
    ) -> Option<RequestFailure> {
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(c) = current {
            if c.downcast_ref::<Error>().is_some() {
                // A credential provider's error travelling through object_store.
                return None;
            }
            if let Some(mut f) = Self::parse_text(&scrub(&c.to_string())) {
                let mut inner = c.source();
                while let Some(s) = inner {
                    if let Some(h) = s.downcast_ref::<HttpError>() {
                        f.transport = Some(h.kind());
                    }
                    if s.source().is_none() && f.status.is_none() {
                        f.message = Some(one_line(&scrub(&s.to_string())));
                    }
                    inner = s.source();
                }
                f.code = f.code.map(|c| scrub(&c));
                f.message = f.message.map(|m| scrub(&m));
                return Some(f);
            }
            current = c.source();
        }
        None
    }

    /// Reads this failure's code and message through `scrub`, and replaces its source (the
    /// error it was read from, which quotes the endpoint's whole answer) by that source's text
    /// read through `scrub`: what is left prints no secret `scrub` knows (see
    /// [`crate::redact`]).
    pub fn scrub(&mut self, scrub: &dyn Fn(&str) -> String) {
        self.code = self.code.take().map(|c| scrub(&c));
        self.message = self.message.take().map(|m| scrub(&m));
        if let Some(source) = self.source.take() {
            self.source = Some(Box::new(Scrubbed::of(source.as_ref(), scrub)));
        }
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
            operation: None,
            location: url.to_string(),
            status: None,
            code: None,
            message: None,
            missing: None,
            transport: None,
            attempts: retries + 1,
            elapsed: elapsed.unwrap_or_default(),
            body: None,
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
        let body = body.trim();
        if body.starts_with('{') {
            if let Ok(doc) = serde_json::from_str::<JsonErrorDocument>(body) {
                f.code = doc
                    .error
                    .errors
                    .into_iter()
                    .find_map(|e| e.reason)
                    .filter(|r| !r.trim().is_empty());
                f.message = doc
                    .error
                    .message
                    .map(|m| one_line(&m))
                    .filter(|m| !m.is_empty());
                return Some(f);
            }
        }
        if !body.is_empty() {
            f.code = xml_element(body, "Code");
            f.message = xml_element(body, "Message")
                .or_else(|| (!body.starts_with('<')).then(|| one_line(body)));
        }
        Some(f)
    }

    /// A GET of `location` whose body ended at `cut.reached` (see [`RequestFailure::body`]),
    /// with the transport failure's kind and innermost message, if known.
    pub fn body_ended(
        location: String,
        cut: BodyCut,
        transport: Option<HttpErrorKind>,
        message: Option<String>,
    ) -> Self {
        RequestFailure {
            method: "GET".to_string(),
            operation: None,
            location,
            status: None,
            code: None,
            message: message.map(|m| one_line(&m)),
            transport,
            missing: None,
            attempts: 1,
            elapsed: Duration::ZERO,
            body: Some(cut),
            source: None,
        }
    }

    /// Sets the location to print (e.g. `s3://bucket/path`).
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = location.into();
        self
    }

    /// Sets the store operation printed instead of the method (e.g. `LIST`).
    pub fn with_operation(mut self, operation: Option<&'static str>) -> Self {
        self.operation = operation;
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
        let operation = self.operation.unwrap_or(&self.method);
        write!(f, "{operation} {}: ", self.location)?;
        match self.status {
            Some(status) => {
                write!(f, "{status}")?;
                match (&self.code, &self.message) {
                    _ if self.missing.is_some() => {
                        let missing = self.missing.as_ref().expect("checked");
                        match &self.code {
                            Some(code) => write!(f, " {code}: {missing}")?,
                            None => write!(f, " {}: {missing}", reason(status))?,
                        }
                    }
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
            None if self.body.is_some() => {
                let cut = self.body.as_ref().expect("checked");
                let (start, end) = (cut.range.start, cut.range.end);
                write!(
                    f,
                    "the body of bytes {start}..{end} ended early at byte {} ({} of {} bytes received",
                    cut.reached,
                    cut.reached.saturating_sub(start),
                    end - start
                )?;
                match (transport_words(self.transport), &self.message) {
                    (Some(what), Some(m)) => write!(f, "; {what}: {m})"),
                    (Some(what), None) => write!(f, "; {what})"),
                    (None, Some(m)) => write!(f, "; {m})"),
                    (None, None) => write!(f, ")"),
                }
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

/// The text of an error chain read through a scrubber (see [`RequestFailure::scrub`]): every
/// error's message, outermost first, joined by `: `. It has no source.
#[derive(Debug)]
pub struct Scrubbed(pub String);

impl Scrubbed {
    /// The scrubbed text of `e` and its sources.
    pub fn of(e: &(dyn std::error::Error + 'static), scrub: &dyn Fn(&str) -> String) -> Self {
        let mut parts = Vec::new();
        let mut current = Some(e);
        while let Some(c) = current {
            parts.push(scrub(&c.to_string()));
            current = c.source();
        }
        Scrubbed(parts.join(": "))
    }
}

impl fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Scrubbed {}

/// What a transport failure kind says happened, for a body that ended early.
fn transport_words(kind: Option<HttpErrorKind>) -> Option<&'static str> {
    match kind? {
        HttpErrorKind::Timeout => Some("timed out"),
        HttpErrorKind::Connect | HttpErrorKind::Request | HttpErrorKind::Interrupted => {
            Some("the connection ended")
        }
        HttpErrorKind::Decode => Some("could not read the answer"),
        _ => None,
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
