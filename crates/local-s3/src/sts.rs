//! STS `AssumeRole` as an s3s custom route: `POST /` with a form body
//! `Action=AssumeRole&Version=2011-06-15&RoleArn=...&RoleSessionName=...&DurationSeconds=N`.
//!
//! s3s verifies a SigV4 signature (service `sts` or `s3`) before the route runs. The request
//! may be signed with the root key, or unsigned (a test convenience; real STS requires a
//! signature). Requests signed with a temporary key are refused with `AccessDenied`.
//!
//! Non-standard optional parameters shape the issued key: `Scope=bucket/prefix`,
//! `Access=read|read-write` (default `read-write`) and `List=true|false` (default `true`); see
//! [`crate::Permissions`]. A bad value is 400 `ValidationError` naming the parameter.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::header::CONTENT_TYPE;
use hyper::http::Extensions;
use hyper::{HeaderMap, Method, StatusCode, Uri};
use s3s::route::S3Route;
use s3s::{Body, S3Error, S3ErrorCode, S3Request, S3Response, S3Result};

use crate::auth::note;
use crate::state::{Scope, State};
use crate::types::REASON_DENIED;

const MAX_BODY: usize = 64 * 1024;
const DEFAULT_DURATION_SECONDS: u64 = 3600;
const STS_NS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";

pub(crate) struct AssumeRoleRoute {
    pub state: Arc<State>,
}

fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        })
}

/// Escapes text for XML element content.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// Formats epoch milliseconds as ISO-8601 UTC with milliseconds, e.g. `2025-01-02T03:04:05.678Z`.
pub(crate) fn iso8601_millis(epoch_millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(epoch_millis)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn request_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let n: u128 = rng.random();
    format!("{n:032x}")
}

fn xml_response(status: StatusCode, xml: String) -> S3Response<Body> {
    let mut resp = S3Response::with_status(Body::from(xml), status);
    resp.headers.insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/xml"),
    );
    resp
}

/// STS-style error document (`ErrorResponse/Error/{Type,Code,Message}`).
fn sts_error(status: StatusCode, code: &str, message: &str) -> S3Response<Body> {
    let kind = if status.is_client_error() {
        "Sender"
    } else {
        "Receiver"
    };
    let xml = format!(
        "<ErrorResponse xmlns=\"{STS_NS}\"><Error><Type>{kind}</Type><Code>{}</Code><Message>{}</Message></Error><RequestId>{}</RequestId></ErrorResponse>",
        xml_escape(code),
        xml_escape(message),
        request_id()
    );
    xml_response(status, xml)
}

struct Params(Vec<(String, String)>);

impl Params {
    fn parse(uri: &Uri, body: &Bytes) -> Params {
        let mut pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
        if let Some(query) = uri.query() {
            pairs.extend(form_urlencoded::parse(query.as_bytes()).into_owned());
        }
        Params(pairs)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl AssumeRoleRoute {
    fn assume_role(&self, params: &Params) -> S3Response<Body> {
        match params.get("Action") {
            Some("AssumeRole") => {}
            Some(other) => {
                return sts_error(
                    StatusCode::BAD_REQUEST,
                    "InvalidAction",
                    &format!("Could not find operation {other} for version 2011-06-15"),
                );
            }
            None => return sts_error(StatusCode::BAD_REQUEST, "MissingAction", "Missing Action"),
        }
        let duration = match params.get("DurationSeconds") {
            None => DEFAULT_DURATION_SECONDS,
            Some(text) => {
                match text.trim().parse::<u64>() {
                    Ok(secs) if secs >= 1 => secs,
                    _ => {
                        return sts_error(
                        StatusCode::BAD_REQUEST,
                        "ValidationError",
                        &format!("DurationSeconds must be a whole number of seconds >= 1, got {text:?}"),
                    );
                    }
                }
            }
        };
        let scope = match params
            .get("Scope")
            .filter(|s| !s.is_empty())
            .map(Scope::parse)
            .transpose()
        {
            Ok(scope) => scope,
            Err(message) => return sts_error(StatusCode::BAD_REQUEST, "ValidationError", &message),
        };
        let permissions = match crate::permissions::parse(
            params.get("Access"),
            params.get("List"),
            "Access",
            "List",
        ) {
            Ok(permissions) => permissions,
            Err(message) => return sts_error(StatusCode::BAD_REQUEST, "ValidationError", &message),
        };
        let role_arn = params
            .get("RoleArn")
            .unwrap_or("arn:aws:iam::000000000000:role/local-s3");
        let session = params.get("RoleSessionName").unwrap_or("local-s3-session");
        let role_name = role_arn.rsplit('/').next().unwrap_or(role_arn);
        let creds = self
            .state
            .issue(Duration::from_secs(duration), scope, permissions);
        let xml = format!(
            "<AssumeRoleResponse xmlns=\"{STS_NS}\">\
<AssumeRoleResult>\
<Credentials>\
<AccessKeyId>{}</AccessKeyId>\
<SecretAccessKey>{}</SecretAccessKey>\
<SessionToken>{}</SessionToken>\
<Expiration>{}</Expiration>\
</Credentials>\
<AssumedRoleUser>\
<AssumedRoleId>AROALOCALS3:{}</AssumedRoleId>\
<Arn>arn:aws:sts::000000000000:assumed-role/{}/{}</Arn>\
</AssumedRoleUser>\
</AssumeRoleResult>\
<ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata>\
</AssumeRoleResponse>",
            creds.access_key_id,
            creds.secret_access_key,
            creds.session_token,
            iso8601_millis(creds.expires_at_millis),
            xml_escape(session),
            xml_escape(role_name),
            xml_escape(session),
            request_id()
        );
        xml_response(StatusCode::OK, xml)
    }
}

#[async_trait::async_trait]
impl S3Route for AssumeRoleRoute {
    fn is_match(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        _: &mut Extensions,
    ) -> bool {
        uri.path() == "/"
            && ((method == Method::POST && is_form(headers))
                || crate::auth::query_param(uri, "Action").as_deref() == Some("AssumeRole"))
    }

    async fn check_access(&self, req: &mut S3Request<Body>) -> S3Result<()> {
        let allowed = match &req.credentials {
            None => true,
            Some(c) => self.state.is_root(&c.access_key),
        };
        if allowed {
            note(|ctx| ctx.outcome = Some(Ok(())));
            Ok(())
        } else {
            note(|ctx| ctx.outcome = Some(Err(REASON_DENIED)));
            Err(S3Error::with_message(
                S3ErrorCode::AccessDenied,
                "AssumeRole must be signed with the root key (or sent unsigned)",
            ))
        }
    }

    async fn call(&self, mut req: S3Request<Body>) -> S3Result<S3Response<Body>> {
        let body = match req.input.store_all_limited(MAX_BODY).await {
            Ok(body) => body,
            Err(err) => {
                return Ok(sts_error(
                    StatusCode::BAD_REQUEST,
                    "ValidationError",
                    &format!("cannot read request body: {err}"),
                ));
            }
        };
        let params = Params::parse(&req.uri, &body);
        Ok(self.assume_role(&params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_expiration_with_millis() {
        assert_eq!(
            iso8601_millis(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z"
        );
    }

    #[test]
    fn escapes_xml() {
        assert_eq!(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }
}
