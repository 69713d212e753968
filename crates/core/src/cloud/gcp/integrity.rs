//! GCS's checksum rules (see [`crate::cloud::integrity`]). Writes: a single-request upload
//! (`PUT` of an object with a body, not a multipart part) carries `x-goog-hash: crc32c=...`,
//! which the service verifies before it stores the object. Parts of a multipart upload carry
//! none; the object's CRC32C, which the service computes for every object, is checked on the
//! next whole read. Reads: a whole-object `GET` answer carries `x-goog-hash: crc32c=...`; the
//! bytes are checked against it, unless the object is stored compressed and served
//! decompressed (`x-goog-stored-content-encoding: gzip`: the hash is of the stored bytes).

use object_store::client::HttpRequest;
use object_store::HeaderMap;

use crate::cloud::integrity::{
    body_parts, checksum_base64, header_entry, Algorithm, Rules, Stored,
};

/// The header GCS carries object hashes in (`crc32c=<base64>,md5=<base64>`).
const HASH: &str = "x-goog-hash";

/// GCS's rules.
pub static RULES: Rules = Rules { stored, prepare };

fn stored(headers: &HeaderMap) -> Option<Stored> {
    let transcoded = headers
        .get("x-goog-stored-content-encoding")
        .is_some_and(|v| v.as_bytes() != b"identity");
    if transcoded {
        return None;
    }
    header_entry(headers, HASH, "crc32c").map(|base64| Stored {
        algorithm: Algorithm::Crc32c,
        base64,
    })
}

fn prepare(req: &mut HttpRequest) {
    let part = req.uri().query().is_some_and(|q| q.contains("uploadId="));
    if req.method() != http::Method::PUT || part || req.headers().contains_key(HASH) {
        return;
    }
    let Some(parts) = body_parts(req) else {
        return;
    };
    let slices: Vec<&[u8]> = parts.iter().map(|b| b.as_ref()).collect();
    let value = format!("crc32c={}", checksum_base64(Algorithm::Crc32c, &slices));
    if let Ok(value) = value.parse() {
        req.headers_mut().insert(HASH, value);
    }
}
