//! Azure's checksum rules (see [`crate::cloud::integrity`]). Writes: every `PUT` with a body
//! (Put Blob, Put Block, Put Block List) carries `Content-MD5`, which the service verifies
//! against the bytes it received, unless the request is signed with an account key
//! (`Authorization: SharedKey`, whose signature covers `Content-MD5` and was computed before):
//! vended credentials (SAS, bearer tokens) sign no header. Reads: a whole-blob `GET` answer
//! carries the blob's stored `Content-MD5` when it has one (the service stores it for blobs
//! written with one Put Blob); the bytes are checked against it. A blob assembled from blocks
//! has no stored MD5 unless the writer set one: its reads are not checked.

use http::header::{HeaderName, AUTHORIZATION};
use object_store::client::HttpRequest;
use object_store::HeaderMap;

use crate::cloud::integrity::{body_parts, checksum_base64, Algorithm, Rules, Stored};

/// The header of a body's MD5 (base64), RFC 1864.
const CONTENT_MD5: HeaderName = HeaderName::from_static("content-md5");

/// Azure's rules.
pub static RULES: Rules = Rules { stored, prepare };

fn stored(headers: &HeaderMap) -> Option<Stored> {
    let base64 = headers.get(CONTENT_MD5)?.to_str().ok()?.to_string();
    Some(Stored {
        algorithm: Algorithm::Md5,
        base64,
    })
}

fn prepare(req: &mut HttpRequest) {
    if req.method() != http::Method::PUT || req.headers().contains_key(CONTENT_MD5) {
        return;
    }
    let shared_key = req
        .headers()
        .get(AUTHORIZATION)
        .is_some_and(|v| v.as_bytes().starts_with(b"SharedKey"));
    if shared_key {
        return;
    }
    let Some(parts) = body_parts(req) else {
        return;
    };
    let slices: Vec<&[u8]> = parts.iter().map(|b| b.as_ref()).collect();
    if let Ok(value) = checksum_base64(Algorithm::Md5, &slices).parse() {
        req.headers_mut().insert(CONTENT_MD5, value);
    }
}
