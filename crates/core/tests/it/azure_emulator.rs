//! Azure Blob through Azurite (npm `azurite`, installed by `bin/install-emulators.sh`), which
//! enforces SAS signatures and the SAS expiry `se` (403 AuthorizationFailure, no grace). A
//! counting proxy in front of it records every 401/403 Azurite answers, so "no rejected request"
//! is checked at the endpoint, not only at the caller. SAS tokens are account SAS minted here
//! with Azurite's public development key (tests/emulators/mod.rs).

use crate::emulators;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use emulators::{
    account_sas, create_container, now_millis, sas_expiry, start_azurite, Emulator, Proxy,
    AZURITE_ACCOUNT,
};
use vended_storage::{
    ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const CONTAINER: &str = "vended";

/// Vends account SAS tokens living `ttl`, counting calls. Scripted answers (`None` = `null`)
/// come first; `bad` makes the next vended SAS carry a wrong signature.
struct SasProvider {
    ttl: Duration,
    calls: AtomicUsize,
    script: Mutex<VecDeque<Option<StorageOptions>>>,
    vended: Mutex<Vec<String>>,
}

impl std::fmt::Debug for SasProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SasProvider")
    }
}

impl SasProvider {
    fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            calls: AtomicUsize::new(0),
            script: Mutex::new(VecDeque::new()),
            vended: Mutex::new(Vec::new()),
        }
    }

    /// Credentials only: the SAS and its expiry.
    fn vend(&self, bad_signature: bool) -> StorageOptions {
        let expires = sas_expiry(self.ttl);
        let sas = account_sas(expires, bad_signature);
        self.vended.lock().unwrap().push(sas.clone());
        [
            ("azure_storage_sas_token".to_string(), sas),
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
impl StorageOptionsProvider for SasProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(answer) = self.script.lock().unwrap().pop_front() {
            return Ok(answer);
        }
        Ok(Some(self.vend(false)))
    }
    fn provider_id(&self) -> String {
        "sas-provider".into()
    }
}

struct Setup {
    _azurite: Emulator,
    proxy: Proxy,
}

async fn setup(test: &str) -> Option<Setup> {
    let azurite = start_azurite(test)?;
    eprintln!("azurite started in {:?}", azurite.started_in);
    create_container(&azurite, CONTAINER).await;
    let proxy = Proxy::start(&azurite.url, None).await;
    Some(Setup {
        _azurite: azurite,
        proxy,
    })
}

/// Where the store is (kept from the initial options across refreshes), plus `credentials`.
fn initial(proxy: &Proxy, credentials: StorageOptions) -> StorageOptions {
    let mut o: StorageOptions = [
        ("azure_storage_use_emulator", "true"),
        ("azure_storage_endpoint", proxy.url.as_str()),
        ("azure_storage_account_name", AZURITE_ACCOUNT),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    o.extend(credentials);
    o
}

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azure_rotating_sas_tokens_serve_ten_seconds_of_concurrent_io() {
    let Some(s) = setup("azure_rotating_sas_tokens").await else {
        return;
    };
    let provider = Arc::new(SasProvider::new(Duration::from_secs(3)));
    let first = initial(&s.proxy, provider.vend(false));
    let registry = registry();
    let store = Arc::new(
        registry
            .open(
                &format!("az://{CONTAINER}/e2e"),
                first.clone(),
                Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
                RefreshConfig::default(),
            )
            .unwrap(),
    );
    assert_eq!(provider.calls(), 0, "the initial options seed the cache");
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
    let listed = store.list(Some("w0")).await.expect("list");
    assert!(!listed.is_empty());
    let calls = provider.calls();
    eprintln!(
        "{verified} objects verified in {:?}, {calls} provider calls, {} requests through the proxy",
        started.elapsed(),
        s.proxy.stats.requests()
    );
    assert!(verified > 40, "only {verified} objects verified");
    // 2-3 s SAS tokens (se has second resolution) refresh about every 1-1.5 s.
    assert!(
        (4..=40).contains(&calls),
        "provider called {calls} times in 10 s"
    );
    assert_eq!(
        s.proxy.stats.rejections(),
        0,
        "Azurite rejected requests of the refreshing store"
    );
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0);
    assert_eq!(stats.generation as usize, calls + 1);

    // Control: the first SAS as static options is rejected by now: Azurite enforces `se`.
    // (Without `expires_at_millis`, which the registry would reject at open as expired.)
    let mut control_options = first.clone();
    control_options.remove("expires_at_millis");
    let control = registry
        .open(
            &format!("az://{CONTAINER}/control"),
            control_options,
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let e = control
        .put("x", Bytes::from_static(b"x"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert!(s.proxy.stats.rejections() >= 1);
    // No SAS signature in the error, the store's Debug or its key.
    for sas in provider.vended.lock().unwrap().iter() {
        let sig = sas.rsplit("sig=").next().unwrap();
        for text in [
            e.to_string(),
            format!("{e:?}"),
            format!("{control:?}"),
            format!("{:?}", control.key()),
            format!("{:?}", store.object_store()),
        ] {
            assert!(!text.contains(sig), "SAS signature in {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_c01_idle_store_refetches_after_expiry() {
    let Some(s) = setup("azure_c01").await else {
        return;
    };
    let provider = Arc::new(SasProvider::new(Duration::from_secs(3)));
    let store = registry()
        .open(
            &format!("az://{CONTAINER}/c01"),
            initial(&s.proxy, provider.vend(false)),
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("a", Bytes::from_static(b"gen1 wrote this"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await; // the scenario: idle past `se`
    assert_eq!(
        store.get("a").await.unwrap(),
        Bytes::from_static(b"gen1 wrote this")
    );
    assert_eq!(provider.calls(), 1, "one fetch after the idle period");
    assert_eq!(
        s.proxy.stats.rejections(),
        0,
        "nothing signed with the expired SAS"
    );
    assert_eq!(store.refresh_stats().unwrap().generation, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_c18_rejected_sas_is_refetched_once_and_retried_for_every_operation() {
    let Some(s) = setup("azure_c18").await else {
        return;
    };
    // Objects the operations read, written with a good SAS.
    let writer = registry()
        .open(
            &format!("az://{CONTAINER}/c18"),
            initial(
                &s.proxy,
                SasProvider::new(Duration::from_secs(60)).vend(false),
            ),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    for name in ["get", "range", "head", "list/x", "delete"] {
        writer
            .put(name, Bytes::from_static(b"0123456789"))
            .await
            .unwrap();
    }
    // `delete` of one blob is one `DELETE` request (cloud/azure/store.rs, case C21).
    for op in ["put", "get", "get_range", "head", "list", "delete"] {
        let provider = Arc::new(SasProvider::new(Duration::from_secs(60)));
        // The store opens with a SAS Azurite rejects (wrong signature, `se` an hour away).
        let bad = initial(&s.proxy, provider.vend(true));
        let store = registry()
            .open(
                &format!("az://{CONTAINER}/c18"),
                bad,
                Some(provider.clone() as _),
                RefreshConfig::default(),
            )
            .unwrap();
        let before = s.proxy.stats.rejections();
        let requests_before = s.proxy.stats.requests();
        match op {
            "put" => store.put("put", Bytes::from_static(b"p")).await.map(|_| ()),
            "delete" => store.delete("delete").await,
            "get" => store.get("get").await.map(|b| assert_eq!(b.len(), 10)),
            "get_range" => store
                .get_range("range", 2..5)
                .await
                .map(|b| assert_eq!(&b[..], b"234")),
            "head" => store.head("head").await.map(|m| assert_eq!(m.size, 10)),
            _ => store
                .list(Some("list"))
                .await
                .map(|l| assert_eq!(l.len(), 1)),
        }
        .unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(provider.calls(), 1, "{op}: exactly one refetch");
        // A HEAD's 403 has no body: one probe GET tells a rejected SAS from a denied path (C29),
        // so a HEAD costs two rejected requests before its retry.
        let rejected = if op == "head" { 2 } else { 1 };
        assert_eq!(
            s.proxy.stats.rejections() - before,
            rejected,
            "{op}: exactly {rejected} rejected request(s) (then the retry)"
        );
        if op == "delete" {
            assert_eq!(
                s.proxy.stats.requests() - requests_before,
                2,
                "delete: the rejected DELETE and its retry, nothing else"
            );
        }
    }
    let e = writer.head("delete").await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::NotFound,
        "the delete reached Azurite: {e}"
    );
}

/// C21 for Azure: a delete of one blob is one `DELETE` request (not a Blob Batch `POST`),
/// deleting a missing blob is `NotFound`, and several keys still go through one batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_c21_single_delete_is_one_delete_request() {
    let Some(s) = setup("azure_c21").await else {
        return;
    };
    let provider = Arc::new(SasProvider::new(Duration::from_secs(60)));
    let store = registry()
        .open(
            &format!("az://{CONTAINER}/c21"),
            initial(&s.proxy, provider.vend(false)),
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    for name in ["one", "two", "three"] {
        store.put(name, Bytes::from_static(b"x")).await.unwrap();
    }
    let before = s.proxy.stats.requests();
    store.delete("one").await.unwrap();
    assert_eq!(s.proxy.stats.requests() - before, 1, "one DELETE request");
    assert_eq!(
        store.head("one").await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let e = store.delete("one").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains("c21/one"), "{e}");
    assert_eq!(s.proxy.stats.rejections(), 0);
    assert_eq!(provider.calls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_c10_endpoint_and_account_are_kept_when_the_provider_omits_them() {
    let Some(s) = setup("azure_c10").await else {
        return;
    };
    let provider = Arc::new(SasProvider::new(Duration::from_secs(3)));
    {
        let mut script = provider.script.lock().unwrap();
        script.push_back(None);
        script.push_back(Some(StorageOptions::new()));
    }
    let config = RefreshConfig {
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(200),
        ..RefreshConfig::default()
    };
    let store = registry()
        .open(
            &format!("az://{CONTAINER}/c10"),
            initial(&s.proxy, provider.vend(false)),
            Some(provider.clone() as _),
            config,
        )
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(6);
    let mut i = 0;
    while Instant::now() < deadline && i < 10_000 {
        let path = format!("o{i}");
        store
            .put(&path, Bytes::from(path.clone()))
            .await
            .expect("put");
        assert_eq!(
            store.get(&path).await.expect("get"),
            Bytes::from(path.clone())
        );
        assert!(!store.list(None).await.expect("list").is_empty());
        i += 1;
    }
    assert!(
        provider.calls() >= 3,
        "null, {{}}, then credentials: {}",
        provider.calls()
    );
    assert_eq!(s.proxy.stats.rejections(), 0);
    let options = store.refresher().unwrap().current_options();
    assert_eq!(options["azure_storage_endpoint"], s.proxy.url);
    assert_eq!(options["azure_storage_account_name"], AZURITE_ACCOUNT);
    assert_eq!(options["azure_storage_use_emulator"], "true");
    assert!(store.refresh_stats().unwrap().generation >= 2);
}

/// No emulator needed: bad Azure input at open is a clear error naming the key, never the
/// secret.
#[test]
fn azure_bad_input_is_rejected_at_open_without_secrets() {
    let registry = registry();
    let sas = "sv=2021-08-06&se=2099-01-01T00:00:00Z&sig=SECRETSIG";
    let open = |uri: &str, pairs: &[(&str, &str)]| {
        let o: StorageOptions = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        registry.open(uri, o, None, RefreshConfig::default())
    };
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "az://c/p",
            vec![
                ("azure_storage_account_name", "acct"),
                ("azure_storage_sas_token", "sv=2021&sig=SECRETSIG"),
            ],
            "azure_storage_sas_token",
        ),
        (
            "az://c/p",
            vec![
                ("azure_storage_account_name", "Bad_Acct"),
                ("azure_storage_sas_token", sas),
            ],
            "azure_storage_account_name",
        ),
        (
            "abfss://c@other.dfs.core.windows.net/p",
            vec![
                ("azure_storage_account_name", "acct"),
                ("azure_storage_sas_token", sas),
            ],
            "azure_storage_account_name",
        ),
        (
            "az://c/p",
            vec![
                ("azure_storage_account_name", "acct"),
                ("azure_storage_token", "SECRET\ntoken"),
            ],
            "azure_storage_token",
        ),
        (
            "az://c/p",
            vec![
                ("azure_storage_account_name", "acct"),
                ("azure_storage_sas_tokn", "SECRETSIG"),
            ],
            "azure_storage_sas_tokn",
        ),
        (
            "az://c/p",
            vec![("azure_storage_account_name", "acct")],
            "azure_storage_sas_token",
        ),
        (
            "az:///p",
            vec![("azure_storage_sas_token", sas)],
            "container",
        ),
    ];
    for (uri, pairs, named) in cases {
        let e = open(uri, &pairs)
            .err()
            .unwrap_or_else(|| panic!("{uri} {pairs:?} opened"));
        let text = format!("{e} {e:?}");
        assert!(text.contains(named), "{uri} {pairs:?}: {text}");
        assert!(!text.contains("SECRET"), "{text}");
        assert!(
            matches!(e.kind(), ErrorKind::InvalidOptions),
            "{uri}: {:?}",
            e.kind()
        );
    }
    // A good static store: no secret in its Debug or key.
    let store = open(
        "abfss://c@acct.dfs.core.windows.net/p",
        &[("azure_storage_sas_token", sas)],
    )
    .unwrap();
    for text in [
        format!("{store:?}"),
        format!("{:?}", store.key()),
        store.key().root(),
    ] {
        assert!(!text.contains("SECRETSIG"), "{text}");
    }
    let _ = now_millis();
}
