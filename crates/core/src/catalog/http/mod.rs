//! The HTTP client shared by the catalog providers: sensitive headers, one timeout, bounded
//! bodies, and failures turned into [`CatalogError`]s that never contain a header value; plus
//! [`Json`], the serde shape the protocols' wire types read their fields through.

use std::fmt;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

use super::{CatalogError, CatalogErrorKind};
use crate::error::{Error, Result};
use crate::redact::Scrubber;

mod json;

pub(crate) use json::{Json, Scalar, ScalarMap};

/// Largest answer read from a catalog: 8 MiB.
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Longest catalog error text quoted in a message.
const MAX_QUOTED_CHARS: usize = 500;

/// Extracts `(message, code)` from a catalog's error body (its raw bytes; any shape).
pub(crate) type ErrorBodyParser = fn(&[u8]) -> (Option<String>, Option<String>);

/// An HTTP client for one catalog provider.
pub(crate) struct CatalogHttp {
    client: reqwest::Client,
    headers: HeaderMap,
    /// Header values (and their words of 8 characters or more) to scrub from any text we quote.
    secrets: Scrubber,
    timeout: Duration,
    catalog: &'static str,
}

impl fmt::Debug for CatalogHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.keys().map(|k| k.as_str()).collect();
        f.debug_struct("CatalogHttp")
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl CatalogHttp {
    /// Builds the client. `headers` are sent with every request, marked sensitive.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `headers`) for a header name or value HTTP does not allow
    /// (the message names the header, never its value), a zero timeout, or when the HTTP client
    /// cannot be built.
    pub(crate) fn new(
        catalog: &'static str,
        headers: &[(String, String)],
        timeout: Duration,
    ) -> Result<Self> {
        if timeout.is_zero() {
            return Err(Error::invalid_option(
                "timeout",
                "the catalog timeout must be positive",
            ));
        }
        let mut map = HeaderMap::new();
        let mut values = Vec::new();
        for (name, value) in headers {
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                Error::invalid_option(
                    "headers",
                    format!("{name:?} is not a valid HTTP header name"),
                )
            })?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                Error::invalid_option(
                    "headers",
                    format!("the value of header '{name}' is not a valid HTTP header value"),
                )
            })?;
            v.set_sensitive(true);
            map.append(n, v);
            values.push(value.as_str());
        }
        // Values of 4 characters or more, and the token of "Bearer <token>" and the like (not
        // short words such as "Bearer"): the one scrubber of `crate::redact`.
        let secrets = Scrubber::new(values, 4);
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            // Never follow redirects: headers (tokens, API keys) must not travel to another host.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("vended-storage/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                Error::invalid_option("headers", format!("cannot build the HTTP client: {e}"))
            })?;
        Ok(Self {
            client,
            headers: map,
            secrets,
            timeout,
            catalog,
        })
    }

    /// The underlying client (to build requests).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Replaces every header value (and every long word of one) in `text` by `***`, and the
    /// well-known secret patterns (see [`crate::redact`]).
    pub(crate) fn scrub(&self, text: &str) -> String {
        self.secrets.scrub(text)
    }

    fn error(
        &self,
        kind: CatalogErrorKind,
        operation: &str,
        status: Option<u16>,
        code: Option<String>,
        message: String,
    ) -> CatalogError {
        CatalogError {
            kind,
            catalog: self.catalog,
            operation: operation.to_string(),
            status,
            code: code.map(|c| truncate(&self.scrub(&c), 100)),
            message: truncate(&self.scrub(&message), MAX_QUOTED_CHARS),
        }
    }

    /// Sends `request` (with the configured headers) and decodes the JSON object of a 2xx
    /// response as `T` (see [`decode_object`]; `expected` names it in messages, e.g. "an
    /// object"). Other statuses become errors carrying the status and the catalog's message as
    /// `parse_error` extracts it from the body.
    pub(crate) async fn send_json<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        operation: &str,
        expected: &str,
        parse_error: ErrorBodyParser,
    ) -> Result<T, CatalogError> {
        let response = request
            .headers(self.headers.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| self.transport_error(e, operation, None))?;
        let status = response.status();
        let body = self.read_body(response, operation).await?;
        if !status.is_success() {
            return Err(self.status_error(status.as_u16(), &body, operation, parse_error));
        }
        decode_object(&body, expected).map_err(|(kind, message)| {
            self.error(kind, operation, Some(status.as_u16()), None, message)
        })
    }

    async fn read_body(
        &self,
        mut response: reqwest::Response,
        operation: &str,
    ) -> Result<Vec<u8>, CatalogError> {
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_error(e, operation, Some(status)))?
        {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(self.error(
                    CatalogErrorKind::MalformedResponse,
                    operation,
                    Some(status),
                    None,
                    format!("the answer is larger than {MAX_BODY_BYTES} bytes"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn transport_error(
        &self,
        e: reqwest::Error,
        operation: &str,
        status: Option<u16>,
    ) -> CatalogError {
        let e = e.without_url();
        if e.is_timeout() {
            return self.error(
                CatalogErrorKind::Timeout,
                operation,
                status,
                None,
                format!("no answer within {} ms (timeout)", self.timeout.as_millis()),
            );
        }
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        let what = if e.is_connect() {
            "cannot connect"
        } else {
            "request failed"
        };
        self.error(
            CatalogErrorKind::Transport,
            operation,
            status,
            None,
            format!("{what}: {text}"),
        )
    }

    fn status_error(
        &self,
        status: u16,
        body: &[u8],
        operation: &str,
        parse_error: ErrorBodyParser,
    ) -> CatalogError {
        let kind = match status {
            404 => CatalogErrorKind::NotFound,
            401 => CatalogErrorKind::Unauthorized,
            403 => CatalogErrorKind::Forbidden,
            500..=599 => CatalogErrorKind::ServerError,
            _ => CatalogErrorKind::ClientError,
        };
        let (message, code) = parse_error(body);
        let message = message.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            if text.is_empty() {
                "(empty error body)".to_string()
            } else {
                text.to_string()
            }
        });
        self.error(kind, operation, Some(status), code, message)
    }
}

/// Decodes a successful answer: a JSON object read as `T`. The failures are
/// [`CatalogErrorKind::MalformedResponse`] with a message that never quotes the body (a
/// successful answer may hold credentials).
pub(crate) fn decode_object<T: DeserializeOwned>(
    body: &[u8],
    expected: &str,
) -> std::result::Result<T, (CatalogErrorKind, String)> {
    let malformed = |m: String| (CatalogErrorKind::MalformedResponse, m);
    match serde_json::from_slice::<Json<T>>(body) {
        Ok(Json::Object(t)) => Ok(t),
        Ok(other) => Err(malformed(format!(
            "the answer is a JSON {}, expected {expected}",
            other.kind()
        ))),
        Err(_) if body.iter().all(u8::is_ascii_whitespace) => Err(malformed(
            "the answer is empty, expected a JSON object".to_string(),
        )),
        Err(e) if e.is_data() => Err(malformed(format!(
            "the answer is not a valid {expected} ({e})"
        ))),
        Err(e) => Err(malformed(format!(
            "the answer is not valid JSON ({e}; {} bytes)",
            body.len()
        ))),
    }
}

/// Reads an error body as `T` when it is a JSON object; `None` for anything else.
pub(crate) fn decode_error_body<T: DeserializeOwned>(body: &[u8]) -> Option<T> {
    match serde_json::from_slice::<Json<T>>(body) {
        Ok(Json::Object(t)) => Some(t),
        _ => None,
    }
}
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests;
