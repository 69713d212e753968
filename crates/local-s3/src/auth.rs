//! Credential checks plugged into s3s: [`Auth`] hands out secrets for SigV4 verification,
//! [`Access`] then checks revocation, session token, expiry, permissions (read-only, no LIST)
//! and scope.
//!
//! Each decision is noted in the task-local [`RequestContext`] set up by the front service, so
//! that rejections inside s3s are counted under the right key.

use std::sync::{Arc, Mutex, PoisonError};

use hyper::StatusCode;
use s3s::access::{S3Access, S3AccessContext};
use s3s::auth::{S3Auth, SecretKey};
use s3s::dto::{
    AbortMultipartUploadInput, CompleteMultipartUploadInput, CopyObjectInput, CopySource,
    CreateMultipartUploadInput, DeleteObjectsInput, UploadPartCopyInput, UploadPartInput,
};
use s3s::path::S3Path;
use s3s::{S3Error, S3ErrorCode, S3Request, S3Result};

use crate::permissions::LIST_OPS;
use crate::state::{Refusal, Scope, State};
use crate::types::REASON_DENIED;

/// What the checks learned about the request being served.
#[derive(Debug, Default)]
pub(crate) struct RequestContext {
    /// Access key the request was signed with, once s3s parsed it.
    pub access_key: Option<String>,
    /// Bucket and key as parsed by s3s.
    pub bucket: Option<String>,
    pub key: Option<String>,
    /// `Ok` = accepted, `Err(code)` = rejected with that S3 error code. Later checks overwrite.
    pub outcome: Option<Result<(), &'static str>>,
}

tokio::task_local! {
    pub(crate) static REQUEST: Arc<Mutex<RequestContext>>;
}

/// Updates the current request's context; a no-op outside a request scope.
pub(crate) fn note(f: impl FnOnce(&mut RequestContext)) {
    let _ = REQUEST.try_with(|ctx| f(&mut ctx.lock().unwrap_or_else(PoisonError::into_inner)));
}

fn refusal_error(refusal: Refusal) -> S3Error {
    match refusal {
        Refusal::InvalidAccessKeyId => S3Error::with_message(
            S3ErrorCode::InvalidAccessKeyId,
            "The AWS Access Key Id you provided does not exist in our records.",
        ),
        Refusal::InvalidToken => {
            let mut err = S3Error::with_message(
                S3ErrorCode::InvalidToken,
                "The provided token is malformed or otherwise invalid.",
            );
            err.set_status_code(StatusCode::FORBIDDEN);
            err
        }
        Refusal::ExpiredToken => {
            S3Error::with_message(S3ErrorCode::ExpiredToken, "The provided token has expired.")
        }
    }
}

fn denied(message: String) -> S3Error {
    S3Error::with_message(S3ErrorCode::AccessDenied, message)
}

/// Session token from the `x-amz-security-token` header or the presigned query parameter.
fn session_token(headers: &hyper::HeaderMap, uri: &hyper::Uri) -> Option<String> {
    if let Some(value) = headers.get("x-amz-security-token") {
        return value.to_str().ok().map(str::to_owned);
    }
    query_param(uri, "X-Amz-Security-Token")
}

/// First value of query parameter `name`, percent-decoded.
pub(crate) fn query_param(uri: &hyper::Uri, name: &str) -> Option<String> {
    let query = uri.query()?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Bucket-level operations a scoped key may call on its own bucket (keys of `DeleteObjects`
/// are checked one by one once the body is parsed).
const BUCKET_READ_OPS: &[&str] = &["HeadBucket", "GetBucketLocation", "DeleteObjects"];

fn check_scope(
    scope: &Scope,
    path: &S3Path,
    op: &str,
    uri: &hyper::Uri,
    bulk_delete_bucket_level: bool,
) -> S3Result<()> {
    match path {
        S3Path::Root => Err(denied(format!("{op} is outside the credential scope"))),
        S3Path::Bucket { bucket } => {
            if **bucket != *scope.bucket {
                return Err(denied(format!(
                    "bucket {bucket} is outside the credential scope"
                )));
            }
            if LIST_OPS.contains(&op) {
                let prefix = query_param(uri, "prefix").unwrap_or_default();
                if !prefix.starts_with(&scope.prefix) {
                    return Err(denied(format!(
                        "list prefix {prefix:?} is outside the credential scope"
                    )));
                }
                return Ok(());
            }
            if op == "DeleteObjects" && bulk_delete_bucket_level && !scope.prefix.is_empty() {
                return Err(denied(format!(
                    "{op} needs a credential scoped to the whole bucket {bucket}"
                )));
            }
            if BUCKET_READ_OPS.contains(&op) {
                return Ok(());
            }
            Err(denied(format!(
                "{op} is not allowed for a scoped credential"
            )))
        }
        S3Path::Object { bucket, key } => {
            if scope.allows_object(bucket, key) {
                Ok(())
            } else {
                Err(denied(format!(
                    "object {bucket}/{key} is outside the credential scope"
                )))
            }
        }
    }
}

/// Supplies secrets for signature verification.
pub(crate) struct Auth {
    pub state: Arc<State>,
}

#[async_trait::async_trait]
impl S3Auth for Auth {
    async fn get_secret_key(&self, access_key: &str) -> S3Result<SecretKey> {
        note(|ctx| ctx.access_key = Some(access_key.to_owned()));
        match self.state.secret_for(access_key) {
            Some(secret) => Ok(SecretKey::from(secret)),
            None => {
                note(|ctx| ctx.outcome = Some(Err(Refusal::InvalidAccessKeyId.reason())));
                Err(refusal_error(Refusal::InvalidAccessKeyId))
            }
        }
    }
}

/// Checks token, expiry, revocation, permissions and scope after the signature verified.
pub(crate) struct Access {
    pub state: Arc<State>,
}

impl Access {
    fn decide(&self, cx: &S3AccessContext<'_>) -> S3Result<()> {
        let Some(credentials) = cx.credentials() else {
            note(|ctx| ctx.outcome = Some(Err(REASON_DENIED)));
            return Err(denied("Signature is required".to_owned()));
        };
        let token = session_token(cx.headers(), cx.uri());
        let grant = self
            .state
            .authorize(&credentials.access_key, token.as_deref(), self.state.now())
            .map_err(|refusal| {
                note(|ctx| ctx.outcome = Some(Err(refusal.reason())));
                refusal_error(refusal)
            })?;
        if let Some(message) = crate::permissions::refusal(grant.permissions, cx.s3_op().name()) {
            note(|ctx| ctx.outcome = Some(Err(REASON_DENIED)));
            return Err(denied(message));
        }
        if let Some(scope) = grant.scope {
            check_scope(
                &scope,
                cx.s3_path(),
                cx.s3_op().name(),
                cx.uri(),
                self.state.bulk_delete_bucket_level(),
            )
            .inspect_err(|_| {
                note(|ctx| ctx.outcome = Some(Err(REASON_DENIED)));
            })?;
        }
        note(|ctx| ctx.outcome = Some(Ok(())));
        Ok(())
    }

    /// Checks objects named in a request body or header against the key's scope.
    fn check_objects<'a>(
        &self,
        access_key: Option<&str>,
        objects: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> S3Result<()> {
        let Some(scope) = access_key.and_then(|k| self.state.scope_of(k)) else {
            return Ok(());
        };
        for (bucket, key) in objects {
            if !scope.allows_object(bucket, key) {
                note(|ctx| ctx.outcome = Some(Err(REASON_DENIED)));
                return Err(denied(format!(
                    "object {bucket}/{key} is outside the credential scope"
                )));
            }
        }
        Ok(())
    }
}

fn copy_source(source: &CopySource) -> Option<(&str, &str)> {
    match source {
        CopySource::Bucket { bucket, key, .. } => Some((bucket, key)),
        _ => None,
    }
}

/// Any credential allowed to write the object may continue a multipart upload, as on S3,
/// which is how an upload outlives a credential rotation: the key was already checked
/// (signature, token, expiry, scope), so the storage sees the request under no key.
fn unbind_upload<T>(req: &mut S3Request<T>) {
    req.credentials = None;
}

fn access_key<T>(req: &S3Request<T>) -> Option<&str> {
    req.credentials.as_ref().map(|c| c.access_key.as_str())
}

#[async_trait::async_trait]
impl S3Access for Access {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let (bucket, key) = match cx.s3_path() {
            S3Path::Root => (None, None),
            S3Path::Bucket { bucket } => (Some(bucket.to_string()), None),
            S3Path::Object { bucket, key } => (Some(bucket.to_string()), Some(key.to_string())),
        };
        note(|ctx| {
            ctx.bucket = bucket;
            ctx.key = key;
        });
        self.decide(cx)
    }

    async fn copy_object(&self, req: &mut S3Request<CopyObjectInput>) -> S3Result<()> {
        let source = copy_source(&req.input.copy_source).unwrap_or(("", ""));
        self.check_objects(access_key(req), [source])
    }

    async fn upload_part_copy(&self, req: &mut S3Request<UploadPartCopyInput>) -> S3Result<()> {
        let source = copy_source(&req.input.copy_source).unwrap_or(("", ""));
        self.check_objects(access_key(req), [source])?;
        unbind_upload(req);
        Ok(())
    }

    async fn create_multipart_upload(
        &self,
        req: &mut S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<()> {
        unbind_upload(req);
        Ok(())
    }

    async fn upload_part(&self, req: &mut S3Request<UploadPartInput>) -> S3Result<()> {
        unbind_upload(req);
        Ok(())
    }

    async fn complete_multipart_upload(
        &self,
        req: &mut S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<()> {
        unbind_upload(req);
        Ok(())
    }

    async fn abort_multipart_upload(
        &self,
        req: &mut S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<()> {
        unbind_upload(req);
        Ok(())
    }

    async fn delete_objects(&self, req: &mut S3Request<DeleteObjectsInput>) -> S3Result<()> {
        let bucket = req.input.bucket.as_str();
        let objects = req
            .input
            .delete
            .objects
            .iter()
            .map(|o| (bucket, o.key.as_str()));
        self.check_objects(access_key(req), objects)
    }
}
