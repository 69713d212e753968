//! GCS's error documents for reads stock fake-gcs-server answers otherwise (used by the
//! [`super::Proxy`] in GCS mode).

use bytes::Bytes;
use hyper::StatusCode;

use super::ProxyState;

/// GCS's answer to an XML-API read where stock fake-gcs-server answers otherwise (case C27):
/// fake-gcs-server answers a plain-text `Not Found` to a read of a missing object and of an
/// object in a missing bucket alike, and 500 `no bucket named ..` to a listing of a missing
/// bucket; GCS answers 404 with the error document `NoSuchKey` or `NoSuchBucket`
/// (<https://cloud.google.com/storage/docs/xml-api/reference-status>). Whether the bucket
/// exists is asked of the emulator's JSON API. `None`: the answer stays as it is.
pub(super) async fn gcs_xml_error(
    state: &ProxyState,
    method: &hyper::Method,
    path: &str,
    status: StatusCode,
    body: &[u8],
) -> Option<(StatusCode, Bytes)> {
    const JSON_API: [&str; 4] = ["/storage/", "/download/", "/upload/", "/_internal/"];
    if JSON_API.iter().any(|p| path.starts_with(p)) {
        return None;
    }
    let no_bucket = status == StatusCode::INTERNAL_SERVER_ERROR
        && String::from_utf8_lossy(body).contains("no bucket named");
    let read = *method == hyper::Method::GET || *method == hyper::Method::HEAD;
    if !(no_bucket || (status == StatusCode::NOT_FOUND && read)) {
        return None;
    }
    let bucket = path.trim_start_matches('/').split('/').next()?;
    let exists = state
        .client
        .get(format!("{}/storage/v1/b/{bucket}", state.upstream))
        .send()
        .await
        .ok()?
        .status()
        .is_success();
    let document = if exists {
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
    } else {
        "<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist.</Message></Error>"
    };
    let body = if *method == hyper::Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from_static(document.as_bytes())
    };
    Some((StatusCode::NOT_FOUND, body))
}
