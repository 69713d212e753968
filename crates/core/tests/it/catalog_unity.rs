//! The Unity Catalog provider against a scripted catalog that answers as the Unity Catalog REST
//! API does (`getTable`'s `TableInfo`, `TemporaryCredentials` with `aws_temp_credentials` and
//! `expiration_time`, `{"error_code", "message"}` errors) and vends real temporary keys of the
//! in-process S3 endpoint: read-only keys for `READ`, read-write keys for `READ_WRITE`.
//!
//! The real server (crates.io `olai-uc-server`, `bin/install-unity.sh`) is tested in
//! catalog_unity_server.rs: it vends Azure SAS tokens for Azurite, with a one-hour lifetime
//! and an STS endpoint that cannot be pointed at the local endpoint, so rotation and the S3
//! path are tested here.

use crate::catalog_support;
use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_support::{MockCatalog, Recorded, Reply};
use common::{endpoint, registry, BUCKET};
use local_s3::{LocalS3, Permissions};
use serde_json::json;
use vended_storage::catalog::unity::{UnityCatalogProvider, UnityOperation, UnityTarget};
use vended_storage::catalog::{catalog_error, CatalogErrorKind};
use vended_storage::options::merge;
use vended_storage::{
    Error, ErrorKind, RefreshConfig, StorageOptions, StorageOptionsProvider, VendedStore,
};

const TOKEN: &str = "uc-personal-access-token-0123456789";
const TABLE: &str = "main.sales.orders";
const TABLE_ID: &str = "4b6f5d2e-0c1a-4f0e-9c3b-2f6d1b7a9e01";
const API: &str = "/api/2.1/unity-catalog";

/// What the scripted catalog saw.
#[derive(Default)]
struct Seen {
    table_gets: AtomicUsize,
    credential_calls: AtomicUsize,
    /// `operation` of every credentials request.
    operations: Mutex<Vec<String>>,
    /// Every access key vended.
    keys: Mutex<Vec<String>>,
}

fn error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"error_code": code, "message": message, "details": [{"reason": code}]}).to_string(),
    )
}

/// A Unity Catalog with table `main.sales.orders` at `s3://test-bucket/uc/orders`, vending keys
/// of `s3` that live `ttl`; `main.sales.secret` exists but its credentials are refused (403).
fn unity(s3: Arc<LocalS3>, ttl: Duration) -> (MockCatalog, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let s = seen.clone();
    let catalog = MockCatalog::start(move |r: &Recorded| {
        if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
            return error(401, "UNAUTHENTICATED", "no valid token");
        }
        let target = r.target.strip_prefix(API).unwrap_or("");
        match (r.method.as_str(), target) {
            ("GET", "/tables/main.sales.orders") => {
                s.table_gets.fetch_add(1, Ordering::SeqCst);
                Reply::json(
                    200,
                    json!({"name": "orders", "catalog_name": "main", "schema_name": "sales",
                           "table_type": "EXTERNAL", "data_source_format": "DELTA",
                           "storage_location": format!("s3://{BUCKET}/uc/orders"),
                           "table_id": TABLE_ID, "created_at": 1767225600000i64})
                    .to_string(),
                )
            }
            ("GET", "/tables/main.sales.secret") => Reply::json(
                200,
                json!({"table_id": "secret-id", "storage_location": "s3://test-bucket/secret"})
                    .to_string(),
            ),
            ("GET", t) if t.starts_with("/tables/") => {
                let name = &t["/tables/".len()..];
                error(404, "NOT_FOUND", &format!("Table not found: {name}"))
            }
            ("POST", "/temporary-table-credentials") => {
                s.credential_calls.fetch_add(1, Ordering::SeqCst);
                let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                let operation = body["operation"].as_str().unwrap_or("").to_string();
                s.operations.lock().unwrap().push(operation.clone());
                if body["table_id"] == "secret-id" {
                    return error(
                        403,
                        "PERMISSION_DENIED",
                        "User alice lacks EXTERNAL USE SCHEMA on main.sales",
                    );
                }
                if body["table_id"] != TABLE_ID {
                    return error(404, "NOT_FOUND", "Table not found");
                }
                let permissions = match operation.as_str() {
                    "READ" => Permissions::READ_ONLY,
                    "READ_WRITE" => Permissions::READ_WRITE,
                    _ => return error(400, "INVALID_ARGUMENT", "unknown operation"),
                };
                let c = s3.issue_credentials_with(
                    ttl,
                    Some(&format!("{BUCKET}/uc/orders")),
                    permissions,
                );
                s.keys.lock().unwrap().push(c.access_key_id.clone());
                Reply::json(
                    200,
                    json!({"aws_temp_credentials": {"access_key_id": c.access_key_id,
                            "secret_access_key": c.secret_access_key, "session_token": c.session_token},
                           "expiration_time": c.expires_at_millis,
                           "url": format!("s3://{BUCKET}/uc/orders")})
                    .to_string(),
                )
            }
            _ => error(404, "NOT_FOUND", "no such route"),
        }
    });
    (catalog, seen)
}

/// The client's own options: the endpoint and region the catalog does not vend.
fn client_options(s3: &LocalS3) -> StorageOptions {
    StorageOptions::from([
        ("aws_endpoint".to_string(), s3.endpoint()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ])
}

fn provider(catalog: &MockCatalog, table: &str, op: UnityOperation) -> Arc<UnityCatalogProvider> {
    Arc::new(
        UnityCatalogProvider::table(catalog.url(), table)
            .operation(op)
            .bearer_token(TOKEN)
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap(),
    )
}

/// Opens the table by name: `getTable` once, one credentials call that seeds the store.
async fn open(p: &Arc<UnityCatalogProvider>, s3: &LocalS3, refresh: RefreshConfig) -> VendedStore {
    let location = p.storage_location().await.expect("getTable");
    let vended = p.fetch_storage_options().await.unwrap().unwrap();
    registry()
        .open(
            &location,
            merge(&client_options(s3), &vended),
            Some(p.clone() as _),
            refresh,
        )
        .unwrap()
}

fn assert_clean(text: &str) {
    assert!(!text.contains(TOKEN), "token leaked: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_opened_by_name_rotates_its_credentials_about_once_per_lifetime() {
    let s3 = endpoint().await;
    let (catalog, seen) = unity(s3.clone(), Duration::from_secs(3));
    let p = provider(&catalog, TABLE, UnityOperation::ReadWrite);
    let refresh = RefreshConfig {
        lead_time: Duration::from_secs(1),
        jitter: 0.0,
        ..RefreshConfig::default()
    };
    let store = open(&p, &s3, refresh).await;
    assert_eq!(store.uri(), format!("s3://{BUCKET}/uc/orders"));
    assert_eq!(
        seen.credential_calls.load(Ordering::SeqCst),
        1,
        "the open seeds the store"
    );
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut i = 0;
    while Instant::now() < deadline {
        let body = Bytes::from(format!("row {i}"));
        store
            .put(&format!("part-{i}"), body.clone())
            .await
            .expect("put");
        assert_eq!(store.get(&format!("part-{i}")).await.expect("get"), body);
        i += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // 8 s of 3 s credentials, each refreshed 1 s before expiry: the open's call and about one
    // per 2 s after it; the table is looked up once.
    let calls = seen.credential_calls.load(Ordering::SeqCst);
    assert!((4..=7).contains(&calls), "{calls} credential calls");
    assert_eq!(seen.table_gets.load(Ordering::SeqCst), 1);
    assert_eq!((p.table_calls(), p.credential_calls() as usize), (1, calls));
    let keys = seen.keys.lock().unwrap().clone();
    assert_eq!(keys.len(), calls);
    let used = keys.iter().filter(|k| s3.key_stats(k).accepted > 0).count();
    assert!(
        used >= calls - 1,
        "only {used} of {calls} vended keys were used"
    );
    for (key, st) in s3.all_stats() {
        assert_eq!(st.rejected, 0, "key {key} was rejected: {st:?}");
    }
    let current = store.refresher().unwrap().current_options();
    assert_eq!(
        current["aws_endpoint"],
        s3.endpoint(),
        "the client's endpoint survives"
    );
    assert!(seen
        .operations
        .lock()
        .unwrap()
        .iter()
        .all(|o| o == "READ_WRITE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_read_write_reach_the_catalog_and_the_keys_it_vends() {
    let s3 = endpoint().await;
    let (catalog, seen) = unity(s3.clone(), Duration::from_secs(600));
    let writer = open(
        &provider(&catalog, TABLE, UnityOperation::ReadWrite),
        &s3,
        RefreshConfig::default(),
    )
    .await;
    writer
        .put("data/0", Bytes::from_static(b"x"))
        .await
        .expect("READ_WRITE writes");
    let reader_provider = provider(&catalog, TABLE, UnityOperation::Read);
    let reader = open(&reader_provider, &s3, RefreshConfig::default()).await;
    assert_eq!(
        reader.get("data/0").await.unwrap(),
        Bytes::from_static(b"x")
    );
    let e = reader
        .put("data/1", Bytes::from_static(b"y"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert!(e.to_string().contains("does not allow"), "{e}");
    assert_eq!(*seen.operations.lock().unwrap(), ["READ_WRITE", "READ"]);
    assert!(reader_provider.provider_id().contains(":READ:"));
    let bodies: Vec<serde_json::Value> = catalog
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(
        bodies[1],
        json!({"table_id": TABLE_ID, "operation": "READ"})
    );
}

#[tokio::test]
async fn path_credentials_send_the_url_and_path_operation() {
    let expires = 1_767_225_600_000i64;
    let catalog = MockCatalog::start(move |_| {
        Reply::json(
            200,
            json!({"gcp_oauth_token": {"oauth_token": "ya29.token"}, "expiration_time": expires})
                .to_string(),
        )
    });
    let p = UnityCatalogProvider::path(catalog.url(), "gs://bucket/landing/")
        .operation(UnityOperation::ReadWrite)
        .build()
        .unwrap();
    let o = p.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(o["google_bearer_token"], "ya29.token");
    assert_eq!(o["expires_at_millis"], expires.to_string());
    let r = &catalog.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/api/2.1/unity-catalog/temporary-path-credentials")
    );
    let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        body,
        json!({"url": "gs://bucket/landing/", "operation": "PATH_READ_WRITE"})
    );
    assert_eq!(p.table_calls(), 0);
}

#[tokio::test]
async fn a_missing_table_and_a_refused_table_are_clear_errors() {
    let s3 = endpoint().await;
    let (catalog, seen) = unity(s3, Duration::from_secs(600));
    let cases = [
        (
            "main.sales.missing",
            CatalogErrorKind::NotFound,
            404,
            "get table 'main.sales.missing'",
            "Table not found: main.sales.missing (catalog error code NOT_FOUND)",
        ),
        (
            "main.sales.secret",
            CatalogErrorKind::Forbidden,
            403,
            "temporary table credentials (READ) for table 'main.sales.secret' (id secret-id)",
            "User alice lacks EXTERNAL USE SCHEMA on main.sales (catalog error code PERMISSION_DENIED)",
        ),
    ];
    for (table, kind, status, operation, message) in cases {
        let p = provider(&catalog, table, UnityOperation::Read);
        let e = p.fetch_storage_options().await.unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::Provider { .. }), "{e:?}");
        assert!(
            text.contains(&format!("Unity Catalog {operation}")),
            "{text}"
        );
        assert!(text.contains(&format!("HTTP {status}")), "{text}");
        assert!(text.contains(message), "{text}");
        assert!(text.contains("[not retryable]"), "{text}");
        assert_clean(&text);
        assert_clean(&format!("{e:?}"));
        let c = catalog_error(&e).unwrap();
        assert_eq!(
            (c.kind, c.status, c.is_retryable()),
            (kind, Some(status), false)
        );
        // The location of a missing table is the same error.
        if kind == CatalogErrorKind::NotFound {
            let e = p.storage_location().await.unwrap_err();
            assert_eq!(catalog_error(&e).unwrap().kind, kind);
            assert_eq!(p.table_calls(), 2, "a failed lookup is not kept");
        }
    }
    assert_eq!(seen.credential_calls.load(Ordering::SeqCst), 1);

    // A wrong token: 401, and the token is never echoed.
    let p = Arc::new(
        UnityCatalogProvider::table(catalog.url(), TABLE)
            .bearer_token("another-secret-token-987654")
            .build()
            .unwrap(),
    );
    let e = p.fetch_storage_options().await.unwrap_err();
    assert_eq!(
        catalog_error(&e).unwrap().kind,
        CatalogErrorKind::Unauthorized
    );
    assert!(!e.to_string().contains("another-secret-token"), "{e}");
}

#[tokio::test]
async fn a_failed_lookup_is_retried_and_a_successful_one_kept() {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let catalog = MockCatalog::start(move |r| {
        if r.method == "GET" {
            if g.fetch_add(1, Ordering::SeqCst) == 0 {
                return error(503, "UNAVAILABLE", "metastore warming up");
            }
            return Reply::json(200, json!({"table_id": "t-1", "storage_location": "abfss://c@acct.dfs.core.windows.net/t"}).to_string());
        }
        Reply::json(
            200,
            json!({"azure_user_delegation_sas": {"sas_token": "sv=2023-11-03&sig=abc"}, "expiration_time": "1767225600000"}).to_string(),
        )
    });
    let p = UnityCatalogProvider::builder(catalog.url(), UnityTarget::TableName(TABLE.into()))
        .build()
        .unwrap();
    let e = p.fetch_storage_options().await.unwrap_err();
    assert!(e.is_retryable(), "{e}");
    assert!(e.to_string().contains("metastore warming up"), "{e}");
    for _ in 0..3 {
        let o = p.fetch_storage_options().await.unwrap().unwrap();
        assert_eq!(o["azure_storage_sas_token"], "sv=2023-11-03&sig=abc");
        assert_eq!(o["azure_storage_account_name"], "acct");
        assert_eq!(o["expires_at_millis"], "1767225600000");
    }
    assert_eq!(
        (
            gets.load(Ordering::SeqCst),
            p.table_calls(),
            p.credential_calls()
        ),
        (2, 2, 3)
    );
}

/// Issue 24, read versus write: a spec's `access_mode` decides the operation asked for, and the
/// store opened with the same mode refuses writes itself (no request, no catalog call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_access_mode_of_a_spec_asks_for_read_or_read_write_credentials() {
    use vended_storage::catalog::CatalogSpec;
    let s3 = endpoint().await;
    let (catalog, seen) = unity(s3.clone(), Duration::from_secs(600));
    let uri = catalog.url();
    let open_mode = |mode: &str| {
        let spec = CatalogSpec::parse(
            "unity-catalog",
            [
                ("uri", uri.as_str()),
                ("table", TABLE),
                ("bearer_token", TOKEN),
                ("access_mode", mode),
            ],
        )
        .unwrap();
        let provider = spec.provider().unwrap();
        let mut options = client_options(&s3);
        options.insert("access_mode".to_string(), mode.to_string());
        registry()
            .open(
                &format!("s3://{BUCKET}/uc/orders"),
                options,
                Some(provider),
                RefreshConfig::default(),
            )
            .unwrap()
    };
    let writer = open_mode("read_write");
    writer
        .put("am/0", Bytes::from_static(b"x"))
        .await
        .expect("READ_WRITE writes");
    let reader = open_mode("read");
    assert_eq!(reader.get("am/0").await.unwrap(), Bytes::from_static(b"x"));
    assert_eq!(*seen.operations.lock().unwrap(), ["READ_WRITE", "READ"]);
    let read_key = seen.keys.lock().unwrap()[1].clone();
    let before = s3.key_stats(&read_key);
    let e = reader
        .put("am/1", Bytes::from_static(b"y"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert!(
        e.to_string().contains(
            "PUT s3://test-bucket/uc/orders/am/1 refused: the table was opened for reading"
        ),
        "{e}"
    );
    assert_eq!(s3.key_stats(&read_key), before, "no request sent");
    assert_eq!(seen.credential_calls.load(Ordering::SeqCst), 2);

    // An explicit operation must agree with the mode.
    let e = CatalogSpec::parse(
        "unity-catalog",
        [
            ("uri", uri.as_str()),
            ("table", TABLE),
            ("operation", "READ_WRITE"),
            ("access_mode", "read"),
        ],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("operation READ_WRITE does not agree with access_mode read"),
        "{e}"
    );
}

/// A table located by name (`locate_unity_table`, what `VendedFileSystem` calls through JNI with
/// a provider built per call): concurrent callers share one `getTable`; after a failed one the
/// failure is answered at once, without a call, until the backoff (1 s after a transient
/// failure) has passed; a success is not remembered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_get_table_is_remembered_for_the_backoff_and_shared() {
    use vended_storage::table::locate_unity_table;
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let catalog = MockCatalog::start(move |r| {
        if r.method == "GET" && g.fetch_add(1, Ordering::SeqCst) == 0 {
            return error(503, "UNAVAILABLE", "metastore warming up");
        }
        Reply::json(
            200,
            json!({"table_id": "t-9", "storage_location": "s3://b/uc/t9"}).to_string(),
        )
    });
    // Built before the race (a client each: slow under load), as JNI builds one per call.
    let providers: Vec<_> = (0..20)
        .map(|_| provider(&catalog, "main.sales.located", UnityOperation::Read))
        .collect();
    let first = futures::future::join_all(providers.iter().map(locate_unity_table)).await;
    let failed_at = Instant::now();
    assert_eq!(
        gets.load(Ordering::SeqCst),
        1,
        "20 concurrent callers, one call"
    );
    for r in &first {
        let e = r.as_ref().unwrap_err();
        assert!(e.is_retryable(), "{e}");
        assert_eq!(catalog_error(e).unwrap().status, Some(503));
    }
    let mut remembered = 0;
    while failed_at.elapsed() < Duration::from_millis(500) {
        let e = locate_unity_table(&providers[remembered % 20])
            .await
            .unwrap_err();
        assert!(e.to_string().contains("metastore warming up"), "{e}");
        assert!(e.to_string().contains("next attempt in"), "{e}");
        remembered += 1;
        if remembered == 200 {
            break;
        }
    }
    assert!(remembered > 0);
    assert_eq!(gets.load(Ordering::SeqCst), 1, "no call during the backoff");
    tokio::time::sleep(Duration::from_millis(1100).saturating_sub(failed_at.elapsed())).await;
    let t = locate_unity_table(&providers[0]).await.unwrap();
    assert_eq!(
        (t.table_id.as_str(), t.storage_location.as_deref()),
        ("t-9", Some("s3://b/uc/t9"))
    );
    locate_unity_table(&providers[1]).await.unwrap();
    assert_eq!(
        gets.load(Ordering::SeqCst),
        3,
        "a success is not remembered"
    );
}
