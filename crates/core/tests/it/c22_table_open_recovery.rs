//! C22 for the table opener: a table whose open failed has nothing valid to serve with, so the
//! opener (`TableOpens`) follows the refresher's rule for a store with nothing valid left: a
//! transient catalog failure is retried after the fixed `initial_backoff`, never a growing
//! delay, and the table opens within about that long of the catalog's return. Against a
//! scripted catalog that counts the describes.

use crate::catalog_support;

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use catalog_support::{MockCatalog, Recorded, Reply};
use serde_json::json;
use vended_storage::catalog::CatalogSpec;
use vended_storage::registry::{ObjectStoreRegistry, RegistryConfig};
use vended_storage::table::open_catalog_table;
use vended_storage::{Error, RefreshConfig, StorageOptions};

/// A catalog answering `status` (200: a table with one-hour credentials).
fn catalog(status: Arc<AtomicU16>) -> MockCatalog {
    MockCatalog::start(move |_: &Recorded| match status.load(Ordering::SeqCst) {
        200 => {
            let expires = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis()
                + 3_600_000;
            Reply::json(
                200,
                json!({
                    "location": "s3://b/db/c22.lance",
                    "storage_options": {
                        "aws_access_key_id": "VENDED",
                        "aws_secret_access_key": "vended-secret",
                        "expires_at_millis": expires.to_string(),
                    }
                })
                .to_string(),
            )
        }
        s => Reply::json(s, r#"{"error":"down for maintenance"}"#),
    })
}

/// The `N` of "next attempt in N ms" in `e`'s message.
fn next_attempt_ms(e: &Error) -> u64 {
    let text = e.to_string();
    let at = text
        .find("next attempt in ")
        .unwrap_or_else(|| panic!("no next attempt in: {text}"));
    let rest = &text[at + "next attempt in ".len()..];
    rest[..rest.find(' ').unwrap()].parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c22_a_table_open_retries_at_the_fixed_initial_backoff_and_opens_soon_after_the_catalog() {
    let status = Arc::new(AtomicU16::new(503));
    let catalog = catalog(status.clone());
    let spec = CatalogSpec::parse(
        "lance-namespace",
        [
            ("endpoint", catalog.url()),
            ("table_id", "db$c22".to_string()),
        ],
    )
    .unwrap();
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let mine = StorageOptions::from([
        ("aws_endpoint".to_string(), "http://127.0.0.1:9".to_string()),
        ("aws_region".to_string(), "us-east-1".to_string()),
    ]);
    // 200 ms first backoff, 20 s maximum: a growing schedule would reach 3.2 s by the 5th.
    let config = RefreshConfig {
        initial_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(20),
        ..RefreshConfig::default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut waits = Vec::new();
    while catalog.count() < 6 {
        let e = open_catalog_table(&spec, &registry, mine.clone(), config.clone())
            .await
            .expect_err("the catalog is down");
        if e.to_string().contains("next attempt in") {
            waits.push(next_attempt_ms(&e));
        }
        assert!(
            Instant::now() < deadline,
            "{} describes in 20 s",
            catalog.count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        waits.iter().all(|&w| w <= 200),
        "remembered failures asked for longer waits: {waits:?}"
    );
    // The catalog is back: the next open after at most the fixed delay works.
    status.store(200, Ordering::SeqCst);
    let healed = Instant::now();
    let store = loop {
        match open_catalog_table(&spec, &registry, mine.clone(), config.clone()).await {
            Ok(store) => break store,
            Err(e) => {
                assert!(e.to_string().contains("next attempt in"), "{e}");
                assert!(Instant::now() < deadline, "still failing: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let took = healed.elapsed();
    assert_eq!(store.uri(), "s3://b/db/c22.lance");
    assert!(
        took <= Duration::from_millis(1_500),
        "opened {took:?} after the catalog's return"
    );
    eprintln!("C22 table open: opened {took:?} after the catalog's return (fixed 200 ms delay)");
}
