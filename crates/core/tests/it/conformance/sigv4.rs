//! AWS Signature Version 4 for the few admin calls the suite makes itself (IAM, STS and
//! `CreateBucket` on moto). Follows "Create a signed AWS API request"
//! (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
//! canonical request, string to sign, HMAC-SHA256 key derivation. Only what these calls need:
//! no query string, the signed headers `host`, `x-amz-content-sha256`, `x-amz-date` (and
//! `x-amz-security-token`). The library itself signs through `object_store`.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// Keys to sign with.
#[derive(Clone)]
pub struct Keys {
    pub access_key_id: String,
    pub secret: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = <Hmac<Sha256>>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// `(name, value)` headers to add to a request of `method` to `host` + `path` (no query)
/// with `body`, for `service` in us-east-1, signed at `epoch_secs`.
pub fn sign(
    keys: &Keys,
    method: &str,
    host: &str,
    path: &str,
    service: &str,
    body: &[u8],
    epoch_secs: i64,
) -> Vec<(String, String)> {
    let region = "us-east-1";
    let t = chrono::DateTime::from_timestamp(epoch_secs, 0).expect("a valid time");
    let amz_date = t.format("%Y%m%dT%H%M%SZ").to_string();
    let date = &amz_date[..8];
    let payload_hash = hex(&Sha256::digest(body));
    let signed_headers = "host;x-amz-content-sha256;x-amz-date";
    let canonical = format!(
        "{method}\n{path}\n\nhost:{host}\nx-amz-content-sha256:{payload_hash}\nx-amz-date:{amz_date}\n\n{signed_headers}\n{payload_hash}"
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k_date = hmac(format!("AWS4{}", keys.secret).as_bytes(), date);
    let k_region = hmac(&k_date, region);
    let k_service = hmac(&k_region, service);
    let k_signing = hmac(&k_service, "aws4_request");
    let signature = hex(&hmac(&k_signing, &to_sign));
    vec![
        ("x-amz-date".into(), amz_date.clone()),
        ("x-amz-content-sha256".into(), payload_hash),
        (
            "authorization".into(),
            format!(
                "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
                keys.access_key_id
            ),
        ),
    ]
}

/// Percent-encodes a form value (RFC 3986 unreserved characters kept).
pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const SET: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, SET)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The text of the first `<tag>…</tag>` in an XML answer.
pub fn xml_value(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&close)?;
    Some(xml[start..end].to_string())
}

/// Sends a signed request to `endpoint` (`http://127.0.0.1:PORT`) and returns the body of a
/// 2xx answer, or `Err` with the status and the server's error code.
pub async fn call(
    client: &reqwest::Client,
    keys: &Keys,
    endpoint: &str,
    method: &str,
    path: &str,
    service: &str,
    body: String,
) -> Result<String, String> {
    let host = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let now = super::now_millis() / 1000;
    let headers = sign(keys, method, &host, path, service, body.as_bytes(), now);
    let m = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
    let mut req = client.request(m, format!("{endpoint}{path}"));
    for (k, v) in headers {
        req = req.header(k, v);
    }
    if !body.is_empty() {
        req = req.header("content-type", "application/x-www-form-urlencoded");
    }
    let resp = req.body(body).send().await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let text = resp.text().await.map_err(|e| e.to_string())?;
    if status.is_success() {
        Ok(text)
    } else {
        Err(format!(
            "{service} {path}: {status} {}",
            xml_value(&text, "Code").unwrap_or_else(|| text.chars().take(200).collect())
        ))
    }
}
