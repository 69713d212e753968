//! What [`super::LocatedStore`]'s errors add to the endpoint's message: what a refused write or
//! listing lacked (cases C13, C27) and how to turn checksums off for a server that refuses
//! them (see [`crate::cloud::integrity`]).

use super::CloudTerms;
use crate::error::RequestFailure;

/// What a refused write says before the endpoint's message (see the module docs).
pub const NO_WRITES: &str =
    "the credential does not allow writes here (read-only, or scoped to other paths?)";

/// What a write refused because the server does not take checksum headers says after the
/// endpoint's message (see [`refuses_checksums`]).
pub const CHECKSUMS_HINT: &str = "the server may not support checksum headers: storage option \
     'checksums=false' turns them off (see docs/integrity.md)";

/// Whether a failed write looks like a server refusing the checksum headers the library sends
/// (an S3-compatible server without checksum support, as many were when the AWS SDK turned
/// them on by default, aws-sdk-java-v2#5987): a `501`, or a `400` whose code or message names
/// a checksum and which is not a checksum mismatch (`BadDigest`, `InvalidDigest`: the bytes
/// were altered, the checksum did its job).
pub(super) fn refuses_checksums(f: &RequestFailure) -> bool {
    if !matches!(f.method.as_str(), "PUT" | "POST") {
        return false;
    }
    let code = f.code.as_deref().unwrap_or("");
    if matches!(code, "BadDigest" | "InvalidDigest" | "Md5Mismatch") {
        return false;
    }
    let text = format!("{code} {}", f.message.as_deref().unwrap_or("")).to_ascii_lowercase();
    f.status == Some(501) || (f.status == Some(400) && text.contains("checksum"))
}

/// What a refused listing says before the endpoint's message (see the module docs).
pub const NO_LISTING: &str =
    "the credential does not allow listing here (no LIST permission, or scoped to other paths?)";

/// What a failed request lacked, if it is a 403 refusing an accepted credential a write or a
/// listing: [`NO_WRITES`] or [`NO_LISTING`]; `None` for reads, other answers and rejected
/// credentials.
pub(super) fn lacking(
    terms: &CloudTerms,
    e: &object_store::Error,
    f: &RequestFailure,
) -> Option<&'static str> {
    if f.status != Some(403) || (terms.rejects_credential)(e) {
        return None;
    }
    if f.operation == Some("LIST") {
        return Some(NO_LISTING);
    }
    matches!(f.method.as_str(), "PUT" | "POST" | "DELETE" | "PATCH").then_some(NO_WRITES)
}
