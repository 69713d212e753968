//! The upload check fake-gcs-server lacks and GCS makes: a `PUT` carrying
//! `x-goog-hash: crc32c=<base64>` whose body has another CRC32C is refused with a 400 and
//! nothing is stored (GCS's XML API verifies the hashes a request declares:
//! <https://cloud.google.com/storage/docs/xml-api/put-object-upload>), so the GCS tests can
//! prove that the library sends the header and that a flipped upload is refused.

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{HeaderMap, Response, StatusCode};

/// The answer GCS would give to a `PUT` whose body does not match its declared CRC32C, or
/// `None` when it matches or declares none.
pub(super) fn refuse_mismatch(headers: &HeaderMap, body: &[u8]) -> Option<Response<Full<Bytes>>> {
    let declared = headers
        .get_all("x-goog-hash")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|entry| entry.trim().strip_prefix("crc32c="))?
        .to_string();
    let actual = crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, body) as u32;
    let actual = base64::engine::general_purpose::STANDARD.encode(actual.to_be_bytes());
    if actual == declared {
        return None;
    }
    let xml = format!(
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>BadDigest</Code><Message>The \
         CRC32C you specified ({declared}) did not match what we received ({actual}).</Message></Error>"
    );
    let mut r = Response::new(Full::new(Bytes::from(xml)));
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/xml"),
    );
    Some(r)
}
