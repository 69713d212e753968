//! GCS's checksum rules (see [`crate::cloud::integrity`]). Writes: every `PUT` with a body (a
//! single-request upload, and each part of an XML-API multipart upload) carries
//! `x-goog-hash: crc32c=...`, which the service verifies before it stores the object or the
//! part (<https://cloud.google.com/storage/docs/xml-api/put-object-multipart>). The object a
//! multipart upload assembles gets a CRC32C from the service, checked on the next whole read. Reads: a whole-object `GET` answer carries `x-goog-hash: crc32c=...`; the
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
    if req.method() != http::Method::PUT || req.headers().contains_key(HASH) {
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

#[cfg(test)]
mod tests {
    use object_store::client::HttpRequestBody;

    use super::*;

    fn request(method: &str, uri: &str, body: &'static [u8]) -> HttpRequest {
        let mut req = HttpRequest::new(HttpRequestBody::from(bytes::Bytes::from_static(body)));
        *req.method_mut() = method.parse().unwrap();
        *req.uri_mut() = uri.parse().unwrap();
        req
    }

    fn hash_of(mut req: HttpRequest) -> Option<String> {
        prepare(&mut req);
        req.headers()
            .get(HASH)
            .map(|v| v.to_str().unwrap().to_string())
    }

    #[test]
    fn uploads_and_parts_carry_crc32c_and_nothing_else_does() {
        // CRC-32C of "123456789" is 0xE3069283 (its check value).
        let want = Some("crc32c=4waSgw==".to_string());
        assert_eq!(hash_of(request("PUT", "https://g/b/k", b"123456789")), want);
        let part = "https://g/b/k?partNumber=2&uploadId=u";
        assert_eq!(hash_of(request("PUT", part, b"123456789")), want);
        // No body (a copy, an empty object), or not an upload: nothing added.
        assert_eq!(hash_of(request("PUT", "https://g/b/k", b"")), None);
        assert_eq!(
            hash_of(request("POST", "https://g/b/k?uploadId=u", b"<x/>")),
            None
        );
    }
}
