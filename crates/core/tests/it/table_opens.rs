//! Opening catalog tables while the catalog is down: the describes of one table are shared by
//! concurrent opens, a failure is remembered for the refresher's backoff (callers get it at
//! once, the catalog is not called), the table opens once the catalog answers again, and a
//! failure the catalog calls permanent (404) starts at the longest backoff. Against a scripted
//! catalog that counts the describes.

use crate::catalog_support;

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use catalog_support::{MockCatalog, Recorded, Reply};
use serde_json::json;
use vended_storage::catalog::{catalog_error, CatalogErrorKind, CatalogSpec};
use vended_storage::registry::{ObjectStoreRegistry, RegistryConfig};
use vended_storage::table::{describe_catalog_table, open_catalog_table};
use vended_storage::{Error, RefreshConfig, StorageOptions};

const TOKEN: &str = "bearer-secret-4711";

/// A catalog answering `status` (200: a table with one-hour credentials) as `status` says.
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
                    "location": "s3://b/db/t.lance",
                    "storage_options": {
                        "aws_access_key_id": "VENDED",
                        "aws_secret_access_key": "vended-secret",
                        "expires_at_millis": expires.to_string(),
                    }
                })
                .to_string(),
            )
        }
        404 => Reply::json(404, r#"{"error":"table db$t not found","code":4}"#),
        s => Reply::json(s, r#"{"error":"down for maintenance"}"#),
    })
}

fn spec(catalog: &MockCatalog) -> CatalogSpec {
    CatalogSpec::parse(
        "lance-namespace",
        [
            ("endpoint", catalog.url()),
            ("table_id", "db$t".to_string()),
            ("bearer_token", TOKEN.to_string()),
        ],
    )
    .unwrap()
}

fn mine() -> StorageOptions {
    StorageOptions::from([
        ("aws_endpoint".to_string(), "http://127.0.0.1:9".to_string()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ])
}

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
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

fn config(initial_ms: u64, max_ms: u64) -> RefreshConfig {
    RefreshConfig {
        initial_backoff: Duration::from_millis(initial_ms),
        max_backoff: Duration::from_millis(max_ms),
        ..RefreshConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hundred_concurrent_opens_while_down_make_one_describe_then_the_table_opens() {
    let status = Arc::new(AtomicU16::new(503));
    let catalog = catalog(status.clone());
    let spec = spec(&catalog);
    let registry = registry();
    // Default schedule: 1 s, then 2 s...
    let opens: Vec<_> = (0..100)
        .map(|_| {
            let (spec, registry) = (spec.clone(), registry.clone());
            tokio::spawn(async move {
                open_catalog_table(&spec, &registry, mine(), RefreshConfig::default()).await
            })
        })
        .collect();
    let mut remembered = 0;
    for open in opens {
        let e = open.await.unwrap().expect_err("the catalog is down");
        let c = catalog_error(&e).expect("a catalog failure");
        assert_eq!(c.kind, CatalogErrorKind::ServerError, "{e}");
        assert_eq!(c.status, Some(503));
        assert!(e.to_string().contains("down for maintenance"), "{e}");
        assert!(
            !format!("{e} {e:?}").contains(TOKEN),
            "the token leaked: {e}"
        );
        if e.to_string().contains("next attempt in") {
            remembered += 1;
            assert!(c.message.contains("next attempt in"), "{}", c.message);
            assert!(next_attempt_ms(&e) <= 1_000, "{e}");
        }
    }
    // All 100 started within the first backoff (1 s): one call, or two on a very slow machine.
    let during = catalog.count();
    assert!(
        (1..=2).contains(&during),
        "{during} describes for 100 opens"
    );
    assert!(remembered >= 100 - 2 * 100 / 2, "{remembered}");
    // More callers during the backoff, opening or describing: no call.
    let e = describe_catalog_table(&spec).await.unwrap_err();
    assert!(e.to_string().contains("next attempt in"), "{e}");
    assert_eq!(catalog.count(), during);

    // The catalog answers again: the table opens after the backoff (which has no signal: poll,
    // bounded).
    status.store(200, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(15);
    let store = loop {
        match open_catalog_table(&spec, &registry, mine(), RefreshConfig::default()).await {
            Ok(store) => break store,
            Err(e) => {
                assert!(e.to_string().contains("next attempt in"), "{e}");
                assert!(Instant::now() < deadline, "still failing: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert_eq!(store.uri(), "s3://b/db/t.lance");
    assert_eq!(catalog.count(), during + 1, "one describe opened it");
    // A success is not remembered as a failure: the next open describes (and shares the store).
    open_catalog_table(&spec, &registry, mine(), RefreshConfig::default())
        .await
        .unwrap();
    assert_eq!(catalog.count(), during + 2);
}

#[tokio::test]
async fn a_table_not_found_starts_at_the_longest_backoff_and_transient_failures_at_the_first() {
    let status = Arc::new(AtomicU16::new(404));
    let catalog = catalog(status.clone());
    let spec = spec(&catalog);
    let registry = registry();
    let config = config(100, 20_000);
    let e = open_catalog_table(&spec, &registry, mine(), config.clone())
        .await
        .unwrap_err();
    assert_eq!(catalog_error(&e).unwrap().kind, CatalogErrorKind::NotFound);
    assert!(!e.is_retryable());
    // Past the first step of the schedule, still remembered: 404 waits the longest at once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let e = open_catalog_table(&spec, &registry, mine(), config.clone())
        .await
        .unwrap_err();
    let c = catalog_error(&e).unwrap();
    assert_eq!(c.kind, CatalogErrorKind::NotFound, "kind unchanged: {e}");
    assert_eq!(c.status, Some(404));
    assert!(!e.is_retryable());
    let wait = next_attempt_ms(&e);
    assert!((10_000..=20_000).contains(&wait), "{wait} ms: {e}");
    assert_eq!(catalog.count(), 1);

    // A transient failure of another table backs off from the first step.
    let config = self::config(2_000, 20_000);
    let other = Arc::new(AtomicU16::new(503));
    let catalog = self::catalog(other);
    let spec = self::spec(&catalog);
    open_catalog_table(&spec, &registry, mine(), config.clone())
        .await
        .unwrap_err();
    let e = open_catalog_table(&spec, &registry, mine(), config)
        .await
        .unwrap_err();
    assert!(e.is_retryable());
    assert!(next_attempt_ms(&e) <= 2_000, "{e}");
    assert_eq!(catalog.count(), 1);
}
