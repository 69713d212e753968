//! Public value types: issued credentials, per-key counters and request records.

use std::fmt;

/// Temporary credentials issued by the endpoint (by [`crate::LocalS3::issue_credentials`], the
/// admin API or STS `AssumeRole`).
///
/// `Debug` prints the access key id and the expiry only, never the secret or the session token.
#[derive(Clone, PartialEq, Eq)]
pub struct TemporaryCredentials {
    /// Access key id, `ASIA` followed by 16 upper-case letters and digits.
    pub access_key_id: String,
    /// Secret access key (40 characters).
    pub secret_access_key: String,
    /// Session token; every request signed with this key must carry it
    /// (`x-amz-security-token` header or `X-Amz-Security-Token` presigned query parameter).
    pub session_token: String,
    /// Expiry as epoch **milliseconds** (UTC). Requests at or after this instant are rejected
    /// with 400 `ExpiredToken`.
    pub expires_at_millis: i64,
}

impl fmt::Debug for TemporaryCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemporaryCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("session_token", &"<redacted>")
            .field("expires_at_millis", &self.expires_at_millis)
            .finish()
    }
}

/// What a temporary key may do inside its scope. The root key may do everything.
///
/// - `write == false` (a **read-only** key): only `Get*`, `Head*`, `List*` and
///   `SelectObjectContent` calls; any other (`PutObject`, `CopyObject`, `DeleteObject(s)`, the
///   multipart calls, bucket changes) gets 403 `AccessDenied` saying the credential is read-only
///   and naming the operation.
/// - `list == false` (a key **without LIST**, as some catalogs vend): `ListObjects`,
///   `ListObjectsV2`, `ListObjectVersions` and `ListMultipartUploads` get 403 `AccessDenied`
///   saying the credential does not allow listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Permissions {
    /// Whether the key may write (create, overwrite, copy into, delete, multipart).
    pub write: bool,
    /// Whether the key may list objects and multipart uploads.
    pub list: bool,
}

impl Permissions {
    /// Everything the scope allows (the default).
    pub const READ_WRITE: Permissions = Permissions {
        write: true,
        list: true,
    };
    /// Reads and lists only.
    pub const READ_ONLY: Permissions = Permissions {
        write: false,
        list: true,
    };

    /// The same permissions without listing.
    pub const fn without_list(self) -> Permissions {
        Permissions {
            write: self.write,
            list: false,
        }
    }

    /// The admin API's and STS's spelling of `write`: `read-write` or `read`.
    pub fn access_name(self) -> &'static str {
        if self.write {
            "read-write"
        } else {
            "read"
        }
    }
}

impl Default for Permissions {
    fn default() -> Self {
        Permissions::READ_WRITE
    }
}

/// Request counters for one access key (counts of requests, not bytes).
///
/// `rejected` counts every rejected request; the reason fields break down the
/// authentication and authorization failures. Rejections for other reasons (for example
/// `SignatureDoesNotMatch` or `RequestTimeTooSkewed`) count in `rejected` only, so
/// `rejected >= expired + invalid_key + bad_token + denied`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Requests that passed authentication and authorization (the S3 operation itself may
    /// still have failed, for example with 404 `NoSuchKey`).
    pub accepted: u64,
    /// Requests rejected before the S3 operation ran, for any reason.
    pub rejected: u64,
    /// Rejected with 400 `ExpiredToken`: the temporary key was past its expiry.
    pub expired: u64,
    /// Rejected with 403 `InvalidAccessKeyId`: unknown or revoked key.
    pub invalid_key: u64,
    /// Rejected with 403 `InvalidToken`: session token missing or not the key's token.
    pub bad_token: u64,
    /// Rejected with 403 `AccessDenied`: outside the key's scope or its [`Permissions`], or an
    /// unsigned request.
    pub denied: u64,
}

impl KeyStats {
    pub(crate) fn count(&mut self, accepted: bool, reason: Option<&str>) {
        if accepted {
            self.accepted += 1;
            return;
        }
        self.rejected += 1;
        match reason {
            Some(REASON_EXPIRED) => self.expired += 1,
            Some(REASON_INVALID_KEY) => self.invalid_key += 1,
            Some(REASON_BAD_TOKEN) => self.bad_token += 1,
            Some(REASON_DENIED) => self.denied += 1,
            _ => {}
        }
    }
}

/// Reason recorded for an expired temporary key.
pub const REASON_EXPIRED: &str = "ExpiredToken";
/// Reason recorded for an unknown or revoked key.
pub const REASON_INVALID_KEY: &str = "InvalidAccessKeyId";
/// Reason recorded for a missing or wrong session token.
pub const REASON_BAD_TOKEN: &str = "InvalidToken";
/// Reason recorded for a request outside the key's scope or without a signature.
pub const REASON_DENIED: &str = "AccessDenied";

/// One S3 or STS request as seen by the endpoint (admin calls are not recorded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    /// Access key id the request was signed with; empty for unsigned requests.
    pub access_key_id: String,
    /// HTTP method, for example `GET`.
    pub method: String,
    /// Bucket addressed by the request (path-style), if any.
    pub bucket: Option<String>,
    /// Object key addressed by the request, if any.
    pub key: Option<String>,
    /// `true` when the request passed authentication and authorization.
    pub accepted: bool,
    /// For rejected requests the S3 error code, for example `ExpiredToken`,
    /// `InvalidAccessKeyId`, `InvalidToken`, `AccessDenied` or `SignatureDoesNotMatch`.
    pub reason: Option<String>,
    /// HTTP status code of the response.
    pub status: u16,
    /// The request's `User-Agent` header (lossy UTF-8, at most 512 bytes kept), if any: what an
    /// endpoint's access log shows of the client.
    pub user_agent: Option<String>,
}

/// A multipart upload that was started and neither completed nor aborted: its parts still
/// take space on the endpoint (as on S3, until a lifecycle rule
/// `AbortIncompleteMultipartUpload` removes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncompleteUpload {
    /// Bucket of the upload.
    pub bucket: String,
    /// Object key the upload would create.
    pub key: String,
    /// Upload id, as returned by `CreateMultipartUpload`.
    pub upload_id: String,
    /// Number of distinct parts stored so far.
    pub parts: usize,
    /// When the upload was started, epoch milliseconds (by the endpoint's clock).
    pub initiated_millis: i64,
}
