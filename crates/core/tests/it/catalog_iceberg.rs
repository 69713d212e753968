//! The Iceberg REST credentials provider against a local catalog that answers as the Iceberg
//! REST OpenAPI spec's `loadCredentials` does (`LoadCredentialsResponse`,
//! `IcebergErrorResponse`): prefix choice, key mapping, a missing expiry, every failure
//! status, and a store that keeps working on the credentials it vends.

use crate::catalog_support;
use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_support::{MockCatalog, Reply};
use common::{endpoint, registry, BUCKET};
use serde_json::json;
use vended_storage::catalog::{catalog_error, CatalogErrorKind, IcebergRestCredentialsProvider};
use vended_storage::{Error, RefreshConfig, StorageOptions, StorageOptionsProvider};

const TOKEN: &str = "tenant-a-oauth-token-0123456789";

fn provider(catalog: &MockCatalog, location: &str) -> IcebergRestCredentialsProvider {
    IcebergRestCredentialsProvider::builder(catalog.url(), ["db", "sales"], "orders", location)
        .prefix("wh")
        .token(TOKEN)
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap()
}

fn s3_config(key: &str, expires: Option<i64>) -> serde_json::Value {
    let mut c = json!({
        "s3.access-key-id": key,
        "s3.secret-access-key": format!("secret-of-{key}"),
        "s3.session-token": format!("token-of-{key}"),
        "s3.endpoint": "http://catalog-side-endpoint.invalid",
        "client.region": "catalog-region"
    });
    if let Some(e) = expires {
        c["s3.session-token-expires-at-ms"] = json!(e.to_string());
    }
    c
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test]
async fn longest_prefix_wins_and_iceberg_keys_become_storage_options() {
    let expires = now_millis() + 3_600_000;
    let catalog = MockCatalog::start(move |_| {
        Reply::json(
            200,
            json!({"storage-credentials": [
                {"prefix": "s3://bucket/", "config": s3_config("BUCKET-WIDE", Some(expires))},
                {"prefix": "s3://bucket/wh/db/orders", "config": s3_config("TABLE", Some(expires))},
                {"prefix": "s3://bucket/wh/db/orders_archive", "config": s3_config("OTHER-TABLE", Some(expires))},
                {"prefix": "s3://bucket/wh", "config": s3_config("WAREHOUSE", Some(expires))},
                {"prefix": "gs://bucket/wh/db/orders", "config": {"gcs.oauth2.token": "ya29", "gcs.oauth2.token-expires-at": expires.to_string()}}
            ]})
            .to_string(),
        )
    });
    let p = provider(&catalog, "s3://bucket/wh/db/orders");
    let options = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["aws_access_key_id"], "TABLE");
    assert_eq!(options["aws_secret_access_key"], "secret-of-TABLE");
    assert_eq!(options["aws_session_token"], "token-of-TABLE");
    assert_eq!(options["expires_at_millis"], expires.to_string());
    assert_eq!(
        options.len(),
        4,
        "endpoint and region are not vended: {:?}",
        options.keys()
    );

    let requests = catalog.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.method, "GET");
    assert_eq!(
        r.target,
        "/v1/wh/namespaces/db%1Fsales/tables/orders/credentials"
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );

    // Another location of the same catalog answer picks its own entry.
    let archive = provider(&catalog, "s3://bucket/wh/db/orders_archive/data");
    let options = archive.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["aws_access_key_id"], "OTHER-TABLE");
    let elsewhere = provider(&catalog, "s3://bucket/other/t");
    let options = elsewhere.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["aws_access_key_id"], "BUCKET-WIDE");
    // A prefix covers whole path segments: `s3://bucket/wh`'s credential is not applied to
    // `s3://bucket/wh2/t` (apache/iceberg#17003); the bucket-wide one is.
    let sibling = provider(&catalog, "s3://bucket/wh2/t");
    let options = sibling.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["aws_access_key_id"], "BUCKET-WIDE");
}

#[tokio::test]
async fn a_credential_without_expiry_is_returned_without_expires_at_millis() {
    let catalog = MockCatalog::start(|_| {
        Reply::json(200, json!({"storage-credentials": [{"prefix": "s3://bucket/t", "config": s3_config("K", None)}]}).to_string())
    });
    let options = provider(&catalog, "s3://bucket/t")
        .fetch_storage_options()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(options["aws_access_key_id"], "K");
    assert!(
        !options.contains_key("expires_at_millis"),
        "{:?}",
        options.keys()
    );
}

fn assert_clean(text: &str) {
    assert!(!text.contains(TOKEN), "token leaked: {text}");
    assert!(!text.contains("secret-of-"), "secret leaked: {text}");
}

#[tokio::test]
async fn every_failure_is_a_clear_provider_error_with_status_and_catalog_message() {
    let location = "s3://bucket/wh/db/orders";
    let err_body = |code: u16, kind: &str, msg: &str| {
        json!({"error": {"message": msg, "type": kind, "code": code}}).to_string()
    };
    let cases: Vec<(Reply, CatalogErrorKind, Option<u16>, &str, bool)> = vec![
        (
            Reply::json(404, err_body(404, "NoSuchTableException", "Table does not exist: db.sales.orders")),
            CatalogErrorKind::NotFound,
            Some(404),
            "Table does not exist: db.sales.orders",
            false,
        ),
        (
            Reply::json(401, err_body(401, "NotAuthorizedException", &format!("Bearer {TOKEN} is not valid"))),
            CatalogErrorKind::Unauthorized,
            Some(401),
            "*** is not valid",
            false,
        ),
        (
            Reply::json(403, err_body(403, "ForbiddenException", "Principal alice may not read db.sales.orders")),
            CatalogErrorKind::Forbidden,
            Some(403),
            "Principal alice may not read",
            false,
        ),
        (
            Reply::json(500, err_body(500, "InternalServerError", "credential vending backend failed")),
            CatalogErrorKind::ServerError,
            Some(500),
            "credential vending backend failed",
            true,
        ),
        (
            Reply::json(503, "<html>upstream unavailable</html>"),
            CatalogErrorKind::ServerError,
            Some(503),
            "upstream unavailable",
            true,
        ),
        (
            Reply::json(406, err_body(406, "UnsupportedOperationException", "credential vending is not enabled")),
            CatalogErrorKind::ClientError,
            Some(406),
            "credential vending is not enabled",
            false,
        ),
        (Reply::json(200, "{\"storage-credentials\": ["), CatalogErrorKind::MalformedResponse, Some(200), "not valid JSON", false),
        (Reply::json(200, "{}"), CatalogErrorKind::MissingField, Some(200), "no storage-credentials", false),
        (
            Reply::json(200, json!({"storage-credentials": [{"prefix": "s3://other/", "config": s3_config("X", None)}]}).to_string()),
            CatalogErrorKind::MissingField,
            Some(200),
            "s3://other/",
            false,
        ),
        (
            Reply::json(200, "{}").after(Duration::from_millis(2500)),
            CatalogErrorKind::Timeout,
            None,
            "no answer within 800 ms",
            true,
        ),
    ];
    for (reply, kind, status, needle, retryable) in cases {
        let label = format!("{} {}", reply.status, reply.body);
        let catalog = MockCatalog::start(move |_| reply.clone());
        let p = provider(&catalog, location);
        let started = Instant::now();
        let e = p.fetch_storage_options().await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{label}: took {:?}",
            started.elapsed()
        );
        assert_eq!(
            catalog.count(),
            1,
            "{label}: the provider itself never retries"
        );
        let text = e.to_string();
        assert!(matches!(e, Error::Provider { .. }), "{label}: {e:?}");
        assert!(text.contains(&p.provider_id()), "{label}: {text}");
        assert!(
            text.contains("Iceberg REST load credentials of table 'db.sales.orders'"),
            "{label}: {text}"
        );
        assert!(text.contains(needle), "{label}: {text}");
        if let Some(s) = status {
            assert!(text.contains(&format!("HTTP {s}")), "{label}: {text}");
        }
        assert_clean(&text);
        assert_clean(&format!("{e:?}"));
        let c = catalog_error(&e).expect("a CatalogError source");
        assert_eq!(
            (c.kind, c.status, c.is_retryable()),
            (kind, status, retryable),
            "{label}: {c:?}"
        );
        if status == Some(404) {
            assert_eq!(c.code.as_deref(), Some("NoSuchTableException"));
        }
    }

    // Nobody listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = IcebergRestCredentialsProvider::builder(
        format!("http://127.0.0.1:{port}"),
        ["db"],
        "t",
        location,
    )
    .token(TOKEN)
    .build()
    .unwrap();
    let e = p.fetch_storage_options().await.unwrap_err();
    let c = catalog_error(&e).unwrap();
    assert_eq!((c.kind, c.status), (CatalogErrorKind::Transport, None));
    assert!(
        c.is_retryable() && e.to_string().contains("cannot connect"),
        "{e}"
    );
    assert_clean(&e.to_string());
}

#[test]
fn tenants_with_different_tokens_have_different_provider_ids() {
    let build = |token: &str| {
        IcebergRestCredentialsProvider::builder(
            "http://127.0.0.1:1/catalog",
            ["db"],
            "orders",
            "s3://b/db/orders",
        )
        .token(token)
        .build()
        .unwrap()
    };
    let (a, a2, b) = (
        build("token-of-alice"),
        build("token-of-alice"),
        build("token-of-bob"),
    );
    assert_eq!(a.provider_id(), a2.provider_id());
    assert_ne!(a.provider_id(), b.provider_id());
    for p in [&a, &b] {
        let shown = format!("{} {:?}", p.provider_id(), p);
        assert!(
            !shown.contains("alice") && !shown.contains("bob"),
            "{shown}"
        );
        assert!(
            shown.contains(
                "iceberg-rest:http://127.0.0.1:1/catalog::db.orders:s3://b/db/orders:auth="
            ),
            "{shown}"
        );
    }
}

/// A catalog that vends the local endpoint's temporary credentials, each living `ttl`,
/// failing the calls whose (0-based) number is in `fail_calls` with a 503.
fn vending_catalog(
    s3: Arc<local_s3::LocalS3>,
    ttl: Duration,
    fail_calls: Vec<usize>,
) -> (MockCatalog, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let catalog = MockCatalog::start(move |_| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        if fail_calls.contains(&n) {
            return Reply::json(503, json!({"error": {"message": "catalog overloaded", "type": "ServiceUnavailableException", "code": 503}}).to_string());
        }
        let c = s3.issue_credentials(ttl, Some(&format!("{BUCKET}/iceberg/")));
        Reply::json(
            200,
            json!({"storage-credentials": [{"prefix": format!("s3://{BUCKET}/iceberg"), "config": {
                "s3.access-key-id": c.access_key_id,
                "s3.secret-access-key": c.secret_access_key,
                "s3.session-token": c.session_token,
                "s3.session-token-expires-at-ms": c.expires_at_millis.to_string(),
            }}]})
            .to_string(),
        )
    });
    (catalog, calls)
}

fn client_options(s3: &local_s3::LocalS3) -> StorageOptions {
    HashMap::from([
        ("aws_endpoint".to_string(), s3.endpoint()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_keeps_working_on_vended_credentials_and_rides_out_5xx_with_backoff() {
    let s3 = endpoint().await;
    // Calls 1 and 2 (the first two refreshes) fail with 503; call 0 is the first fetch.
    let (catalog, calls) = vending_catalog(s3.clone(), Duration::from_secs(4), vec![1, 2]);
    let location = format!("s3://{BUCKET}/iceberg/db/orders");
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "orders", &location)
            .token(TOKEN)
            .build()
            .unwrap(),
    );
    let refresh = RefreshConfig {
        lead_time: Duration::from_secs(2),
        initial_backoff: Duration::from_millis(300),
        max_backoff: Duration::from_millis(600),
        ..RefreshConfig::default()
    };
    // No credentials in the initial options: the first request fetches them (C10: the
    // endpoint and region are the client's own and survive every refresh).
    let store = registry()
        .open(
            &location,
            client_options(&s3),
            Some(provider.clone() as _),
            refresh,
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(7);
    let mut i = 0;
    while Instant::now() < deadline {
        let body = Bytes::from(format!("row {i}"));
        store
            .put(&format!("data/{i}"), body.clone())
            .await
            .expect("put");
        assert_eq!(store.get(&format!("data/{i}")).await.expect("get"), body);
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 2, "{stats:?}");
    let n = calls.load(Ordering::SeqCst);
    // 7 s of 4 s credentials refreshed 2 s before expiry: fetch, 2 failures, ~3 refreshes.
    assert!((4..=8).contains(&n), "{n} catalog calls: {stats:?}");
    assert_eq!(stats.fetches as usize, n);
    let current = store.refresher().unwrap().current_options();
    assert_eq!(current["aws_endpoint"], s3.endpoint());
    for (key, st) in s3.all_stats() {
        assert_eq!(st.rejected, 0, "key {key} was rejected: {st:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permanent_404_reaches_callers_once_the_credential_expired() {
    let s3 = endpoint().await;
    let (catalog, _) = vending_catalog(s3.clone(), Duration::from_secs(2), vec![]);
    let location = format!("s3://{BUCKET}/iceberg/db/gone");
    let good = IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "gone", &location)
        .build()
        .unwrap();
    let initial = good.fetch_storage_options().await.unwrap().unwrap();
    let missing = MockCatalog::start(|_| {
        Reply::json(404, json!({"error": {"message": "Table does not exist: db.gone", "type": "NoSuchTableException", "code": 404}}).to_string())
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(missing.url(), ["db"], "gone", &location)
            .token(TOKEN)
            .build()
            .unwrap(),
    );
    let mut options = client_options(&s3);
    options.extend(initial);
    let store = registry()
        .open(
            &location,
            options,
            Some(provider as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("a", Bytes::from_static(b"1"))
        .await
        .expect("the vended credential works until it expires");
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let e = store.get("a").await.unwrap_err();
    assert!(matches!(e, Error::CredentialsExpired { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("HTTP 404") && text.contains("Table does not exist: db.gone"),
        "{text}"
    );
    assert_clean(&text);
    let c = catalog_error(&e).expect("the catalog error travels inside CredentialsExpired");
    assert_eq!(
        (c.kind, c.is_retryable()),
        (CatalogErrorKind::NotFound, false)
    );
}
