//! A1 (found by an attack on this library, not a field case): an endpoint that echoes the request's secrets in its error answer (the session token,
//! the secret key, the SAS, the `Authorization` header, a presigned URL's signature) on S3
//! (static credentials and a provider's), Azure (SAS) and GCS (bearer token). No error's
//! message, `Debug`, source chain or log line contains any of them; the message still names
//! the operation, the location, the status and the endpoint's code.

use crate::catalog_support::{MockCatalog, Recorded, Reply};
use crate::common;
use crate::emulators::{account_sas, now_millis};

use std::sync::Arc;

use common::providers::{fn_provider, opts};
use vended_storage::{Error, ErrorKind, RefreshConfig, StorageOptions, VendedStore};

const SECRET_KEY: &str = "c32SECRETKEYwJalrXUtnFEMIbPxRfiCY";
const SESSION_TOKEN: &str = "c32TOKEN/IQoJb3JpZ2luX2VjE+abc=";
const BEARER: &str = "ya29.c32-bearer-token-value";
/// A presigned URL's signature and an `Authorization` header the endpoint says it saw.
const SIGNATURE: &str = "c32sig0123456789abcdef0123456789";

/// An error document for `request` that quotes every secret the request carried (its query,
/// its `Authorization` and `x-amz-security-token` headers) and `extra`: what a careless
/// endpoint or proxy does.
fn echo(request: &Recorded, extra: &[&str]) -> String {
    let header = |name| request.header(name).unwrap_or("-").to_string();
    format!(
        "denied: token={} auth={} also {} for {} {} at http://127.0.0.1/b/k?X-Amz-Signature={SIGNATURE}&X-Amz-Credential=AKID%2F20261207&X-Amz-Security-Token={} Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/s3/aws4_request, Signature={SIGNATURE}",
        header("x-amz-security-token"),
        header("authorization"),
        extra.join(" "),
        request.method,
        request.target,
        percent_encoding::utf8_percent_encode(SESSION_TOKEN, percent_encoding::NON_ALPHANUMERIC),
    )
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A server that refuses everything with a 403 echoing the request's secrets, in `cloud`'s
/// error format (`s3`, `az`, `gs`).
fn echoing_server(cloud: &'static str, extra: &'static [&'static str]) -> MockCatalog {
    MockCatalog::start(move |r| {
        let text = echo(r, extra);
        match cloud {
            "gs" => Reply::json(
                403,
                serde_json::json!({"error": {"code": 403, "message": text,
                    "errors": [{"reason": "forbidden", "message": text}]}})
                .to_string(),
            ),
            _ => {
                let code = if cloud == "az" {
                    "AuthorizationFailure"
                } else {
                    "AccessDenied"
                };
                Reply::xml(
                    403,
                    format!(
                        "<?xml version=\"1.0\"?><Error><Code>{code}</Code><Message>{}</Message><RequestId>1</RequestId></Error>",
                        xml_escape(&text)
                    ),
                )
            }
        }
    })
}

fn open(uri: &str, options: StorageOptions, provider: bool) -> VendedStore {
    let provider = provider.then(|| {
        let vended = opts(&[
            ("aws_access_key_id", "AKIDC32PROVIDER"),
            ("aws_secret_access_key", SECRET_KEY),
            ("aws_session_token", SESSION_TOKEN),
            ("expires_at_millis", &(now_millis() + 3_600_000).to_string()),
        ]);
        fn_provider(move |_| Ok(Some(vended.clone())))
            as Arc<dyn vended_storage::StorageOptionsProvider>
    });
    common::registry()
        .open(uri, options, provider, RefreshConfig::default())
        .unwrap_or_else(|e| panic!("open {uri}: {e}"))
}

/// Every text an error shows: its message, its `Debug`, and each source's message.
fn texts(e: &Error) -> Vec<String> {
    let mut out = vec![e.to_string(), format!("{e:?}")];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push(format!("{s} | {s:?}"));
        source = s.source();
    }
    out
}

/// Runs get, a range, head and list on `store` (under `<scheme>://c32/p`): each fails with
/// kind `Credentials` and a message naming the operation, the location, the status and `code`
/// (`head` after the status for `HEAD`: GCS answers it without a body).
/// Returns every text of every error (see [`texts`]).
async fn refused(store: &VendedStore, scheme: &str, code: &str, head: &str) -> Vec<String> {
    let at = format!("{scheme}://c32/p/dir/k");
    let calls: Vec<(String, Error)> = vec![
        (
            format!("GET {at}: 403 {code}: "),
            store.get("dir/k").await.unwrap_err(),
        ),
        (
            format!("GET {at}: 403 {code}: "),
            store.get_range("dir/k", 0..4).await.unwrap_err(),
        ),
        (
            format!("HEAD {at}: 403 {head}"),
            store.head("dir/k").await.unwrap_err(),
        ),
        (
            format!("LIST {scheme}://c32/p/dir/: 403 {code}: "),
            store.list(Some("dir")).await.unwrap_err(),
        ),
    ];
    let mut all = Vec::new();
    for (start, e) in calls {
        let message = e.to_string();
        eprintln!("{scheme}: {message}");
        assert!(
            message.starts_with(&start),
            "expected '{start}...', got: {message}"
        );
        assert_eq!(e.kind(), ErrorKind::Credentials, "{message}");
        all.extend(texts(&e));
    }
    all
}

/// No text, and no log record, contains one of `secrets`.
fn assert_no_secret(texts: &[String], secrets: &[&str]) {
    let records = common::logs::records();
    for text in texts.iter().chain(records.iter()) {
        for s in secrets {
            assert!(!s.is_empty());
            assert!(!text.contains(s), "'{s}' in: {text}");
        }
    }
}

/// The signatures of the `Authorization` headers `server` received (SigV4: `Signature=...`).
fn signatures_seen(server: &MockCatalog) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization"))
        .filter_map(|a| a.split("Signature=").nth(1))
        .map(str::to_string)
        .collect()
}

fn s3_options(url: &str, with_credentials: bool) -> StorageOptions {
    let mut o = opts(&[
        ("aws_endpoint", url),
        ("aws_allow_http", "true"),
        ("aws_region", "us-east-1"),
        ("max_retries", "0"),
    ]);
    if with_credentials {
        o.extend(opts(&[
            ("aws_access_key_id", "AKIDC32STATIC"),
            ("aws_secret_access_key", SECRET_KEY),
            ("aws_session_token", SESSION_TOKEN),
        ]));
    }
    o
}

/// The secrets every S3 case checks: the store's own, a presigned URL's, and the signatures the
/// server saw.
fn s3_secrets(server: &MockCatalog) -> Vec<String> {
    let mut s = vec![
        SECRET_KEY.to_string(),
        SESSION_TOKEN.to_string(),
        SIGNATURE.to_string(),
    ];
    let seen = signatures_seen(server);
    assert!(!seen.is_empty(), "the requests were signed");
    s.extend(seen);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_s3_static_credentials_echoed_by_the_endpoint_are_never_shown() {
    common::logs::capture();
    let server = echoing_server("s3", &[SECRET_KEY]);
    let store = open("s3://c32/p", s3_options(&server.url(), true), false);
    let texts = refused(&store, "s3", "AccessDenied", "AccessDenied: ").await;
    let secrets = s3_secrets(&server);
    assert_no_secret(
        &texts,
        &secrets.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    // The server did see the token: the test is not vacuous.
    let seen = server.requests();
    assert!(seen
        .iter()
        .any(|r| r.header("x-amz-security-token") == Some(SESSION_TOKEN)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_s3_provider_credentials_echoed_by_the_endpoint_are_never_shown() {
    common::logs::capture();
    let server = echoing_server("s3", &[SECRET_KEY]);
    // The options carry no credential: only the refresher knows the secrets.
    let store = open("s3://c32/p", s3_options(&server.url(), false), true);
    let texts = refused(&store, "s3", "AccessDenied", "AccessDenied: ").await;
    let secrets = s3_secrets(&server);
    assert_no_secret(
        &texts,
        &secrets.iter().map(String::as_str).collect::<Vec<_>>(),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_azure_sas_echoed_by_the_endpoint_is_never_shown() {
    common::logs::capture();
    let sas = account_sas(now_millis() + 600_000, false);
    let sig = sas
        .split('&')
        .find_map(|p| p.strip_prefix("sig="))
        .unwrap()
        .to_string();
    let decoded = percent_encoding::percent_decode_str(&sig)
        .decode_utf8_lossy()
        .into_owned();
    let server = echoing_server("az", &[]);
    let options = opts(&[
        ("azure_storage_use_emulator", "true"),
        ("azure_storage_endpoint", &server.url()),
        ("azure_storage_account_name", "devstoreaccount1"),
        ("azure_storage_sas_token", &sas),
        ("max_retries", "0"),
    ]);
    let store = open("az://c32/p", options, false);
    let texts = refused(
        &store,
        "az",
        "AuthorizationFailure",
        "AuthorizationFailure: ",
    )
    .await;
    assert_no_secret(&texts, &[&sig, &decoded, SIGNATURE]);
    assert!(server.requests().iter().any(|r| r.target.contains(&sig)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_gcs_bearer_token_echoed_by_the_endpoint_is_never_shown() {
    common::logs::capture();
    let server = echoing_server("gs", &[]);
    let options = opts(&[
        ("google_base_url", &server.url()),
        ("google_storage_token", BEARER),
        ("expires_at_millis", &(now_millis() + 600_000).to_string()),
        ("max_retries", "0"),
    ]);
    let store = open("gs://c32/p", options, false);
    let texts = refused(
        &store,
        "gs",
        "forbidden",
        "Forbidden (an answer to HEAD carries no error code)",
    )
    .await;
    assert_no_secret(&texts, &[BEARER, SIGNATURE]);
    assert!(server
        .requests()
        .iter()
        .any(|r| r.header("authorization") == Some(&format!("Bearer {BEARER}"))));
}
