//! No secret appears in any log record, error message or `Debug` output, across refreshes,
//! failed refreshes, bad provider answers and auth-failure retries.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use once_cell::sync::Lazy;
use vended_storage::{RefreshConfig, StorageOptions, StorageOptionsProvider};

static RECORDS: Lazy<Mutex<Vec<String>>> = Lazy::new(|| Mutex::new(Vec::new()));

struct Capture;
impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        RECORDS
            .lock()
            .unwrap()
            .push(format!("{} {}", record.level(), record.args()));
    }
    fn flush(&self) {}
}

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
    static LOGGER: Capture = Capture;
    log::set_logger(&LOGGER).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
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
    texts.extend(RECORDS.lock().unwrap().iter().cloned());
    assert!(texts.len() > 5, "records were captured");
    let secrets = provider.secrets.lock().unwrap().clone();
    for text in &texts {
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "secret leaked in: {text}");
        }
    }
}
