//! The Iceberg REST provider started from what `loadTable` (or a stage-create, or a scan plan)
//! returned, against scripted local catalogs: the first answer is the table's own credential
//! (no call), refreshes go to the refresh endpoint the table config names for the location's
//! cloud (absolute, or relative to the catalog URI and its path), `?planId=` is forwarded, a
//! staged table's `404` says so and heals once the create commits, and a malformed expiry in
//! a refresh answer is named by its key. Every test counts the catalog calls.

use crate::catalog_support;
use crate::common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_support::{MockCatalog, Reply};
use common::{endpoint, registry, BUCKET};
use serde_json::json;
use vended_storage::catalog::iceberg::{
    ADLS_REFRESH_ENDPOINT, GCS_REFRESH_ENDPOINT, S3_REFRESH_ENDPOINT,
};
use vended_storage::catalog::{catalog_error, CatalogErrorKind, IcebergRestCredentialsProvider};
use vended_storage::{RefreshConfig, StorageOptionsProvider};

const TOKEN: &str = "tenant-a-oauth-token-0123456789";

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn s3_answer(prefix: &str, key: &str) -> Reply {
    let expires = (now_millis() + 3_600_000).to_string();
    Reply::json(
        200,
        json!({"storage-credentials": [{"prefix": prefix, "config": {
            "s3.access-key-id": key, "s3.secret-access-key": "secret-of-refresh",
            "s3.session-token": "t", "s3.session-token-expires-at-ms": expires}}]})
        .to_string(),
    )
}

fn seed(key: &str) -> Vec<(&'static str, String)> {
    vec![
        ("s3.access-key-id", key.to_string()),
        ("s3.secret-access-key", "secret-of-seed".to_string()),
        ("s3.session-token", "t".to_string()),
        (
            "s3.session-token-expires-at-ms",
            (now_millis() + 3_600_000).to_string(),
        ),
    ]
}

#[tokio::test]
async fn first_answer_from_load_table_then_refresh_via_the_relative_endpoint_under_the_catalog_path(
) {
    let catalog = MockCatalog::start(|_| s3_answer("s3://bucket/wh/db/orders", "REFRESHED"));
    let location = "s3://bucket/wh/db/orders";
    for endpoint in [
        "/v1/wh/namespaces/db/tables/orders/credentials",
        "v1/wh/namespaces/db/tables/orders/credentials",
    ] {
        let before = catalog.count();
        let p = IcebergRestCredentialsProvider::builder(
            format!("{}/api/catalog", catalog.url()),
            ["db"],
            "orders",
            location,
        )
        .prefix("wh")
        .token(TOKEN)
        .load_table_config([(S3_REFRESH_ENDPOINT, endpoint), ("s3.endpoint", "http://x")])
        .storage_credential("s3://bucket/", seed("BUCKET-WIDE"))
        .storage_credential(location, seed("LOAD-TABLE"))
        .build()
        .unwrap();
        let first = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(first["aws_access_key_id"], "LOAD-TABLE");
        assert_eq!(
            (catalog.count() - before, p.calls()),
            (0, 0),
            "no call for the first answer"
        );
        let refreshed = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(refreshed["aws_access_key_id"], "REFRESHED");
        assert_eq!((catalog.count() - before, p.calls()), (1, 1));
        let r = catalog.requests().pop().unwrap();
        assert_eq!(
            (r.method.as_str(), r.target.as_str()),
            (
                "GET",
                "/api/catalog/v1/wh/namespaces/db/tables/orders/credentials"
            )
        );
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
}

#[tokio::test]
async fn an_absolute_endpoint_is_called_as_is_and_the_plan_id_is_forwarded() {
    let catalog = MockCatalog::start(|_| Reply::json(500, "{}"));
    let refresher = MockCatalog::start(|_| s3_answer("s3://bucket/", "PLAN-SCOPED"));
    let p =
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "orders", "s3://bucket/t")
            .load_table_config([(
                S3_REFRESH_ENDPOINT,
                format!("{}/refresh/v1/credentials", refresher.url()),
            )])
            .plan_id("plan-42 a/b")
            .build()
            .unwrap();
    let o = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(o["aws_access_key_id"], "PLAN-SCOPED");
    assert_eq!((catalog.count(), refresher.count(), p.calls()), (0, 1, 1));
    assert_eq!(
        refresher.requests()[0].target,
        "/refresh/v1/credentials?planId=plan-42+a%2Fb"
    );
    // Without a refresh endpoint the plan id goes on loadCredentials.
    let standard = MockCatalog::start(|_| s3_answer("s3://bucket/", "STANDARD"));
    let p =
        IcebergRestCredentialsProvider::builder(standard.url(), ["db"], "orders", "s3://bucket/t")
            .plan_id("p1")
            .build()
            .unwrap();
    p.fetch_storage_options().await.unwrap();
    assert_eq!(
        standard.requests()[0].target,
        "/v1/namespaces/db/tables/orders/credentials?planId=p1"
    );
}

#[tokio::test]
async fn each_cloud_refreshes_through_its_own_endpoint_key() {
    let expires = (now_millis() + 3_600_000).to_string();
    let e2 = expires.clone();
    let catalog = MockCatalog::start(move |r| {
        let e = &e2;
        let body = if r.target.ends_with("/gcs") {
            json!({"storage-credentials": [{"prefix": "gs://b/", "config": {
                "gcs.oauth2.token": "ya29-fresh", "gcs.oauth2.token-expires-at": e}}]})
        } else if r.target.ends_with("/adls") {
            json!({"storage-credentials": [{"prefix": "abfss://c@acct.dfs.core.windows.net/", "config": {
                "adls.sas-token.acct.dfs.core.windows.net": "sv=fresh",
                "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net": e}}]})
        } else {
            json!({"storage-credentials": [{"prefix": "s3://b/", "config": {
                "s3.access-key-id": "S3-FRESH", "s3.secret-access-key": "s"}}]})
        };
        Reply::json(200, body.to_string())
    });
    let config = [
        (S3_REFRESH_ENDPOINT, "v1/refresh/s3"),
        (ADLS_REFRESH_ENDPOINT, "v1/refresh/adls"),
        (GCS_REFRESH_ENDPOINT, "v1/refresh/gcs"),
    ];
    for (location, path, key, value) in [
        (
            "s3a://b/t",
            "/cat/v1/refresh/s3",
            "aws_access_key_id",
            "S3-FRESH",
        ),
        (
            "gs://b/t",
            "/cat/v1/refresh/gcs",
            "google_bearer_token",
            "ya29-fresh",
        ),
        (
            "abfss://c@acct.dfs.core.windows.net/t",
            "/cat/v1/refresh/adls",
            "azure_storage_sas_token",
            "sv=fresh",
        ),
    ] {
        let before = catalog.count();
        let p = IcebergRestCredentialsProvider::builder(
            format!("{}/cat/", catalog.url()),
            ["db"],
            "t",
            location,
        )
        .load_table_config(config)
        .build()
        .unwrap();
        let o = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(o[key], value, "{location}");
        assert_eq!(catalog.count() - before, 1, "{location}");
        assert_eq!(catalog.requests().pop().unwrap().target, path, "{location}");
        if !location.starts_with("s3") {
            assert_eq!(o["expires_at_millis"], expires, "{location}");
        }
    }
}

#[tokio::test]
async fn a_malformed_expiry_in_a_refresh_answer_names_the_key_not_the_value() {
    for (location, config, key) in [
        (
            "s3://b/t",
            json!({"s3.access-key-id": "K", "s3.session-token-expires-at-ms": "SECRET-LOOKING"}),
            "s3.session-token-expires-at-ms",
        ),
        (
            "gs://b/t",
            json!({"gcs.oauth2.token": "ya29", "gcs.oauth2.token-expires-at": "SECRET-LOOKING"}),
            "gcs.oauth2.token-expires-at",
        ),
        (
            "abfss://c@acct.dfs.core.windows.net/t",
            json!({"adls.sas-token.acct": "sv=1", "adls.sas-token-expires-at-ms.acct": "SECRET-LOOKING"}),
            "adls.sas-token-expires-at-ms.acct",
        ),
    ] {
        let body =
            json!({"storage-credentials": [{"prefix": location, "config": config}]}).to_string();
        let catalog = MockCatalog::start(move |_| Reply::json(200, body.clone()));
        let p = IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "t", location)
            .build()
            .unwrap();
        let e = p.fetch_storage_options().await.unwrap_err();
        let text = format!("{e} {e:?}");
        assert!(text.contains(&format!("'{key}'")), "{text}");
        assert!(!text.contains("SECRET-LOOKING"), "{text}");
        let c = catalog_error(&e).unwrap();
        assert_eq!(c.kind, CatalogErrorKind::MalformedResponse);
        assert_eq!(catalog.count(), 1);
    }
}

#[tokio::test]
async fn a_staged_table_says_so_on_404_and_refreshes_once_committed() {
    let committed = Arc::new(AtomicBool::new(false));
    let flag = committed.clone();
    let catalog = MockCatalog::start(move |_| {
        if flag.load(Ordering::SeqCst) {
            s3_answer("s3://bucket/wh/db/new_t", "AFTER-COMMIT")
        } else {
            Reply::json(404, json!({"error": {"message": "Table does not exist: db.new_t", "type": "NoSuchTableException", "code": 404}}).to_string())
        }
    });
    let p = IcebergRestCredentialsProvider::builder(
        catalog.url(),
        ["db"],
        "new_t",
        "s3://bucket/wh/db/new_t",
    )
    .load_table_config([(
        S3_REFRESH_ENDPOINT,
        "v1/namespaces/db/tables/new_t/credentials",
    )])
    .storage_credential("s3://bucket/wh/db/new_t", seed("STAGE-CREATE"))
    .staged(true)
    .build()
    .unwrap();
    assert!(p.provider_id().ends_with(":staged"), "{}", p.provider_id());
    let o = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(o["aws_access_key_id"], "STAGE-CREATE");
    assert_eq!(catalog.count(), 0);
    let e = p.fetch_storage_options().await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("table 'db.new_t' is staged") && text.contains("Table does not exist"),
        "{text}"
    );
    assert!(
        e.is_retryable(),
        "a staged table's 404 heals on commit: {text}"
    );
    assert_eq!(catalog_error(&e).unwrap().kind, CatalogErrorKind::NotFound);
    committed.store(true, Ordering::SeqCst);
    let o = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(o["aws_access_key_id"], "AFTER-COMMIT");
    assert_eq!((catalog.count(), p.calls()), (2, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_on_stage_create_credentials_keeps_working_through_the_commit() {
    let s3 = endpoint().await;
    let location = format!("s3://{BUCKET}/iceberg/db/staged");
    let scope = format!("{BUCKET}/iceberg/");
    // Refreshed from half its life on (lead = min(lead_time, lifetime / 2)): 5 s of margin.
    let staged = s3.issue_credentials(Duration::from_secs(10), Some(&scope));
    let committed = Arc::new(AtomicBool::new(false));
    let (flag, s3c, prefix) = (committed.clone(), s3.clone(), location.clone());
    let catalog = MockCatalog::start(move |_| {
        if !flag.load(Ordering::SeqCst) {
            return Reply::json(404, json!({"error": {"message": "Table does not exist: db.staged", "type": "NoSuchTableException", "code": 404}}).to_string());
        }
        let c = s3c.issue_credentials(Duration::from_secs(30), Some(&scope));
        Reply::json(
            200,
            json!({"storage-credentials": [{"prefix": prefix, "config": {
            "s3.access-key-id": c.access_key_id, "s3.secret-access-key": c.secret_access_key,
            "s3.session-token": c.session_token,
            "s3.session-token-expires-at-ms": c.expires_at_millis.to_string()}}]})
            .to_string(),
        )
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "staged", &location)
            .storage_credential(
                &location,
                [
                    ("s3.access-key-id", staged.access_key_id.clone()),
                    ("s3.secret-access-key", staged.secret_access_key.clone()),
                    ("s3.session-token", staged.session_token.clone()),
                    (
                        "s3.session-token-expires-at-ms",
                        staged.expires_at_millis.to_string(),
                    ),
                ],
            )
            .staged(true)
            .build()
            .unwrap(),
    );
    let options = HashMap::from([
        ("aws_endpoint".to_string(), s3.endpoint()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ]);
    let refresh = RefreshConfig {
        lead_time: Duration::from_secs(8),
        initial_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_millis(400),
        ..RefreshConfig::default()
    };
    let store = registry()
        .open(&location, options, Some(provider.clone() as _), refresh)
        .unwrap();
    // Writes on the stage-create credential while refreshes see the 404 of a staged table.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut i = 0;
    while catalog.count() < 2 && Instant::now() < deadline {
        store
            .put(&format!("data/{i}"), Bytes::from(format!("row {i}")))
            .await
            .expect("put on the stage-create credential");
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        catalog.count() >= 2,
        "the staged 404 is retried at the fast pace"
    );
    // The create commits; the next retry gets the committed table's credential.
    committed.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(6);
    while Instant::now() < deadline {
        store
            .put(&format!("data/{i}"), Bytes::from(format!("row {i}")))
            .await
            .expect("put across the commit");
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let current = store.refresher().unwrap().current_options();
    assert_ne!(current["aws_access_key_id"], staged.access_key_id);
    let stats = store.refresh_stats().unwrap();
    assert!(stats.failures >= 1, "{stats:?}");
    assert_eq!(stats.fetches, provider.calls() + 1, "{stats:?}");
    for (key, st) in s3.all_stats() {
        assert_eq!(st.rejected, 0, "key {key} was rejected: {st:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_answer_about_to_expire_is_replaced_by_a_catalog_call_not_refused() {
    // apache/iceberg#15678: a loadTable answer that sat in a cache reaches the store with less
    // than the minimum remaining lifetime (500 ms); the store must get a fresh one.
    let s3 = endpoint().await;
    let location = format!("s3://{BUCKET}/iceberg/db/cached");
    let scope = format!("{BUCKET}/iceberg/");
    let stale = s3.issue_credentials(Duration::from_millis(300), Some(&scope));
    let (s3c, prefix) = (s3.clone(), location.clone());
    let catalog = MockCatalog::start(move |_| {
        let c = s3c.issue_credentials(Duration::from_secs(600), Some(&scope));
        Reply::json(
            200,
            json!({"storage-credentials": [{"prefix": prefix, "config": {
            "s3.access-key-id": c.access_key_id, "s3.secret-access-key": c.secret_access_key,
            "s3.session-token": c.session_token,
            "s3.session-token-expires-at-ms": c.expires_at_millis.to_string()}}]})
            .to_string(),
        )
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder_for_location("", &location)
            .load_table_config([(
                S3_REFRESH_ENDPOINT,
                format!(
                    "{}/v1/namespaces/db/tables/cached/credentials",
                    catalog.url()
                ),
            )])
            .storage_credential(
                &location,
                [
                    ("s3.access-key-id", stale.access_key_id.clone()),
                    ("s3.secret-access-key", stale.secret_access_key.clone()),
                    ("s3.session-token", stale.session_token.clone()),
                    (
                        "s3.session-token-expires-at-ms",
                        stale.expires_at_millis.to_string(),
                    ),
                ],
            )
            .build()
            .unwrap(),
    );
    let options = HashMap::from([
        ("aws_endpoint".to_string(), s3.endpoint()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ]);
    let store = registry()
        .open(
            &location,
            options,
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("data/0", Bytes::from_static(b"row 0"))
        .await
        .expect("put on the catalog's fresh credential");
    assert_eq!((catalog.count(), provider.calls()), (1, 1));
    let current = store.refresher().unwrap().current_options();
    assert_ne!(current["aws_access_key_id"], stale.access_key_id);
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0, "{stats:?}");
}

#[tokio::test]
async fn a_provider_without_table_refreshes_through_the_endpoint_or_names_the_missing_key() {
    let catalog = MockCatalog::start(|_| s3_answer("s3://bucket/wh/", "REFRESHED"));
    let location = "s3://bucket/wh/db/orders";
    // A relative endpoint resolves against the catalog URI; the endpoint is the whole address.
    let p = IcebergRestCredentialsProvider::builder_for_location(
        format!("{}/api/catalog", catalog.url()),
        location,
    )
    .token(TOKEN)
    .load_table_config([(
        S3_REFRESH_ENDPOINT,
        "v1/wh/namespaces/db/tables/orders/credentials",
    )])
    .storage_credential(location, seed("LOAD-TABLE"))
    .build()
    .unwrap();
    assert!(
        p.provider_id().contains(":endpoint=") && p.provider_id().contains(location),
        "{}",
        p.provider_id()
    );
    let first = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(
        (first["aws_access_key_id"].as_str(), p.calls()),
        ("LOAD-TABLE", 0)
    );
    let refreshed = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(refreshed["aws_access_key_id"], "REFRESHED");
    assert_eq!(
        catalog.requests().pop().unwrap().target,
        "/api/catalog/v1/wh/namespaces/db/tables/orders/credentials"
    );
    // A relative endpoint without a catalog URI is refused at build, naming `uri`.
    let e = IcebergRestCredentialsProvider::builder_for_location("", location)
        .load_table_config([(S3_REFRESH_ENDPOINT, "v1/x/credentials")])
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("uri"), "{e}");
    // Static keys in the config and no refresh endpoint: served once, then a clear failure.
    let p = IcebergRestCredentialsProvider::builder_for_location("", location)
        .load_table_config([
            ("s3.access-key-id", "STATIC"),
            ("s3.secret-access-key", "secret-of-static"),
        ])
        .build()
        .unwrap();
    assert_eq!(p.credentials_url(), "");
    let first = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(first["aws_access_key_id"], "STATIC");
    let e = p.fetch_storage_options().await.unwrap_err().to_string();
    assert!(
        e.contains(S3_REFRESH_ENDPOINT) && e.contains(location) && !e.contains("secret-of-static"),
        "{e}"
    );
    assert_eq!(catalog.count(), 1);
}
