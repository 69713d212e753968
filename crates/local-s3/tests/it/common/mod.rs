//! Helpers shared by the integration tests: object_store clients, raw HTTP and a tiny SigV4
//! signer for STS requests.

#![allow(dead_code)]

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use local_s3::{LocalS3, LocalS3Config, TemporaryCredentials};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::RetryConfig;
use sha2::{Digest, Sha256};

pub const BUCKET: &str = "data";

/// A started endpoint with bucket [`BUCKET`].
pub async fn start() -> LocalS3 {
    let s3 = LocalS3::start(LocalS3Config::default())
        .await
        .expect("start local-s3");
    s3.create_bucket(BUCKET).expect("create bucket");
    s3
}

fn builder(s3: &LocalS3, bucket: &str, access_key: &str, secret: &str) -> AmazonS3Builder {
    AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_allow_http(true)
        .with_bucket_name(bucket)
        .with_region("us-east-1")
        .with_access_key_id(access_key)
        .with_secret_access_key(secret)
        .with_retry(RetryConfig {
            max_retries: 0,
            retry_timeout: Duration::from_secs(5),
            ..Default::default()
        })
}

/// A client signing with the root key.
pub fn root_store(s3: &LocalS3, bucket: &str) -> AmazonS3 {
    builder(s3, bucket, s3.root_access_key(), s3.root_secret_key())
        .build()
        .unwrap()
}

/// A client signing with temporary credentials, sending `token` (or none).
pub fn temp_store(
    s3: &LocalS3,
    bucket: &str,
    creds: &TemporaryCredentials,
    token: Option<&str>,
) -> AmazonS3 {
    let mut b = builder(s3, bucket, &creds.access_key_id, &creds.secret_access_key);
    if let Some(token) = token {
        b = b.with_token(token);
    }
    b.build().unwrap()
}

/// A client for `creds` with its own session token.
pub fn store_for(s3: &LocalS3, bucket: &str, creds: &TemporaryCredentials) -> AmazonS3 {
    temp_store(s3, bucket, creds, Some(&creds.session_token))
}

/// The error and all its sources, joined, so tests can look for S3 error codes.
pub fn error_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(" | ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Text between `<tag>` and `</tag>`.
pub fn xml_field(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    Some(xml[start..end].to_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = <Hmac<Sha256>>::new_from_slice(key).unwrap();
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// Sends `body` as an STS form POST to `/`, SigV4-signed (service `sts`) when `signer` is
/// `Some((access_key, secret, token))`. Returns status and body text.
pub async fn sts_post(
    s3: &LocalS3,
    body: &str,
    signer: Option<(&str, &str, Option<&str>)>,
) -> (u16, String) {
    let url = format!("{}/", s3.endpoint());
    let content_type = "application/x-www-form-urlencoded; charset=utf-8";
    let mut req = reqwest::Client::new()
        .post(&url)
        .header("content-type", content_type)
        .body(body.to_owned());
    if let Some((access_key, secret, token)) = signer {
        let now = chrono::Utc::now();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let date = now.format("%Y%m%d").to_string();
        let host = s3.endpoint().trim_start_matches("http://").to_owned();
        let mut headers = vec![
            ("content-type", content_type.to_owned()),
            ("host", host),
            ("x-amz-date", amz_date.clone()),
        ];
        if let Some(token) = token {
            headers.push(("x-amz-security-token", token.to_owned()));
        }
        let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
        let signed_headers = headers
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>()
            .join(";");
        let canonical = format!(
            "POST\n/\n\n{canonical_headers}\n{signed_headers}\n{}",
            hex(&Sha256::digest(body.as_bytes()))
        );
        let scope = format!("{date}/us-east-1/sts/aws4_request");
        let to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex(&Sha256::digest(canonical.as_bytes()))
        );
        let mut key = hmac(format!("AWS4{secret}").as_bytes(), &date);
        for part in ["us-east-1", "sts", "aws4_request"] {
            key = hmac(&key, part);
        }
        let signature = hex(&hmac(&key, &to_sign));
        req = req.header("x-amz-date", amz_date).header(
            "authorization",
            format!("AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"),
        );
        if let Some(token) = token {
            req = req.header("x-amz-security-token", token);
        }
    }
    let resp = req.send().await.expect("send STS request");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

/// Plain HTTP call to the endpoint; returns status and body text.
pub async fn http(method: reqwest::Method, url: &str) -> (u16, String) {
    let resp = reqwest::Client::new()
        .request(method, url)
        .send()
        .await
        .expect("send request");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

/// A signer for raw S3 calls: access key, secret and session token (if any).
pub type Signer<'a> = (&'a str, &'a str, Option<&'a str>);

/// The root key as a [`Signer`].
pub fn root_signer(s3: &LocalS3) -> Signer<'_> {
    (s3.root_access_key(), s3.root_secret_key(), None)
}

/// An answer to [`s3_call`]: status, `ETag` header (if any), body text, and the headers and
/// body bytes as received.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub etag: Option<String>,
    pub body: String,
    pub headers: reqwest::header::HeaderMap,
    pub bytes: Vec<u8>,
}

impl Answer {
    /// The header `name` as text, if present.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }
}

/// S3 URI-encoding of one path segment or query component (RFC 3986 unreserved kept).
pub fn uri_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Sends a SigV4-signed (service `s3`) request: `path` is `/bucket/key` (unencoded; each
/// segment is encoded here), `query` unencoded name/value pairs, `headers` extra headers
/// (lower-case names) that are signed too.
#[allow(clippy::too_many_arguments)]
pub async fn s3_call(
    client: &reqwest::Client,
    s3: &LocalS3,
    method: &str,
    path: &str,
    query: &[(&str, &str)],
    headers: &[(&str, &str)],
    body: Vec<u8>,
    signer: Signer<'_>,
) -> Answer {
    let (access_key, secret, token) = signer;
    let encoded_path: String = path
        .split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/");
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    pairs.sort();
    let canonical_query = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let now = chrono::Utc::now();
    let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
    let date = now.format("%Y%m%d").to_string();
    let payload_hash = hex(&Sha256::digest(&body));
    let host = s3.endpoint().trim_start_matches("http://").to_owned();
    let mut all: Vec<(String, String)> = vec![
        ("host".into(), host),
        ("x-amz-content-sha256".into(), payload_hash.clone()),
        ("x-amz-date".into(), amz_date.clone()),
    ];
    if let Some(token) = token {
        all.push(("x-amz-security-token".into(), token.to_owned()));
    }
    for (k, v) in headers {
        all.push(((*k).to_owned(), (*v).to_owned()));
    }
    all.sort();
    let canonical_headers: String = all.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = all
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let canonical = format!(
        "{method}\n{encoded_path}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{payload_hash}"
    );
    let scope = format!("{date}/us-east-1/s3/aws4_request");
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), &date);
    for part in ["us-east-1", "s3", "aws4_request"] {
        key = hmac(&key, part);
    }
    let signature = hex(&hmac(&key, &to_sign));
    let url = if canonical_query.is_empty() {
        format!("{}{encoded_path}", s3.endpoint())
    } else {
        format!("{}{encoded_path}?{canonical_query}", s3.endpoint())
    };
    let mut req = client.request(method.parse().unwrap(), &url).body(body);
    for (k, v) in &all {
        if k != "host" {
            req = req.header(k.as_str(), v.as_str());
        }
    }
    req = req.header(
        "authorization",
        format!("AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={signed_headers}, Signature={signature}"),
    );
    let resp = req.send().await.expect("send S3 request");
    let status = resp.status().as_u16();
    let etag = resp
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.unwrap().to_vec();
    Answer {
        status,
        etag,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        headers,
        bytes,
    }
}

/// [`s3_call`] signed with the root key, on a new client.
pub async fn root_call(
    s3: &LocalS3,
    method: &str,
    path: &str,
    query: &[(&str, &str)],
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let client = reqwest::Client::new();
    s3_call(
        &client,
        s3,
        method,
        path,
        query,
        headers,
        body,
        root_signer(s3),
    )
    .await
}

/// The base64 checksum `algorithm` (`crc32`, `crc32c`, `sha1`, `sha256` or `crc64nvme`) of
/// `data`, computed with s3s's hashers (what S3 sends in `x-amz-checksum-<algorithm>`).
pub fn checksum(algorithm: &str, data: &[u8]) -> String {
    let mut h = s3s::checksum::ChecksumHasher::default();
    match algorithm {
        "crc32" => h.crc32 = Some(Default::default()),
        "crc32c" => h.crc32c = Some(Default::default()),
        "sha1" => h.sha1 = Some(Default::default()),
        "sha256" => h.sha256 = Some(Default::default()),
        "crc64nvme" => h.crc64nvme = Some(Default::default()),
        other => panic!("unknown checksum algorithm {other}"),
    }
    h.update(data);
    let c = h.finalize();
    c.checksum_crc32
        .or(c.checksum_crc32c)
        .or(c.checksum_sha1)
        .or(c.checksum_sha256)
        .or(c.checksum_crc64nvme)
        .unwrap()
}
