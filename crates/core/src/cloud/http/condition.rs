//! Conditional multipart completion: makes a create-only or if-match multipart write atomic
//! at the store.
//!
//! `object_store` 0.14's `MultipartStore::complete_multipart` always completes
//! unconditionally. Every request of a cloud store passes through the store's HTTP service
//! (`super::StoreHttpService`), after signing, in the task that sent it; [`completing`] marks
//! that task (a `tokio` task-local) while a completion runs, and [`apply`] adds the condition
//! to the completion request:
//!
//! | store | completion request | create-only | if-match |
//! |---|---|---|---|
//! | S3 | `POST ?uploadId=` | `If-None-Match: *` | `If-Match: <etag>` |
//! | Azure | `PUT ?comp=blocklist` | `If-None-Match: *` | `If-Match: <etag>` |
//! | GCS (XML API) | `POST ?uploadId=` | `x-goog-if-generation-match: 0` | nothing |
//!
//! The header is not signed. S3 SigV4 requires only `host` and `x-amz-*` headers to be signed
//! (`object_store` adds its own `If-None-Match` the same way). Azure SharedKey signs the
//! conditional headers: a request carrying `Authorization: SharedKey` gets nothing (SAS and
//! bearer tokens sign no header). Where nothing is added, the writer's `HEAD` check before
//! completing is the only guard (not atomic). [`observe`] records the completion's answer, so
//! that a refusal `object_store` reports without its status (GCS completions) still comes out
//! as a refusal.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;

use object_store::client::HttpRequest;
use object_store::HeaderValue;

use crate::uri::Scheme;

/// What a conditional completion requires of the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Require {
    /// That it does not exist (create-only).
    Absent,
    /// That its ETag is this one (if-match; as the store gives ETags, quotes included).
    ETag(String),
}

/// The condition of the completion running in this task.
struct Completion {
    scheme: Scheme,
    require: Require,
    /// HTTP status of the last answer to a completion request that carried the condition
    /// (0: none yet).
    status: Arc<AtomicU16>,
    /// Whether the request sent last carried the condition.
    sent: AtomicBool,
}

tokio::task_local! {
    static COMPLETION: Completion;
}

/// Runs `complete` (a multipart completion of the object at `path` of a `scheme` store) with
/// `require` added to its completion request (see the module docs; `None`: as it is). A
/// completion the store refused with 412 or 409 comes out as `Precondition` or
/// `AlreadyExists` even where `object_store` reports it as `Generic` (GCS).
pub(crate) async fn completing<T, F>(
    scheme: Scheme,
    require: Option<Require>,
    path: &str,
    complete: F,
) -> object_store::Result<T>
where
    F: Future<Output = object_store::Result<T>>,
{
    let Some(require) = require else {
        return complete.await;
    };
    let status = Arc::new(AtomicU16::new(0));
    let completion = Completion {
        scheme,
        require,
        status: status.clone(),
        sent: AtomicBool::new(false),
    };
    match COMPLETION.scope(completion, complete).await {
        Err(e @ object_store::Error::Generic { .. }) => {
            let (path, source) = (path.to_string(), Box::new(e));
            Err(match status.load(Ordering::Relaxed) {
                412 => object_store::Error::Precondition { path, source },
                409 => object_store::Error::AlreadyExists { path, source },
                _ => *source,
            })
        }
        other => other,
    }
}

/// Adds the condition of the completion running in this task, if any, to `req` when `req` is
/// that completion's request; any other request is returned as it is.
pub(crate) fn apply(mut req: HttpRequest) -> HttpRequest {
    let _ = COMPLETION.try_with(|c| {
        let conditional = header(c.scheme, &c.require, &req);
        c.sent.store(conditional.is_some(), Ordering::Relaxed);
        if let Some((name, value)) = conditional {
            req.headers_mut().insert(name, value);
        }
    });
    req
}

/// Records `status`, the answer to the request [`apply`] saw last, when that request was a
/// completion it made conditional (a task sends its requests one at a time).
pub(crate) fn observe(status: u16) {
    let _ = COMPLETION.try_with(|c| {
        if c.sent.swap(false, Ordering::Relaxed) {
            c.status.store(status, Ordering::Relaxed);
        }
    });
}

/// The header making `req` conditional, when `req` is a completion request of `scheme`.
fn header(
    scheme: Scheme,
    require: &Require,
    req: &HttpRequest,
) -> Option<(&'static str, HeaderValue)> {
    let method = req.method().as_str();
    let query = req.uri().query().unwrap_or("");
    let has = |name: &str| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some(name))
    };
    let etag = |e: &str| HeaderValue::from_str(e).ok();
    match (scheme, require) {
        (Scheme::S3, _) if method != "POST" || !has("uploadId") => None,
        (Scheme::S3, Require::Absent) => Some(("if-none-match", HeaderValue::from_static("*"))),
        (Scheme::S3, Require::ETag(e)) => Some(("if-match", etag(e)?)),
        (Scheme::Azure, _)
            if method != "PUT" || !query.split('&').any(|p| p == "comp=blocklist") =>
        {
            None
        }
        (Scheme::Azure, _) if shared_key(req) => None,
        (Scheme::Azure, Require::Absent) => Some(("if-none-match", HeaderValue::from_static("*"))),
        (Scheme::Azure, Require::ETag(e)) => Some(("if-match", etag(e)?)),
        (Scheme::Gcs, Require::Absent) if method == "POST" && has("uploadId") => {
            Some(("x-goog-if-generation-match", HeaderValue::from_static("0")))
        }
        _ => None,
    }
}

/// Whether `req` is signed with an Azure shared key, whose signature covers the conditional
/// headers.
fn shared_key(req: &HttpRequest) -> bool {
    req.headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("SharedKey"))
}

#[cfg(test)]
mod tests {
    use object_store::client::HttpRequestBody;

    use super::*;

    fn request(method: &str, uri: &str, auth: Option<&'static str>) -> HttpRequest {
        let mut req = HttpRequest::new(HttpRequestBody::empty());
        *req.method_mut() = method.parse().unwrap();
        *req.uri_mut() = uri.parse().unwrap();
        if let Some(auth) = auth {
            req.headers_mut()
                .insert("authorization", HeaderValue::from_static(auth));
        }
        req
    }

    /// The condition `apply` adds to `req` inside a completion of `scheme` requiring `require`.
    async fn added(scheme: Scheme, require: Require, req: HttpRequest) -> Vec<(String, String)> {
        let completion = Completion {
            scheme,
            require,
            status: Arc::default(),
            sent: AtomicBool::new(false),
        };
        let before = req.headers().clone();
        let req = COMPLETION.scope(completion, async { apply(req) }).await;
        let mut added: Vec<_> = req
            .headers()
            .iter()
            .filter(|(name, _)| !before.contains_key(*name))
            .map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        added.sort();
        added
    }

    fn one(name: &str, value: &str) -> Vec<(String, String)> {
        vec![(name.to_string(), value.to_string())]
    }

    const S3_COMPLETE: &str = "http://127.0.0.1:1/b/k?uploadId=abc";
    const AZ_COMPLETE: &str = "https://a.blob.core.windows.net/c/k?comp=blocklist&sv=2022&sig=x";

    #[tokio::test]
    async fn only_completion_requests_get_the_condition_of_their_store() {
        let etag = || Require::ETag("\"e1\"".into());
        let s3 = |m, u| request(m, u, Some("AWS4-HMAC-SHA256 Credential=x"));
        assert_eq!(
            added(Scheme::S3, Require::Absent, s3("POST", S3_COMPLETE)).await,
            one("if-none-match", "*")
        );
        assert_eq!(
            added(Scheme::S3, etag(), s3("POST", S3_COMPLETE)).await,
            one("if-match", "\"e1\"")
        );
        // CreateMultipartUpload (`?uploads`), a part (`PUT ?partNumber&uploadId`), a HEAD.
        for (m, u) in [
            ("POST", "http://127.0.0.1:1/b/k?uploads"),
            ("PUT", "http://127.0.0.1:1/b/k?partNumber=1&uploadId=abc"),
            ("HEAD", "http://127.0.0.1:1/b/k"),
        ] {
            assert_eq!(added(Scheme::S3, Require::Absent, s3(m, u)).await, vec![]);
        }
        let sas = request("PUT", AZ_COMPLETE, None);
        assert_eq!(
            added(Scheme::Azure, Require::Absent, sas).await,
            one("if-none-match", "*")
        );
        let bearer = request("PUT", AZ_COMPLETE, Some("Bearer t"));
        assert_eq!(
            added(Scheme::Azure, etag(), bearer).await,
            one("if-match", "\"e1\"")
        );
        let block = request(
            "PUT",
            "https://a.blob.core.windows.net/c/k?comp=block&blockid=Zm9v",
            None,
        );
        assert_eq!(added(Scheme::Azure, Require::Absent, block).await, vec![]);
        let gcs = || {
            request(
                "POST",
                "https://storage.googleapis.com/b/k?uploadId=abc",
                None,
            )
        };
        assert_eq!(
            added(Scheme::Gcs, Require::Absent, gcs()).await,
            one("x-goog-if-generation-match", "0")
        );
        assert_eq!(added(Scheme::Gcs, etag(), gcs()).await, vec![]);
    }

    #[tokio::test]
    async fn an_azure_shared_key_request_is_left_alone_since_its_signature_covers_the_condition() {
        let signed = request("PUT", AZ_COMPLETE, Some("SharedKey acct:c2ln"));
        assert_eq!(added(Scheme::Azure, Require::Absent, signed).await, vec![]);
    }

    #[tokio::test]
    async fn outside_a_completion_nothing_is_added_and_a_refused_one_keeps_its_kind() {
        let req = apply(request("POST", S3_COMPLETE, None));
        assert!(req.headers().is_empty());
        // A GCS refusal comes back from object_store as `Generic`; the answer's status decides.
        let refused = completing(Scheme::Gcs, Some(Require::Absent), "b/k", async {
            let _ = apply(request("POST", "https://g/b/k?uploadId=u", None));
            observe(412);
            Err::<(), _>(object_store::Error::Generic {
                store: "GCS",
                source: "412 Precondition Failed".into(),
            })
        })
        .await;
        assert!(
            matches!(refused, Err(object_store::Error::Precondition { ref path, .. }) if path == "b/k"),
            "{refused:?}"
        );
        // Another failure, or a status of a request without the condition, stays as it was.
        let other = completing(Scheme::Gcs, Some(Require::Absent), "b/k", async {
            let _ = apply(request("GET", "https://g/token", None));
            observe(412);
            Err::<(), _>(object_store::Error::Generic {
                store: "GCS",
                source: "boom".into(),
            })
        })
        .await;
        assert!(
            matches!(other, Err(object_store::Error::Generic { .. })),
            "{other:?}"
        );
    }
}
