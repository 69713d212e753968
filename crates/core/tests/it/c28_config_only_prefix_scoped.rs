//! Case C28: Iceberg REST, one bucket, tables under `wh/t1/` and `wh/t10/`, keys scoped per
//! table at the endpoint. The first credential comes in the table's `config` only (what a
//! `FileIO` gets when the catalog sends no `storage-credentials`); the refresh endpoint answers
//! with one entry whose prefix is the table location, or with an entry per table. The store
//! keeps serving after the first credential expires; an answer that covers nothing is an error
//! naming the location and the prefixes, retried like any failed refresh (not "not
//! retryable").

use crate::catalog_support;
use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use catalog_support::{MockCatalog, Reply};
use common::{endpoint, registry, BUCKET};
use local_s3::{LocalS3, TemporaryCredentials};
use serde_json::json;
use vended_storage::catalog::iceberg::S3_REFRESH_ENDPOINT;
use vended_storage::catalog::IcebergRestCredentialsProvider;
use vended_storage::{Error, RefreshConfig, StorageOptionsProvider, VendedStore};

const TTL: Duration = Duration::from_secs(3);

fn iceberg_config(c: &TemporaryCredentials) -> Vec<(String, String)> {
    vec![
        ("s3.access-key-id".into(), c.access_key_id.clone()),
        ("s3.secret-access-key".into(), c.secret_access_key.clone()),
        ("s3.session-token".into(), c.session_token.clone()),
        (
            "s3.session-token-expires-at-ms".into(),
            c.expires_at_millis.to_string(),
        ),
    ]
}

fn entry(s3: &LocalS3, table: &str) -> serde_json::Value {
    let c = s3.issue_credentials(TTL, Some(&format!("{BUCKET}/wh/{table}/")));
    let config: HashMap<String, String> = iceberg_config(&c).into_iter().collect();
    json!({"prefix": format!("s3://{BUCKET}/wh/{table}/"), "config": config})
}

/// A refresh endpoint answering, per call, either one entry for `t1` or one per table.
fn refresh_endpoint(s3: Arc<LocalS3>, per_table: bool) -> MockCatalog {
    MockCatalog::start(move |_| {
        let mut list = vec![entry(&s3, "t1")];
        if per_table {
            list.push(entry(&s3, "t10"));
        }
        Reply::json(200, json!({ "storage-credentials": list }).to_string())
    })
}

fn refresh() -> RefreshConfig {
    RefreshConfig {
        lead_time: Duration::from_secs(1),
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(400),
        ..RefreshConfig::default()
    }
}

/// A store for `store_location` whose provider is built for `provider_location` from a config
/// holding the first credential (scoped to `wh/t1/`) and the refresh endpoint.
async fn open(
    s3: &Arc<LocalS3>,
    catalog: &MockCatalog,
    store_location: &str,
    provider_location: &str,
) -> (VendedStore, Arc<IcebergRestCredentialsProvider>) {
    let first = s3.issue_credentials(TTL, Some(&format!("{BUCKET}/wh/t1/")));
    let mut config = iceberg_config(&first);
    config.push((
        S3_REFRESH_ENDPOINT.into(),
        format!("{}/v1/credentials/t1", catalog.url()),
    ));
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder_for_location("", provider_location)
            .load_table_config(config)
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
            store_location,
            options,
            Some(provider.clone() as _),
            refresh(),
        )
        .unwrap();
    (store, provider)
}

/// Writes and reads `wh/t1/` until the first credential and at least one refreshed one have
/// expired; every call must succeed.
async fn serve_past_two_expiries(store: &VendedStore, prefix: &str) {
    let deadline = tokio::time::Instant::now() + TTL * 2 + Duration::from_millis(500);
    let mut i = 0;
    while tokio::time::Instant::now() < deadline {
        let path = format!("{prefix}data/{i}.parquet");
        store
            .put(&path, Bytes::from(format!("row {i}")))
            .await
            .unwrap_or_else(|e| panic!("put {path}: {e}"));
        let back = store
            .get(&path)
            .await
            .unwrap_or_else(|e| panic!("get {path}: {e}"));
        assert_eq!(back, Bytes::from(format!("row {i}")));
        i += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c28_a_bucket_store_takes_the_single_entry_of_the_table_like_iceberg() {
    let s3 = endpoint().await;
    let catalog = refresh_endpoint(s3.clone(), false);
    // The store of a FileIO for the bucket: its provider's location is the bucket root.
    let root = format!("s3://{BUCKET}/");
    let (store, provider) = open(&s3, &catalog, &root, &root).await;
    serve_past_two_expiries(&store, "wh/t1/").await;
    assert!(provider.calls() >= 2, "refreshed: {}", provider.calls());
    assert_eq!(catalog.count() as u64, provider.calls());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c28_a_store_keyed_by_the_table_location_is_covered_by_per_table_answers() {
    let s3 = endpoint().await;
    let catalog = refresh_endpoint(s3.clone(), true);
    // The store of a FileIO keyed by the table location (what VendedFileIO does when no
    // storage credential covers a path): the answer's `wh/t1/` entry covers it.
    let (store, provider) = open(
        &s3,
        &catalog,
        &format!("s3://{BUCKET}/"),
        &format!("s3://{BUCKET}/wh/t1"),
    )
    .await;
    serve_past_two_expiries(&store, "wh/t1/").await;
    assert!(provider.calls() >= 2, "refreshed: {}", provider.calls());
}

#[tokio::test]
async fn c28_an_answer_covering_nothing_names_the_location_and_prefixes_and_is_retryable() {
    let s3 = endpoint().await;
    let catalog = refresh_endpoint(s3.clone(), true);
    let root = format!("s3://{BUCKET}/");
    let first = s3.issue_credentials(Duration::ZERO, Some(&format!("{BUCKET}/wh/t1/")));
    let mut config = iceberg_config(&first);
    config.push((
        S3_REFRESH_ENDPOINT.into(),
        format!("{}/v1/credentials/t1", catalog.url()),
    ));
    let provider = IcebergRestCredentialsProvider::builder_for_location("", &root)
        .load_table_config(config)
        .build()
        .unwrap();
    // The first answer is expired, so this is a refresh: two entries under the root, none
    // covering it, and no single one to take.
    let e = provider.fetch_storage_options().await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains(&root), "{text}");
    assert!(text.contains(&format!("s3://{BUCKET}/wh/t1/")), "{text}");
    assert!(text.contains(&format!("s3://{BUCKET}/wh/t10/")), "{text}");
    assert!(!text.contains("not retryable"), "{text}");
    match e {
        Error::Provider { retryable, .. } => assert!(retryable, "{text}"),
        other => panic!("{other}"),
    }
    // A sibling's single entry is still never taken (apache/iceberg#17003).
    let only_t1 = MockCatalog::start({
        let s3 = s3.clone();
        move |_| {
            Reply::json(
                200,
                json!({"storage-credentials": [entry(&s3, "t1")]}).to_string(),
            )
        }
    });
    let mut config = iceberg_config(&first);
    config.push((S3_REFRESH_ENDPOINT.into(), format!("{}/x", only_t1.url())));
    let t10 = format!("s3://{BUCKET}/wh/t10");
    let provider = IcebergRestCredentialsProvider::builder_for_location("", &t10)
        .load_table_config(config)
        .build()
        .unwrap();
    let e = provider.fetch_storage_options().await.unwrap_err();
    assert!(e.to_string().contains(&t10), "{e}");
}
