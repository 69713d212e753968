//! Unauthenticated admin API under `/_admin/` (JSON), for Java tests and the demo. The server
//! binds 127.0.0.1 only.
//!
//! | call | answer |
//! |---|---|
//! | `GET /_admin/health` | 200 `{"status":"ok"}` |
//! | `POST /_admin/buckets/{name}` | 200 `{"bucket":"name"}` (idempotent) |
//! | `POST /_admin/credentials?ttl_ms=N[&scope=bucket/prefix][&access=read\|read-write][&list=false]` | 200 `{"access_key_id","secret_access_key","session_token","expires_at_millis","access","list"}` |
//! | `POST /_admin/revoke?access_key_id=X` | 204 |
//! | `GET /_admin/stats` | 200 `{"AKID":{"accepted":..,"rejected":..,"expired":..,"invalid_key":..,"bad_token":..,"denied":..}}` |
//! | `GET /_admin/uploads[?bucket=NAME]` | 200 `[{"bucket","key","upload_id","parts","initiated_millis"}]` |
//! | `GET /_admin/requests` | 200 `[{"access_key_id","method","bucket","key","accepted","reason","status","user_agent"}]` |
//! | `POST /_admin/flip?key=bucket/key&where=request\|response[&offset=N]` | 204 (one bit flip armed, see [`crate::faults`]) |
//! | `GET /_admin/flips` | 200 `{"request":N,"response":N,"armed":N}` |
//! | `POST /_admin/lose-answer?key=bucket/key[&count=N]` | 204 (the next N successful PutObject answers of the key lost, see [`crate::answers`]) |
//! | `GET /_admin/lost-answers` | 200 `{"lost":N,"armed":N}` |
//! | `POST /_admin/ignore-conditions?bucket=B[&ignore=false]` | 204 (PutObject in B ignores If-None-Match / If-Match, or honours them again) |
//!
//! Errors are `{"error":"message"}` with 400 (bad input), 404 (unknown path) or 405.

use std::sync::Arc;
use std::time::Duration;

use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode, Uri};
use s3s::Body;
use serde_json::{json, Map, Value};

use crate::auth::query_param;
use crate::faults::FlipSide;
use crate::state::{Scope, State};
use crate::types::{KeyStats, RequestRecord};

/// Path prefix served by this module.
pub(crate) const ADMIN_PREFIX: &str = "/_admin/";

/// Default lifetime of admin-issued credentials when `ttl_ms` is absent: one hour.
const DEFAULT_TTL_MS: u64 = 3_600_000;
/// Longest accepted `ttl_ms`: 10 years.
const MAX_TTL_MS: u64 = 10 * 366 * 24 * 3_600_000;

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    let mut resp = Response::new(Body::from(value.to_string()));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

fn error(status: StatusCode, message: impl Into<String>) -> Response<Body> {
    json_response(status, &json!({ "error": message.into() }))
}

fn no_content() -> Response<Body> {
    let mut resp = Response::new(Body::empty());
    *resp.status_mut() = StatusCode::NO_CONTENT;
    resp
}

pub(crate) fn stats_json(stats: &KeyStats) -> Value {
    json!({
        "accepted": stats.accepted,
        "rejected": stats.rejected,
        "expired": stats.expired,
        "invalid_key": stats.invalid_key,
        "bad_token": stats.bad_token,
        "denied": stats.denied,
    })
}

fn record_json(record: &RequestRecord) -> Value {
    json!({
        "access_key_id": record.access_key_id,
        "method": record.method,
        "bucket": record.bucket,
        "key": record.key,
        "accepted": record.accepted,
        "reason": record.reason,
        "status": record.status,
        "user_agent": record.user_agent,
    })
}

fn issue(state: &State, uri: &Uri) -> Response<Body> {
    let ttl_ms = match query_param(uri, "ttl_ms") {
        None => DEFAULT_TTL_MS,
        Some(text) => match text.trim().parse::<u64>() {
            Ok(ms) if ms <= MAX_TTL_MS => ms,
            _ => return error(StatusCode::BAD_REQUEST, format!("ttl_ms must be a whole number of milliseconds in 0..={MAX_TTL_MS}, got {text:?}")),
        },
    };
    let scope = match query_param(uri, "scope")
        .filter(|s| !s.is_empty())
        .map(|s| Scope::parse(&s))
        .transpose()
    {
        Ok(scope) => scope,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let permissions = match crate::permissions::parse(
        query_param(uri, "access").as_deref(),
        query_param(uri, "list").as_deref(),
        "access",
        "list",
    ) {
        Ok(permissions) => permissions,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let creds = state.issue(Duration::from_millis(ttl_ms), scope, permissions);
    json_response(
        StatusCode::OK,
        &json!({
            "access_key_id": creds.access_key_id,
            "secret_access_key": creds.secret_access_key,
            "session_token": creds.session_token,
            "expires_at_millis": creds.expires_at_millis,
            "access": permissions.access_name(),
            "list": permissions.list,
        }),
    )
}

fn revoke(state: &State, uri: &Uri) -> Response<Body> {
    match query_param(uri, "access_key_id").filter(|s| !s.is_empty()) {
        None => error(StatusCode::BAD_REQUEST, "access_key_id is required"),
        Some(id) if state.is_root(&id) => {
            error(StatusCode::BAD_REQUEST, "the root key cannot be revoked")
        }
        Some(id) => {
            state.revoke(&id);
            no_content()
        }
    }
}

/// Arms a bit flip: `key=bucket/key` (required), `where=request|response` (required),
/// `offset=N` (byte offset in the body; default the middle byte).
fn flip(state: &State, uri: &Uri) -> Response<Body> {
    let target = query_param(uri, "key").unwrap_or_default();
    let Some((bucket, key)) = target
        .split_once('/')
        .filter(|(b, k)| crate::state::is_valid_bucket_name(b) && !k.is_empty())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("key must be bucket/key with a valid bucket name and a key, got {target:?}"),
        );
    };
    let side_text = query_param(uri, "where").unwrap_or_default();
    let Some(side) = FlipSide::parse(&side_text) else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("where must be request or response, got {side_text:?}"),
        );
    };
    let offset = match query_param(uri, "offset") {
        None => None,
        Some(text) => match text.trim().parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("offset must be a whole number of bytes, got {text:?}"),
                )
            }
        },
    };
    state.faults().arm(side, bucket, key, offset);
    no_content()
}

/// Arms lost answers: `key=bucket/key` (required), `count=N` (default 1).
fn lose_answer(state: &State, uri: &Uri) -> Response<Body> {
    let target = query_param(uri, "key").unwrap_or_default();
    let Some((bucket, key)) = target
        .split_once('/')
        .filter(|(b, k)| crate::state::is_valid_bucket_name(b) && !k.is_empty())
    else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("key must be bucket/key with a valid bucket name and a key, got {target:?}"),
        );
    };
    let count = match query_param(uri, "count") {
        None => 1,
        Some(text) => match text.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("count must be a positive whole number, got {text:?}"),
                )
            }
        },
    };
    state.answers().lose_answers(bucket, key, count);
    no_content()
}

/// Makes a bucket's PutObject ignore conditions: `bucket=B` (required), `ignore=true|false`
/// (default true).
fn ignore_conditions(state: &State, uri: &Uri) -> Response<Body> {
    let bucket = query_param(uri, "bucket").unwrap_or_default();
    if !crate::state::is_valid_bucket_name(&bucket) {
        return error(
            StatusCode::BAD_REQUEST,
            format!("bucket must be a valid bucket name, got {bucket:?}"),
        );
    }
    let ignore = match query_param(uri, "ignore").as_deref() {
        None | Some("true") => true,
        Some("false") => false,
        Some(other) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("ignore must be true or false, got {other:?}"),
            )
        }
    };
    state.answers().ignore_conditions(&bucket, ignore);
    no_content()
}

/// Serves one admin request; never panics on bad input.
pub(crate) fn handle(state: &Arc<State>, method: &Method, uri: &Uri) -> Response<Body> {
    let path = uri
        .path()
        .strip_prefix(ADMIN_PREFIX)
        .unwrap_or("")
        .trim_end_matches('/');
    let (route, rest) = path.split_once('/').unwrap_or((path, ""));
    let expected = match route {
        "health" | "stats" | "requests" | "uploads" | "flips" | "lost-answers" => Method::GET,
        "buckets" | "credentials" | "revoke" | "flip" | "lose-answer" | "ignore-conditions" => {
            Method::POST
        }
        _ => {
            return error(
                StatusCode::NOT_FOUND,
                format!("unknown admin path {:?}", uri.path()),
            )
        }
    };
    if *method != expected {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("use {expected} for {}", uri.path()),
        );
    }
    if !rest.is_empty() && route != "buckets" {
        return error(
            StatusCode::NOT_FOUND,
            format!("unknown admin path {:?}", uri.path()),
        );
    }
    match route {
        "health" => json_response(StatusCode::OK, &json!({ "status": "ok" })),
        "buckets" => match state.create_bucket(rest) {
            Ok(()) => json_response(StatusCode::OK, &json!({ "bucket": rest })),
            Err(err) if err.kind() == std::io::ErrorKind::InvalidInput => {
                error(StatusCode::BAD_REQUEST, err.to_string())
            }
            Err(err) => error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot create bucket: {err}"),
            ),
        },
        "credentials" => issue(state, uri),
        "revoke" => revoke(state, uri),
        "flip" => flip(state, uri),
        "lose-answer" => lose_answer(state, uri),
        "ignore-conditions" => ignore_conditions(state, uri),
        "lost-answers" => {
            let (lost, armed) = state.answers().counts();
            json_response(StatusCode::OK, &json!({ "lost": lost, "armed": armed }))
        }
        "flips" => {
            let c = state.faults().counts();
            json_response(
                StatusCode::OK,
                &json!({ "request": c.request, "response": c.response, "armed": c.armed }),
            )
        }
        "uploads" => {
            let bucket = query_param(uri, "bucket").filter(|b| !b.is_empty());
            let uploads: Vec<Value> = state
                .uploads()
                .list(bucket.as_deref())
                .into_iter()
                .map(|u| {
                    json!({
                        "bucket": u.bucket,
                        "key": u.key,
                        "upload_id": u.upload_id,
                        "parts": u.parts,
                        "initiated_millis": u.initiated_millis,
                    })
                })
                .collect();
            json_response(StatusCode::OK, &Value::Array(uploads))
        }
        "stats" => {
            let map: Map<String, Value> = state
                .all_stats()
                .iter()
                .map(|(k, v)| (k.clone(), stats_json(v)))
                .collect();
            json_response(StatusCode::OK, &Value::Object(map))
        }
        _ => {
            let records: Vec<Value> = state.request_log().iter().map(record_json).collect();
            json_response(StatusCode::OK, &Value::Array(records))
        }
    }
}
