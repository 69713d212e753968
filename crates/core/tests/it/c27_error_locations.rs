//! C27: a missing object, a missing bucket (container) and a denied request, on S3 (the local
//! endpoint), Azure (Azurite, SAS-signed) and GCS (fake-gcs-server behind the bearer-token
//! proxy), through `get`, `get_range`, `head` and `list`: every message names the operation and
//! the location in the store's own terms (`s3://`, `az://`, `gs://`), never `REDACTED` nor a
//! percent-encoded endpoint URL nor a SAS signature or token; a missing bucket (container) is
//! told apart from a missing object; a missing bucket is still `NotFound`.

use crate::common;
use crate::emulators;

use std::sync::Arc;
use std::time::Duration;

use emulators::{
    account_sas, create_container, create_gcs_bucket, now_millis, start_azurite, start_fake_gcs,
    Proxy, TokenAuthority, AZURITE_ACCOUNT,
};
use vended_storage::cloud::located::{NO_LISTING, NO_WRITES};
use vended_storage::{Error, ErrorKind, RefreshConfig, StorageOptions, VendedStore};

/// Per call: its name, the error's kind and message.
type Outcomes = Vec<(&'static str, ErrorKind, String)>;

/// What one call answered: kind and message.
fn outcome<T: std::fmt::Debug>(what: &str, r: vended_storage::Result<T>) -> (ErrorKind, String) {
    let e: Error = r.expect_err(what);
    (e.kind(), e.to_string())
}

/// Every call of the case on `store`: get, range, head of `key`, and a list of `dir/` (which
/// must fail unless `list_works`; then it must not show `key`).
async fn calls(store: &VendedStore, key: &str, list_works: bool) -> Outcomes {
    let mut out = Vec::new();
    let (k, m) = outcome("get", store.get(key).await);
    out.push(("get", k, m));
    let (k, m) = outcome("range", store.get_range(key, 0..4).await);
    out.push(("range", k, m));
    let (k, m) = outcome("head", store.head(key).await);
    out.push(("head", k, m));
    if list_works {
        let listed = store.list(Some("dir")).await.expect("list");
        assert!(listed.iter().all(|o| o.path != key), "{listed:?}");
    } else {
        let (k, m) = outcome("list", store.list(Some("dir")).await);
        out.push(("list", k, m));
    }
    out
}

/// No message carries a redacted URL, a percent-encoded path, a SAS signature or `secrets`.
fn assert_clean(message: &str, secrets: &[&str]) {
    for bad in [
        "REDACTED",
        "%2F",
        "%2f",
        "sig=",
        "http://",
        "https://",
        "127.0.0.1",
    ] {
        assert!(!message.contains(bad), "'{bad}' in: {message}");
    }
    for s in secrets {
        assert!(!message.contains(s), "a secret in: {message}");
    }
}

/// `got` is exactly `expected` (operation, kind, message), and every message is clean.
fn assert_case(
    got: &[(&'static str, ErrorKind, String)],
    expected: &[(&'static str, ErrorKind, String)],
    secrets: &[&str],
) {
    for (op, kind, message) in got {
        eprintln!("{op}: {kind:?} {message}");
        assert_clean(message, secrets);
    }
    assert_eq!(got, expected);
}

/// get and range: `GET <at>: <get>`; head: `HEAD <at>: <head>`; with `list` (the listed
/// location and the answer): `LIST <dir>: <answer>`; all of `kind`.
fn expected(
    kind: ErrorKind,
    at: &str,
    get: &str,
    head: &str,
    list: Option<(&str, &str)>,
) -> Outcomes {
    let mut v = vec![
        ("get", kind, format!("GET {at}: {get}")),
        ("range", kind, format!("GET {at}: {get}")),
        ("head", kind, format!("HEAD {at}: {head}")),
    ];
    if let Some((dir, answer)) = list {
        v.push(("list", kind, format!("LIST {dir}: {answer}")));
    }
    v
}

/// The messages of a missing object (`<scheme>://<bucket>/<prefix>/dir/missing`) and of a
/// missing bucket (`<scheme>://<nobucket>/<prefix>/dir/missing`), with `codes` the endpoint's
/// codes for the two (object, bucket); `word` is `bucket` or `container`.
fn missing_expectations(
    scheme: &str,
    bucket: &str,
    nobucket: &str,
    prefix: &str,
    codes: (&str, &str),
    word: &str,
) -> (Outcomes, Outcomes) {
    let at = format!("{scheme}://{bucket}/{prefix}/dir/missing");
    let no = format!("no object at {at}");
    let object = expected(
        ErrorKind::NotFound,
        &at,
        &format!("404 {}: {no}", codes.0),
        &format!("404 Not Found: {no}"),
        None,
    );
    let gone = format!("{word} '{nobucket}' does not exist");
    let answer = format!("404 {}: {gone}", codes.1);
    let container = expected(
        ErrorKind::NotFound,
        &format!("{scheme}://{nobucket}/{prefix}/dir/missing"),
        &answer,
        &format!("404 Not Found: {gone}"),
        Some((&format!("{scheme}://{nobucket}/{prefix}/dir/"), &answer)),
    );
    (object, container)
}

/// The messages of a denied request on `<loc>/dir/present` with `status` (`403 Forbidden`) and
/// `code_message` (`AccessDenied: ..`). HEAD: a bodiless 403 is probed with one `GET`, whose
/// code and message it then carries (case C29); other statuses have no code.
fn denied_expectations(loc: &str, status: &str, code_message: &str) -> Outcomes {
    let (number, _) = status.split_once(' ').expect("status and reason");
    let answer = format!("{number} {code_message}");
    let head = if number == "403" {
        answer.clone()
    } else {
        format!("{status} (an answer to HEAD carries no error code)")
    };
    expected(
        ErrorKind::Credentials,
        &format!("{loc}/dir/present"),
        &answer,
        &head,
        Some((&format!("{loc}/dir/"), &answer)),
    )
}

/// Writes `dir/present` through `store`, then runs the calls of the three cases: a missing
/// object (in `store`), a missing bucket (`nobucket`), a denied request (`denied`).
async fn three_cases(
    store: &VendedStore,
    nobucket: &VendedStore,
    denied: &VendedStore,
) -> [Outcomes; 3] {
    store.put("dir/present", "x".into()).await.unwrap();
    [
        calls(store, "dir/missing", true).await,
        calls(nobucket, "dir/missing", false).await,
        calls(denied, "dir/present", false).await,
    ]
}

fn open(uri: &str, options: StorageOptions) -> VendedStore {
    common::registry()
        .open(uri, options, None, RefreshConfig::default())
        .unwrap_or_else(|e| panic!("open {uri}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c27_s3_messages_name_s3_locations() {
    let s3 = common::endpoint().await;
    let creds = s3.issue_credentials(Duration::from_secs(600), None);
    let options: StorageOptions = s3.storage_options(&creds);
    let secrets = [
        creds.secret_access_key.as_str(),
        creds.session_token.as_str(),
    ];
    let scoped = s3.issue_credentials(Duration::from_secs(600), Some("test-bucket/elsewhere/"));
    let [missing_object, missing_bucket, denied] = three_cases(
        &open("s3://test-bucket/c27", options.clone()),
        &open("s3://no-such-bucket/c27", options.clone()),
        &open("s3://test-bucket/c27", s3.storage_options(&scoped)),
    )
    .await;
    let (object, bucket) = missing_expectations(
        "s3",
        "test-bucket",
        "no-such-bucket",
        "c27",
        ("NoSuchKey", "NoSuchBucket"),
        "bucket",
    );
    assert_case(&missing_object, &object, &secrets);
    assert_case(&missing_bucket, &bucket, &secrets);
    let mut expected = denied_expectations(
        "s3://test-bucket/c27",
        "403 Forbidden",
        "AccessDenied: object test-bucket/c27/dir/present is outside the credential scope",
    );
    expected[3].2 = format!("LIST s3://test-bucket/c27/dir/: 403 AccessDenied: {NO_LISTING}: list prefix \"c27/dir/\" is outside the credential scope");
    assert_case(&denied, &expected, &secrets);
    // A fresh store's first HEAD of a missing object probes once and says what is missing.
    let fresh = open("s3://test-bucket/c27", options);
    let (kind, message) = outcome("head", fresh.head("dir/missing").await);
    assert_eq!(
        (kind, message.as_str()),
        (object[2].1, object[2].2.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c27_azure_messages_name_az_locations_never_redacted() {
    let Some(azurite) = start_azurite("c27_azure") else {
        return;
    };
    create_container(&azurite, "c27").await;
    let sas = account_sas(now_millis() + 600_000, false);
    let bad_sas = account_sas(now_millis() + 600_000, true);
    let options = |sas: &str| -> StorageOptions {
        [
            ("azure_storage_use_emulator", "true"),
            ("azure_storage_endpoint", azurite.url.as_str()),
            ("azure_storage_account_name", AZURITE_ACCOUNT),
            ("azure_storage_sas_token", sas),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    };
    let [missing_object, missing_container, denied] = three_cases(
        &open("az://c27/p", options(&sas)),
        &open("az://no-such-container/p", options(&sas)),
        &open("az://c27/p", options(&bad_sas)),
    )
    .await;
    let sig = |s: &str| {
        s.split('&')
            .find_map(|p| p.strip_prefix("sig="))
            .unwrap()
            .to_string()
    };
    let secrets = [sig(&sas), sig(&bad_sas)];
    let secrets = [secrets[0].as_str(), secrets[1].as_str()];
    let (object, container) = missing_expectations(
        "az",
        "c27",
        "no-such-container",
        "p",
        ("BlobNotFound", "ContainerNotFound"),
        "container",
    );
    assert_case(&missing_object, &object, &secrets);
    assert_case(&missing_container, &container, &secrets);
    let expected = denied_expectations(
        "az://c27/p",
        "403 Forbidden",
        "AuthorizationFailure: Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.",
    );
    assert_case(&denied, &expected, &secrets);
    let fresh = open("az://c27/p", options(&sas));
    let (kind, message) = outcome("head", fresh.head("dir/missing").await);
    assert_eq!(
        (kind, message.as_str()),
        (object[2].1, object[2].2.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c27_gcs_messages_name_gs_locations_never_the_endpoint_url() {
    let Some(gcs) = start_fake_gcs("c27_gcs") else {
        return;
    };
    create_gcs_bucket(&gcs, "c27").await;
    let authority = Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    let expires = now_millis() + 600_000;
    let token = authority.issue(expires);
    let options = |token: &str| -> StorageOptions {
        [
            ("google_base_url", proxy.url.clone()),
            ("google_storage_token", token.to_string()),
            ("expires_at_millis", expires.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    };
    let unknown = "ya29.not-issued-by-the-proxy";
    let nobucket = open("gs://no-such-bucket/p", options(&token));
    let [missing_object, missing_bucket, denied] = three_cases(
        &open("gs://c27/p", options(&token)),
        &nobucket,
        &open("gs://c27/p", options(unknown)),
    )
    .await;
    let secrets = [token.as_str(), unknown];
    let (object, bucket) = missing_expectations(
        "gs",
        "c27",
        "no-such-bucket",
        "p",
        ("NoSuchKey", "NoSuchBucket"),
        "bucket",
    );
    assert_case(&missing_object, &object, &secrets);
    assert_case(&missing_bucket, &bucket, &secrets);
    let expected = denied_expectations(
        "gs://c27/p",
        "401 Unauthorized",
        "Unauthorized: Invalid Credentials",
    );
    assert_case(&denied, &expected, &secrets);
    // A fresh store's first HEAD of a missing object is one HEAD and one probe GET; the store
    // then knows its bucket exists: the next HEAD is one request. A missing bucket is never
    // remembered: each HEAD probes.
    let fresh = open("gs://c27/p", options(&token));
    let before = proxy.stats.requests();
    let (kind, message) = outcome("head", fresh.head("dir/missing").await);
    assert_eq!(
        (kind, message.as_str()),
        (object[2].1, object[2].2.as_str())
    );
    assert_eq!(proxy.stats.requests() - before, 2, "HEAD and one probe");
    let before = proxy.stats.requests();
    let (_, again) = outcome("head", fresh.head("dir/missing2").await);
    assert!(
        again.ends_with("no object at gs://c27/p/dir/missing2"),
        "{again}"
    );
    assert_eq!(
        proxy.stats.requests() - before,
        1,
        "no probe once the bucket is known"
    );
    for _ in 0..2 {
        let before = proxy.stats.requests();
        let (_, m) = outcome("head", nobucket.head("dir/missing").await);
        assert!(m.ends_with("bucket 'no-such-bucket' does not exist"), "{m}");
        assert_eq!(proxy.stats.requests() - before, 2, "HEAD and one probe");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c27_s3_writes_copies_and_deletes_name_their_locations_too() {
    let s3 = common::endpoint().await;
    let creds = s3.issue_credentials(Duration::from_secs(600), None);
    let options: StorageOptions = s3.storage_options(&creds);
    let scoped = s3.issue_credentials(Duration::from_secs(600), Some("test-bucket/elsewhere/"));
    let secrets = [
        creds.secret_access_key.as_str(),
        scoped.secret_access_key.as_str(),
    ];
    let store = open("s3://test-bucket/c27w", options.clone());
    store.put("dir/present", "x".into()).await.unwrap();
    let nobucket = open("s3://no-such-bucket/c27w", options);
    let denied = open("s3://test-bucket/c27w", s3.storage_options(&scoped));
    let at = "s3://test-bucket/c27w/dir";
    let refused = |what: &str| format!("{NO_WRITES}: {what} is outside the credential scope");
    let got = vec![
        (
            "copy",
            outcome("copy", store.copy("dir/missing", "dir/copy").await),
        ),
        (
            "put",
            outcome("put", nobucket.put("dir/x", "x".into()).await),
        ),
        ("put", outcome("put", denied.put("dir/x", "x".into()).await)),
        (
            "delete",
            outcome("delete", denied.delete("dir/present").await),
        ),
        (
            "copy",
            outcome("copy", denied.copy("dir/present", "dir/copy").await),
        ),
    ];
    let got: Outcomes = got.into_iter().map(|(op, (k, m))| (op, k, m)).collect();
    let expected: Outcomes = vec![
        (
            "copy",
            ErrorKind::NotFound,
            format!("COPY {at}/missing -> {at}/copy: 404 NoSuchKey: no object at {at}/missing"),
        ),
        (
            "put",
            ErrorKind::NotFound,
            "PUT s3://no-such-bucket/c27w/dir/x: 404 NoSuchBucket: bucket 'no-such-bucket' does not exist".into(),
        ),
        (
            "put",
            ErrorKind::Credentials,
            format!(
                "PUT {at}/x: 403 AccessDenied: {}",
                refused("object test-bucket/c27w/dir/x")
            ),
        ),
        (
            "delete",
            ErrorKind::Credentials,
            format!(
                "DELETE {at}/present: 403 AccessDenied: {}",
                refused("object test-bucket/c27w/dir/present")
            ),
        ),
        (
            "copy",
            ErrorKind::Credentials,
            format!(
                "COPY {at}/present -> {at}/copy: 403 AccessDenied: {}",
                refused("object test-bucket/c27w/dir/copy")
            ),
        ),
    ];
    assert_case(&got, &expected, &secrets);
}
