//! The Lance Namespace provider against a **real** Lance Namespace REST server
//! (`lance.namespace.RestAdapter("dir", ...)` from PyPI `pylance==14.0.2`, started by
//! `tests/fixtures/lance_rest_server.py`) whose tables live on the local S3 endpoint, plus the
//! failures a real server does not produce on demand (against a scripted catalog).
//!
//! The interop tests need Python with pylance: the interpreter named by the environment
//! variable `VENDED_STORAGE_PYTHON`, else `.venv/bin/python` in the crate root. They are
//! skipped, with a message, only when `VENDED_STORAGE_PYTHON` is unset and that default
//! interpreter does not exist; a set variable that points nowhere is a failure. Setup:
//!
//! ```text
//! python3 -m venv .venv && .venv/bin/pip install pylance==14.0.2
//! VENDED_STORAGE_PYTHON=$PWD/.venv/bin/python cargo test -p vended-storage --test it catalog_lance
//! ```

use crate::catalog_support;
use crate::catalog_support::lance_rest;
use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_support::Reply;
use common::{registry, BUCKET};
use lance_rest::{client_options, fixture, now_millis, scripted, REFRESH_INTERVAL_MS, ROOT, TOKEN};
use serde_json::json;
use vended_storage::catalog::{
    catalog_error, CatalogErrorKind, CatalogSpec, LanceNamespaceProvider,
};
use vended_storage::table::open_catalog_table;
use vended_storage::{Error, RefreshConfig, StorageOptions, StorageOptionsProvider};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lance_table_opened_by_name_is_read_and_written_over_several_refresh_windows() {
    let Some(fx) =
        fixture("lance_table_opened_by_name_is_read_and_written_over_several_refresh_windows")
    else {
        return;
    };
    let provider = Arc::new(
        LanceNamespaceProvider::builder(&fx.server.url, ["db", "orders"])
            .bearer_token("tenant-a-token-0123456789")
            .build()
            .unwrap(),
    );

    // What the real server vends: credentials and a fresh expiry, no endpoint/region (C10).
    let before = now_millis();
    let d = provider.describe_table().await.unwrap();
    let vended = d.storage_options.clone().expect("storage_options");
    assert_eq!(vended["aws_access_key_id"], fx.vended_key);
    for key in ["aws_endpoint", "aws_region", "aws_allow_http"] {
        assert!(!vended.contains_key(key), "the server vended {key}: {d:?}");
    }
    let expires: i64 = vended["expires_at_millis"].parse().unwrap();
    assert!(
        (before + REFRESH_INTERVAL_MS as i64 - 1000
            ..=now_millis() + REFRESH_INTERVAL_MS as i64 + 1000)
            .contains(&expires),
        "expires_at_millis {expires} is not describe time + {REFRESH_INTERVAL_MS} ms"
    );
    let uri = d.uri().unwrap().to_string();
    assert!(uri.starts_with(&format!("s3://{BUCKET}/{ROOT}/")), "{uri}");
    assert!(!format!("{d:?}").contains(&fx.s3.root_secret_key()[..8]));

    // Open by name: exactly one describe.
    let registry = registry();
    let calls = provider.describe_calls();
    let refresh = RefreshConfig {
        lead_time: Duration::from_secs(1),
        ..RefreshConfig::default()
    };
    let store = Arc::new(
        provider
            .open_table(&registry, client_options(&fx.s3), refresh)
            .await
            .unwrap(),
    );
    assert_eq!(
        provider.describe_calls(),
        calls + 1,
        "open_table describes once, no second call"
    );
    assert_eq!(store.uri(), uri);

    // Read what the Lance server wrote: a version manifest and a data file (Lance files end
    // with the magic "LANC").
    let versions = store.list(Some("_versions")).await.unwrap();
    assert!(!versions.is_empty(), "no _versions/ under {uri}");
    let data = store.list(Some("data")).await.unwrap();
    let file = data
        .iter()
        .find(|o| o.path.ends_with(".lance"))
        .expect("a .lance data file");
    let bytes = store.get(&file.path).await.unwrap();
    assert!(
        bytes.ends_with(b"LANC"),
        "{} does not end with the Lance magic",
        file.path
    );

    // Write and read for several refresh windows. Each credential lives 3 s and is refreshed
    // 1 s before expiry: one describe about every 2 s.
    let run = Duration::from_secs(9);
    let start_calls = provider.describe_calls();
    let started = Instant::now();
    let samples = Arc::new(Mutex::new(Vec::<(Duration, u64)>::new()));
    let sampler = {
        let provider = provider.clone();
        let samples = samples.clone();
        tokio::spawn(async move {
            while started.elapsed() < run {
                samples
                    .lock()
                    .unwrap()
                    .push((started.elapsed(), provider.describe_calls()));
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        })
    };
    let mut workers = Vec::new();
    for w in 0..2 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while started.elapsed() < run {
                let path = format!("vended-io/w{w}/{n}");
                let body = Bytes::from(format!("worker {w} object {n}"));
                store.put(&path, body.clone()).await.expect("put");
                assert_eq!(store.get(&path).await.expect("get"), body);
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            n
        }));
    }
    let mut objects = 0;
    for w in workers {
        objects += w.await.unwrap();
    }
    sampler.await.unwrap();
    assert!(objects > 50, "only {objects} objects written and read back");

    let describes = provider.describe_calls() - start_calls;
    let windows = run.as_millis() as u64 / (REFRESH_INTERVAL_MS - 1000);
    assert!(
        (windows - 2..=windows + 2).contains(&describes),
        "{describes} describes in {run:?}, expected about one per {} ms window ({windows})",
        REFRESH_INTERVAL_MS - 1000
    );
    // The describes were spread out, one per window: no storm, no gap past an expiry.
    let samples = samples.lock().unwrap().clone();
    let mut changes = Vec::new();
    for pair in samples.windows(2) {
        if pair[1].1 > pair[0].1 {
            assert_eq!(
                pair[1].1 - pair[0].1,
                1,
                "two describes within 25 ms at {:?}",
                pair[1].0
            );
            changes.push(pair[1].0);
        }
    }
    for gap in changes.windows(2).map(|c| c[1] - c[0]) {
        assert!(
            gap >= Duration::from_millis(1500) && gap <= Duration::from_millis(REFRESH_INTERVAL_MS),
            "describes {gap:?} apart: {changes:?}"
        );
    }

    println!("{objects} objects written and read in {run:?}; {describes} describes at {changes:?}");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0, "{stats:?}");
    assert_eq!(stats.fetches, describes, "{stats:?}");
    assert!(stats.expires_at_millis.unwrap() > now_millis(), "{stats:?}");
    // C10: after every refresh the store still has the client's endpoint and region, and the
    // vended key.
    let current = store.refresher().unwrap().current_options();
    assert_eq!(current["aws_endpoint"], fx.s3.endpoint());
    assert_eq!(current["aws_region"], "us-east-1");
    assert_eq!(current["aws_access_key_id"], fx.vended_key);
    let stats = fx.s3.key_stats(&fx.vended_key);
    assert_eq!(stats.rejected, 0, "{stats:?}");
    assert!(stats.accepted >= objects * 2, "{stats:?}");
}

#[tokio::test]
async fn an_unknown_lance_table_is_a_clear_404() {
    let Some(fx) = fixture("an_unknown_lance_table_is_a_clear_404") else {
        return;
    };
    let token = "tenant-b-token-0123456789";
    let provider = Arc::new(
        LanceNamespaceProvider::builder(&fx.server.url, ["db", "missing"])
            .bearer_token(token)
            .build()
            .unwrap(),
    );
    let e = provider
        .open_table(
            &registry(),
            client_options(&fx.s3),
            RefreshConfig::default(),
        )
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::Provider { .. }), "{e:?}");
    assert!(
        text.contains("Lance Namespace describe table 'db$missing'") && text.contains("HTTP 404"),
        "{text}"
    );
    assert!(
        text.contains("table id 'db$missing'"),
        "the server's own message: {text}"
    );
    assert!(
        !text.contains(token) && !format!("{e:?}").contains(token),
        "{text}"
    );
    let c = catalog_error(&e).unwrap();
    assert_eq!(
        (c.kind, c.status, c.code.as_deref()),
        (
            CatalogErrorKind::NotFound,
            Some(404),
            Some("4 TableNotFound")
        )
    );
    assert!(!c.is_retryable());
}

#[tokio::test]
async fn a_declared_table_and_the_delimiter() {
    let Some(fx) = fixture("a_declared_table_and_the_delimiter") else {
        return;
    };
    let events = LanceNamespaceProvider::builder(&fx.server.url, ["db", "events"])
        .build()
        .unwrap();
    let options = events.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["aws_access_key_id"], fx.vended_key);
    assert!(options.contains_key("expires_at_millis"));
    // The server joins ids with "$": another delimiter names another (missing) table.
    let dotted = LanceNamespaceProvider::builder(&fx.server.url, ["db", "events"])
        .delimiter(".")
        .build()
        .unwrap();
    let e = dotted.fetch_storage_options().await.unwrap_err();
    assert!(
        catalog_error(&e).is_some_and(|c| c.status.is_some_and(|s| (400..500).contains(&s))),
        "{e}"
    );
}

#[tokio::test]
async fn tenants_with_different_tokens_never_share_a_store() {
    let Some(fx) = fixture("tenants_with_different_tokens_never_share_a_store") else {
        return;
    };
    let open = |token: &'static str| {
        let url = fx.server.url.clone();
        async move {
            let p = Arc::new(
                LanceNamespaceProvider::builder(url, ["db", "orders"])
                    .bearer_token(token)
                    .build()
                    .unwrap(),
            );
            (p.clone(), p)
        }
    };
    let registry = registry();
    let (a, _) = open("token-of-alice-0123").await;
    let (a2, _) = open("token-of-alice-0123").await;
    let (b, _) = open("token-of-bob-0123456").await;
    let sa = a
        .open_table(&registry, client_options(&fx.s3), RefreshConfig::default())
        .await
        .unwrap();
    let sa2 = a2
        .open_table(&registry, client_options(&fx.s3), RefreshConfig::default())
        .await
        .unwrap();
    let sb = b
        .open_table(&registry, client_options(&fx.s3), RefreshConfig::default())
        .await
        .unwrap();
    assert_eq!(
        sa.key(),
        sa2.key(),
        "equal token, same table: one shared store"
    );
    assert_ne!(
        sa.key(),
        sb.key(),
        "different tokens must not share a store"
    );
    let shown = format!("{:?} {:?}", sa.key(), sb.key());
    assert!(
        !shown.contains("alice") && !shown.contains("bob"),
        "{shown}"
    );
    assert_eq!(registry.len(), 2);
}

// ------------------------------------------------------------------------------------------
// Failures a real server does not produce on demand (scripted catalog, always run)

#[tokio::test]
async fn describe_sends_the_spec_request() {
    let expires = (now_millis() + 60_000).to_string();
    let body = json!({"location": "s3://b/db/orders.lance", "storage_options": {"aws_access_key_id": "K", "aws_secret_access_key": "S", "expires_at_millis": expires}});
    let (catalog, provider) = scripted(Reply::json(200, body.to_string()));
    let options = provider.fetch_storage_options().await.unwrap().unwrap();
    assert_eq!(options["expires_at_millis"], expires);
    let r = &catalog.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/v1/table/db$orders/describe")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(r.header("x-api-key"), Some("scripted-api-key-abcdef"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let sent: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(sent["id"], json!(["db", "orders"]));
    assert_eq!(sent["vend_credentials"], json!(true));
}

#[tokio::test]
async fn every_lance_failure_is_a_clear_error_without_tokens() {
    let lance_error = |code: u64, msg: &str| json!({"error": msg, "code": code}).to_string();
    let cases: Vec<(Reply, CatalogErrorKind, Option<u16>, &str)> = vec![
        (
            Reply::json(
                401,
                lance_error(16, &format!("token Bearer {TOKEN} is not valid")),
            ),
            CatalogErrorKind::Unauthorized,
            Some(401),
            "16 Unauthenticated",
        ),
        (
            Reply::json(403, lance_error(15, "alice may not describe db$orders")),
            CatalogErrorKind::Forbidden,
            Some(403),
            "alice may not describe db$orders",
        ),
        (
            Reply::json(503, lance_error(17, "namespace backend unavailable")),
            CatalogErrorKind::ServerError,
            Some(503),
            "namespace backend unavailable",
        ),
        (
            Reply::json(502, ""),
            CatalogErrorKind::ServerError,
            Some(502),
            "(empty error body)",
        ),
        (
            Reply::json(200, "not json"),
            CatalogErrorKind::MalformedResponse,
            Some(200),
            "not valid JSON",
        ),
        (
            Reply::json(200, json!({"location": "s3://b/t"}).to_string()),
            CatalogErrorKind::MissingField,
            Some(200),
            "no storage_options",
        ),
        (
            Reply::json(
                200,
                json!({"location": "s3://b/t", "storage_options": ["x"]}).to_string(),
            ),
            CatalogErrorKind::MalformedResponse,
            Some(200),
            "'storage_options' is a JSON array",
        ),
        (
            Reply::json(200, "{}").after(Duration::from_millis(2500)),
            CatalogErrorKind::Timeout,
            None,
            "no answer within 800 ms",
        ),
    ];
    for (reply, kind, status, needle) in cases {
        let label = format!("{} {}", reply.status, reply.body);
        let (catalog, provider) = scripted(reply);
        let e = provider.fetch_storage_options().await.unwrap_err();
        assert_eq!(catalog.count(), 1, "{label}: never retried by the provider");
        let text = e.to_string();
        let debug = format!("{e:?}");
        assert!(
            text.contains("Lance Namespace describe table 'db$orders'"),
            "{label}: {text}"
        );
        assert!(text.contains(needle), "{label}: {text}");
        if let Some(s) = status {
            assert!(text.contains(&format!("HTTP {s}")), "{label}: {text}");
        }
        for secret in [TOKEN, "scripted-api-key-abcdef"] {
            assert!(
                !text.contains(secret) && !debug.contains(secret),
                "{label}: leaked: {text} {debug}"
            );
        }
        let c = catalog_error(&e).unwrap();
        assert_eq!((c.kind, c.status), (kind, status), "{label}");
        assert_eq!(
            c.is_retryable(),
            matches!(
                kind,
                CatalogErrorKind::ServerError | CatalogErrorKind::Timeout
            ),
            "{label}"
        );
    }
}

/// Opening a table keeps the caller's data-plane secrets (the SSE-C customer key and the
/// SSE-KMS key id): the catalog vends credentials only, and dropping these would write data
/// unencrypted or with the wrong key. Also opened from a `CatalogSpec`, as the JNI layer does.
#[tokio::test]
async fn opening_a_table_keeps_the_callers_sse_keys() {
    const SSE_C: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    const KMS: &str = "arn:aws:kms:us-east-1:000000000000:key/test-key";
    let expires = (now_millis() + 600_000).to_string();
    let body = json!({"location": "s3://b/db/orders.lance", "storage_options": {
        "aws_access_key_id": "VENDED", "aws_secret_access_key": "vended-secret",
        "aws_session_token": "vended-token", "expires_at_millis": expires}});
    let (catalog, provider) = scripted(Reply::json(200, body.to_string()));
    let mine = |sse: &str| -> StorageOptions {
        HashMap::from([
            ("aws_endpoint".to_string(), "http://127.0.0.1:9".to_string()),
            ("aws_region".to_string(), "us-east-1".to_string()),
            ("aws_allow_http".to_string(), "true".to_string()),
            ("aws_access_key_id".to_string(), "MINE".to_string()),
            (
                "aws_secret_access_key".to_string(),
                "mine-secret".to_string(),
            ),
            (
                sse.to_string(),
                if sse.contains("kms") { KMS } else { SSE_C }.to_string(),
            ),
        ])
    };
    for (sse, value, extra) in [
        (
            "aws_sse_customer_key_base64",
            SSE_C,
            ("aws_server_side_encryption", "sse-c"),
        ),
        (
            "aws_sse_kms_key_id",
            KMS,
            ("aws_server_side_encryption", "aws:kms"),
        ),
    ] {
        let registry = registry();
        let mut options = mine(sse);
        options.insert(extra.0.to_string(), extra.1.to_string());
        let store = Arc::new(
            LanceNamespaceProvider::builder(catalog.url(), ["db", "orders"])
                .bearer_token(TOKEN)
                .header("x-api-key", "scripted-api-key-abcdef")
                .build()
                .unwrap(),
        )
        .open_table(&registry, options, RefreshConfig::default())
        .await
        .unwrap_or_else(|e| panic!("{sse}: {e}"));
        let current = store.refresher().unwrap().current_options();
        assert_eq!(current[sse], value, "{sse} was dropped");
        assert_eq!(current["aws_access_key_id"], "VENDED", "{sse}");
        assert_eq!(current["aws_endpoint"], "http://127.0.0.1:9", "{sse}");
        assert!(
            !format!("{store:?}").contains(SSE_C),
            "{sse}: the customer key is printed"
        );
    }
    // The same through a spec.
    let spec = CatalogSpec::parse(
        "lance-namespace",
        [
            ("endpoint", catalog.url()),
            ("table_id", "db$orders".to_string()),
            ("bearer_token", TOKEN.to_string()),
        ],
    )
    .unwrap();
    let mut options = mine("aws_sse_customer_key_base64");
    options.insert("aws_sse_kms_key_id".into(), KMS.into());
    options.insert("aws_server_side_encryption".into(), "sse-c".into());
    let store = open_catalog_table(&spec, &registry(), options, RefreshConfig::default())
        .await
        .unwrap();
    let current = store.refresher().unwrap().current_options();
    assert_eq!(current["aws_sse_customer_key_base64"], SSE_C);
    assert_eq!(current["aws_sse_kms_key_id"], KMS);
    assert_eq!(store.uri(), "s3://b/db/orders.lance");
    drop(provider);
}
