//! Catalog interop on Azure and GCS (issue 13): a table opened through a catalog that vends
//! Azure SAS tokens or GCS OAuth tokens, read and written over several refresh windows against
//! the emulators (Azurite enforces the SAS signature and `se`; fake-gcs-server sits behind the
//! token-checking proxy of tests/emulators). The catalogs are scripted (tests/catalog_support),
//! speaking the wire formats of the specs:
//!
//! - Lance Namespace `DescribeTable` (`POST /v1/table/{id}/describe`) answering
//!   `{location, storage_options: {azure_storage_account_name, azure_storage_sas_token,
//!   expires_at_millis}}`, a fresh SAS per call. (The real pylance `RestAdapter` hosting a
//!   table on Azurite is catalog_lance_azure.rs; it re-vends one SAS, so the rotation of
//!   short-lived SAS tokens through a catalog is proven here.)
//! - Iceberg REST `loadCredentials` answering `storage-credentials` with
//!   `adls.sas-token.<account host>` + `adls.sas-token-expires-at-ms.<account host>`, or
//!   `gcs.oauth2.token` + `gcs.oauth2.token-expires-at`.

use crate::catalog_support;
use crate::emulators;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_support::{MockCatalog, Reply};
use emulators::{
    account_sas, create_container, create_gcs_bucket, now_millis, sas_expiry, start_azurite,
    start_fake_gcs, Proxy, TokenAuthority, AZURITE_ACCOUNT,
};
use serde_json::json;
use vended_storage::catalog::{IcebergRestCredentialsProvider, LanceNamespaceProvider};
use vended_storage::{
    ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions,
    StorageOptionsProvider, VendedStore,
};

const CONTAINER: &str = "vended";
const BUCKET: &str = "vended";
/// How long each vended credential lives.
const TTL: Duration = Duration::from_secs(3);
/// How long each test does I/O: about three credential lifetimes.
const RUN: Duration = Duration::from_secs(9);

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

/// What an Azurite client brings itself (the catalog vends credentials and the account only).
fn azurite_client_options(proxy: &Proxy) -> StorageOptions {
    HashMap::from([
        ("azure_storage_use_emulator".to_string(), "true".to_string()),
        ("azure_storage_endpoint".to_string(), proxy.url.clone()),
    ])
}

/// Rounds of put, get, list (unless `list` is false: fake-gcs-server has no XML list) and
/// delete until [`RUN`] has passed; returns the rounds done.
async fn io_rounds(store: &VendedStore, list: bool) -> usize {
    let deadline = Instant::now() + RUN;
    let mut rounds = 0;
    while Instant::now() < deadline && rounds < 100_000 {
        let dir = format!("round-{rounds}");
        let path = format!("{dir}/obj");
        let body = Bytes::from(format!("round {rounds}"));
        store.put(&path, body.clone()).await.expect("put");
        assert_eq!(store.get(&path).await.expect("get"), body);
        if list {
            let listed = store.list(Some(&dir)).await.expect("list");
            assert_eq!(listed.len(), 1, "{dir}");
        } else {
            assert_eq!(
                store.head(&path).await.expect("head").size,
                body.len() as u64
            );
        }
        store.delete(&path).await.expect("delete");
        assert_eq!(
            store.head(&path).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        rounds += 1;
    }
    rounds
}

/// Calls expected of a catalog vending [`TTL`] credentials over [`RUN`]: refreshed at half the
/// lifetime at the latest, never per request.
fn assert_refresh_calls(calls: usize, rounds: usize) {
    assert!(rounds > 10, "only {rounds} rounds");
    assert!(
        (3..=30).contains(&calls),
        "catalog called {calls} times in {RUN:?} of {TTL:?} credentials ({rounds} rounds)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lance_table_on_azurite_is_opened_by_name_and_read_over_several_refresh_windows() {
    let Some(azurite) = start_azurite("lance_azure") else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let proxy = Proxy::start(&azurite.url, None).await;
    let catalog = MockCatalog::start(|request| {
        assert_eq!(request.target, "/v1/table/db$orders/describe");
        let expires = sas_expiry(TTL);
        Reply::json(
            200,
            json!({
                "location": format!("az://{CONTAINER}/db/orders.lance"),
                "storage_options": {
                    "azure_storage_account_name": AZURITE_ACCOUNT,
                    "azure_storage_sas_token": account_sas(expires, false),
                    "expires_at_millis": expires.to_string(),
                }
            })
            .to_string(),
        )
    });
    let provider = Arc::new(
        LanceNamespaceProvider::builder(catalog.url(), ["db", "orders"])
            .build()
            .unwrap(),
    );
    let registry = registry();
    let started = Instant::now();
    let store = provider
        .open_table(
            &registry,
            azurite_client_options(&proxy),
            RefreshConfig::default(),
        )
        .await
        .unwrap();
    assert_eq!(catalog.count(), 1, "opening describes once");
    let rounds = io_rounds(&store, true).await;
    let calls = catalog.count();
    eprintln!(
        "lance/azure: {rounds} rounds in {:?}, {calls} describe calls, {} requests to Azurite",
        started.elapsed(),
        proxy.stats.requests()
    );
    assert_refresh_calls(calls, rounds);
    assert_eq!(proxy.stats.rejections(), 0, "Azurite rejected requests");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0);
    assert_eq!(stats.generation as usize, calls);
}

/// The Iceberg REST `loadCredentials` answer for `location` with `config`.
fn iceberg_answer(prefix: &str, config: serde_json::Value) -> Reply {
    Reply::json(
        200,
        json!({"storage-credentials": [{"prefix": prefix, "config": config}]}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_adls_sas_keys_refresh_over_several_windows_against_azurite() {
    let Some(azurite) = start_azurite("iceberg_azure") else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let proxy = Proxy::start(&azurite.url, None).await;
    let location = format!("az://{CONTAINER}/wh/db/orders");
    let prefix = format!("az://{CONTAINER}/wh");
    let host = format!("{AZURITE_ACCOUNT}.dfs.core.windows.net");
    let catalog = MockCatalog::start(move |_| {
        let expires = sas_expiry(TTL);
        iceberg_answer(
            &prefix,
            json!({
                format!("adls.sas-token.{host}"): account_sas(expires, false),
                format!("adls.sas-token-expires-at-ms.{host}"): expires.to_string(),
            }),
        )
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "orders", &location)
            .build()
            .unwrap(),
    );
    // The table's first credentials, as a loadTable answer would carry them.
    let vended = provider.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(vended["azure_storage_account_name"], AZURITE_ACCOUNT);
    let mut options = azurite_client_options(&proxy);
    options.extend(vended);
    let started = Instant::now();
    let store = registry()
        .open(
            &location,
            options,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let rounds = io_rounds(&store, true).await;
    let calls = catalog.count();
    eprintln!(
        "iceberg/azure: {rounds} rounds in {:?}, {calls} loadCredentials calls, {} requests to Azurite",
        started.elapsed(),
        proxy.stats.requests()
    );
    assert_refresh_calls(calls, rounds);
    assert_eq!(proxy.stats.rejections(), 0, "Azurite rejected requests");
    assert_eq!(store.refresh_stats().unwrap().failures, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_gcs_oauth2_tokens_refresh_over_several_windows_against_fake_gcs() {
    let Some(gcs) = start_fake_gcs("iceberg_gcs") else {
        return;
    };
    create_gcs_bucket(&gcs, BUCKET).await;
    let authority = Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    let location = format!("gs://{BUCKET}/wh/db/orders");
    let prefix = format!("gs://{BUCKET}/wh");
    let issuer = authority.clone();
    let catalog = MockCatalog::start(move |_| {
        let expires = now_millis() + TTL.as_millis() as i64;
        iceberg_answer(
            &prefix,
            json!({
                "gcs.oauth2.token": issuer.issue(expires),
                "gcs.oauth2.token-expires-at": expires.to_string(),
            }),
        )
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "orders", &location)
            .build()
            .unwrap(),
    );
    let mut options = HashMap::from([("google_base_url".to_string(), proxy.url.clone())]);
    options.extend(provider.fetch_storage_options().await.unwrap().unwrap());
    let started = Instant::now();
    let store = registry()
        .open(
            &location,
            options,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let rounds = io_rounds(&store, false).await;
    let calls = catalog.count();
    eprintln!(
        "iceberg/gcs: {rounds} rounds in {:?}, {calls} loadCredentials calls, {} requests through the proxy",
        started.elapsed(),
        proxy.stats.requests()
    );
    assert_refresh_calls(calls, rounds);
    assert_eq!(proxy.stats.rejections(), 0, "the proxy rejected requests");
    assert_eq!(store.refresh_stats().unwrap().failures, 0);
}

/// An Iceberg catalog that first vends a GCS token with `gcs.oauth2.token-expires-at`, then
/// tokens without it: each such answer is a failed refresh (case C09, the same check as at
/// open, case C20), the first token keeps serving until it expires, and the error after that
/// names `google_bearer_token` and `expires_at_millis`, says why, and shows no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_gcs_token_without_expiry_is_a_failed_refresh_with_the_reason() {
    let Some(gcs) = start_fake_gcs("iceberg_gcs_no_expiry") else {
        return;
    };
    create_gcs_bucket(&gcs, BUCKET).await;
    let authority = Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    let location = format!("gs://{BUCKET}/wh/db/orders");
    let prefix = format!("gs://{BUCKET}/wh");
    let issued = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (issuer, log) = (authority.clone(), issued.clone());
    let ttl = Duration::from_secs(6);
    let catalog = MockCatalog::start(move |_| {
        let expires = now_millis() + ttl.as_millis() as i64;
        let token = issuer.issue(expires + 600_000);
        let first = log.lock().unwrap().is_empty();
        log.lock().unwrap().push(token.clone());
        let config = if first {
            json!({"gcs.oauth2.token": token, "gcs.oauth2.token-expires-at": expires.to_string()})
        } else {
            json!({"gcs.oauth2.token": token})
        };
        iceberg_answer(&prefix, config)
    });
    let provider = Arc::new(
        IcebergRestCredentialsProvider::builder(catalog.url(), ["db"], "orders", &location)
            .build()
            .unwrap(),
    );
    let mut options = HashMap::from([("google_base_url".to_string(), proxy.url.clone())]);
    options.extend(provider.fetch_storage_options().await.unwrap().unwrap());
    let gen1_expiry: i64 = options["expires_at_millis"].parse().unwrap();
    let store = registry()
        .open(
            &location,
            options,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let deadline = Instant::now() + ttl * 3;
    let mut served_after_a_failed_refresh = 0;
    let error = loop {
        assert!(
            Instant::now() < deadline,
            "no error after the token expired"
        );
        match store.put("o", Bytes::from_static(b"x")).await {
            Ok(_) => {
                assert!(now_millis() < gen1_expiry + 1_000, "served after expiry");
                if store.refresh_stats().unwrap().failures > 0 {
                    served_after_a_failed_refresh += 1;
                }
            }
            Err(e) => break e,
        }
    };
    let text = format!("{error} | {error:?} | kind {:?}", error.kind());
    eprintln!("{served_after_a_failed_refresh} puts after a failed refresh; then: {text}");
    assert!(
        now_millis() >= gen1_expiry - 1_000,
        "failed before expiry: {text}"
    );
    assert!(
        served_after_a_failed_refresh > 0,
        "gen1 did not keep serving"
    );
    for needle in ["google_bearer_token", "expires_at_millis", "within an hour"] {
        assert!(text.contains(needle), "no '{needle}' in {text}");
    }
    for token in issued.lock().unwrap().iter() {
        assert!(!text.contains(token.as_str()), "token in {text}");
    }
    let stats = store.refresh_stats().unwrap();
    assert!(stats.failures >= 1 && stats.generation == 1, "{stats:?}");
    assert_eq!(
        proxy.stats.rejections(),
        0,
        "a request went out unsigned or expired"
    );
}
