//! No secret appears in any log record, error message or `Debug` output, across refreshes,
//! failed refreshes, bad provider answers and auth-failure retries.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{RefreshConfig, StorageOptions, StorageOptionsProvider};

/// Vends fresh credentials, then a bad expiry, a missing secret, an error, then fresh again.
struct Flaky {
    inner: EndpointProvider,
    calls: AtomicUsize,
    secrets: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Flaky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flaky")
    }
}

#[async_trait]
impl StorageOptionsProvider for Flaky {
    async fn fetch_storage_options(&self) -> vended_storage::Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let mut o = self.inner.vend();
        self.secrets
            .lock()
            .unwrap()
            .push(o["aws_secret_access_key"].clone());
        self.secrets
            .lock()
            .unwrap()
            .push(o["aws_session_token"].clone());
        match n % 4 {
            1 => {
                o.insert("expires_at_millis".into(), "1767225600".into());
            }
            2 => {
                o.remove("aws_secret_access_key");
            }
            3 => return Err(vended_storage::Error::provider("flaky", "catalog hiccup")),
            _ => {}
        }
        Ok(Some(o))
    }
    fn provider_id(&self) -> String {
        "flaky".into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_in_logs_errors_or_debug() {
    common::logs::capture();
    let s3 = endpoint().await;
    let provider = Arc::new(Flaky {
        inner: EndpointProvider::new(s3.clone(), Duration::from_secs(2)),
        calls: AtomicUsize::new(0),
        secrets: Mutex::new(Vec::new()),
    });
    let initial = provider.inner.vend();
    provider
        .secrets
        .lock()
        .unwrap()
        .push(initial["aws_secret_access_key"].clone());
    provider
        .secrets
        .lock()
        .unwrap()
        .push(initial["aws_session_token"].clone());
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/secrets"),
            initial,
            Some(provider.clone() as _),
            RefreshConfig {
                initial_backoff: Duration::from_millis(100),
                ..RefreshConfig::default()
            },
        )
        .unwrap();
    let mut texts = vec![format!("{store:?}"), format!("{:?}", store.key())];
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    while std::time::Instant::now() < deadline {
        match store.put("k", Bytes::from_static(b"v")).await {
            Ok(()) => {}
            Err(e) => texts.push(format!("{e} {e:?}")),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Force an auth-failure retry too.
    for k in provider.inner.vended_keys() {
        s3.revoke(&k);
    }
    if let Err(e) = store.get("k").await {
        texts.push(format!("{e} {e:?}"));
    }
    assert!(
        provider.calls.load(Ordering::SeqCst) >= 4,
        "the scenario exercised every answer kind"
    );
    texts.extend(common::logs::records());
    assert!(texts.len() > 5, "records were captured");
    let secrets = provider.secrets.lock().unwrap().clone();
    for text in &texts {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "secret leaked in: {text}");
        }
    }
}

/// Answers every call with the same options.
#[derive(Debug)]
struct Answers(String, StorageOptions);

#[async_trait]
impl StorageOptionsProvider for Answers {
    async fn fetch_storage_options(&self) -> vended_storage::Result<Option<StorageOptions>> {
        Ok(Some(self.1.clone()))
    }
    fn provider_id(&self) -> String {
        self.0.clone()
    }
}

/// The C19/C20 adversarial inputs, given at open and vended by a provider, with every log
/// record captured at trace level: no record, error or `Debug` contains the secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c19_c20_adversarial_inputs_leak_no_secret_to_logs() {
    common::logs::capture();
    const SECRET: &str = "SECRET-adversarial-hunter2";
    let reg = registry();
    let good = |extra: &[(&str, String)]| -> StorageOptions {
        let mut o: StorageOptions = [
            ("aws_endpoint", "http://127.0.0.1:9".to_string()),
            ("aws_allow_http", "true".into()),
            ("aws_access_key_id", "AKIDADV".into()),
            ("aws_secret_access_key", SECRET.into()),
            ("aws_session_token", SECRET.into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for (k, v) in extra {
            o.insert(k.to_string(), v.clone());
        }
        o
    };
    let inputs: Vec<Vec<(&str, String)>> = vec![
        vec![("aws_session_tokn", SECRET.into())],
        vec![("aws_secret_access_keyy", SECRET.into())],
        vec![("AWS_SECRET_ACCESS_KEY", SECRET.into())],
        vec![("aws_session_token", format!("{SECRET}\nX-Injected: 1"))],
        vec![("aws_session_token", format!("{SECRET}\0x"))],
        vec![("aws_endpoint", format!("http://AKID:{SECRET}@127.0.0.1:9"))],
        vec![(
            "aws_endpoint",
            format!("http://127.0.0.1:9/?X-Amz-Security-Token={SECRET}"),
        )],
        vec![("aws_endpoint", "http://127.0.0.1:notaport".into())],
        // Values of keys on the non-secret allow-list are quoted in errors by design.
        vec![("aws_region", "us east 1".into())],
        vec![("aws_allow_http", "maybe".into())],
        vec![("expires_at_millis", "1767225600".into())],
    ];
    let mut texts = Vec::new();
    for (i, extra) in inputs.iter().enumerate() {
        let o = good(extra);
        let e = reg
            .open(
                &format!("s3://{BUCKET}/adv"),
                o.clone(),
                None,
                RefreshConfig::default(),
            )
            .expect_err(&format!("input {i}"));
        texts.push(format!("{e} {e:?}"));
        let p = Arc::new(Answers(format!("adv-{i}"), o));
        let store = reg
            .open(
                &format!("s3://{BUCKET}/adv"),
                [
                    ("aws_endpoint", "http://127.0.0.1:9"),
                    ("aws_allow_http", "true"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                Some(p),
                RefreshConfig::default(),
            )
            .unwrap();
        let e = store.get("k").await.unwrap_err();
        texts.push(format!("{e} {e:?} {store:?}"));
    }
    let records = common::logs::records();
    assert!(
        records.iter().any(|r| r.contains("adv-")),
        "failed refreshes were logged: {records:?}"
    );
    texts.extend(records);
    for text in &texts {
        assert!(!text.contains(SECRET), "secret leaked in: {text}");
    }
}

/// The `object_store` handed to other libraries prints no secret in its `Debug`, for every
/// cloud and for static as well as refreshing credentials (object_store's own static
/// credential provider derives `Debug` and would print the key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_of_every_cloud_store_prints_no_secret() {
    let reg = registry();
    let opts = |pairs: &[(&str, &str)]| -> StorageOptions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let cases = [
        (
            "s3://bucket/p",
            opts(&[
                ("aws_access_key_id", "AKIDEXAMPLE"),
                ("aws_secret_access_key", "SECRETSECRETSECRET"),
                ("aws_session_token", "TOKENTOKENTOKEN"),
                ("aws_endpoint", "http://127.0.0.1:9"),
                ("aws_allow_http", "true"),
                ("aws_region", "us-east-1"),
            ]),
        ),
        (
            "az://container/p",
            opts(&[
                ("azure_storage_account_name", "devstoreaccount1"),
                (
                    "azure_storage_sas_token",
                    "sv=2021-08-06&se=2099-01-01T00%3A00%3A00Z&sr=c&sp=rl&sig=SECRETSECRETSECRET",
                ),
            ]),
        ),
        (
            "gs://bucket/p",
            opts(&[
                ("google_bearer_token", "SECRETSECRETSECRET"),
                ("expires_at_millis", "4102444800000"),
                ("google_base_url", "http://127.0.0.1:9"),
            ]),
        ),
    ];
    for (uri, options) in cases {
        let store = reg
            .open(uri, options, None, RefreshConfig::default())
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        let text = format!("{store:?} {:?}", store.object_store());
        for secret in ["SECRETSECRETSECRET", "TOKENTOKENTOKEN"] {
            assert!(!text.contains(secret), "{uri}: {text}");
        }
    }
}
