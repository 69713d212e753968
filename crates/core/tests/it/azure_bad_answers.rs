//! Cases C06 and C09 through Azure, against Azurite (which enforces the SAS signature and its
//! expiry `se`): while the store's first SAS (gen1) is still valid, the provider answers with
//! something unusable. gen1 must keep serving until it expires (no request rejected by Azurite),
//! the refresher must back off (a handful of provider calls, not one per request), and once gen1
//! has expired the caller gets a `Credentials` error that carries the provider's reason, with
//! no request sent at all: nothing signed with the expired SAS and no fallback to other
//! credentials. To make a fallback visible, this process's environment holds working Azurite
//! credentials (`AZURE_STORAGE_ACCOUNT_KEY`, `AZURE_STORAGE_SAS_TOKEN`, ...): a store that read
//! them would succeed after gen1's expiry, and the test would fail.

use crate::emulators;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use emulators::{
    account_sas, create_container, now_millis, sas_expiry, start_azurite, Emulator, Proxy,
    AZURITE_ACCOUNT, AZURITE_KEY,
};
use vended_storage::{
    Error, ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const CONTAINER: &str = "vended";
/// gen1 lives this long (whole seconds: `se` has second resolution, so 7-8 s in practice).
const GEN1_TTL: Duration = Duration::from_secs(8);

/// One provider answer, given the time of the call (epoch ms).
type Answer = fn(i64) -> Result<Option<StorageOptions>>;

static ENV: Once = Once::new();

/// Working Azurite credentials in the environment, set before anything else runs in this test
/// binary (every test calls this first, so no thread reads the environment meanwhile).
fn poison_environment() {
    ENV.call_once(|| {
        let sas = account_sas(now_millis() + 3_600_000, false);
        for (k, v) in [
            ("AZURE_STORAGE_ACCOUNT_NAME", AZURITE_ACCOUNT.to_string()),
            ("AZURE_STORAGE_ACCOUNT_KEY", AZURITE_KEY.to_string()),
            ("AZURE_STORAGE_SAS_TOKEN", sas.clone()),
            ("AZURE_STORAGE_SAS_KEY", sas),
            ("AZURE_STORAGE_USE_EMULATOR", "true".to_string()),
        ] {
            std::env::set_var(k, v);
        }
    });
}

struct BadProvider {
    answer: Answer,
    calls: AtomicUsize,
}

impl std::fmt::Debug for BadProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BadProvider")
    }
}

#[async_trait]
impl StorageOptionsProvider for BadProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        (self.answer)(now_millis())
    }
    fn provider_id(&self) -> String {
        "bad-catalog".into()
    }
}

fn opts(pairs: &[(&str, String)]) -> StorageOptions {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// A good SAS expiring at `expires` with that `expires_at_millis`.
fn sas_answer(expires: i64) -> StorageOptions {
    opts(&[
        ("azure_storage_sas_token", account_sas(expires, false)),
        ("expires_at_millis", expires.to_string()),
    ])
}

/// Runs one case on its own proxy and prefix; returns a line for the log.
async fn scenario(azurite: Arc<Emulator>, case: &'static str, answer: Answer, needle: &str) {
    let proxy = Proxy::start(&azurite.url, None).await;
    let provider = Arc::new(BadProvider {
        answer,
        calls: AtomicUsize::new(0),
    });
    let gen1_expires = sas_expiry(GEN1_TTL);
    let gen1_sas = account_sas(gen1_expires, false);
    let initial = opts(&[
        ("azure_storage_use_emulator", "true".into()),
        ("azure_storage_endpoint", proxy.url.clone()),
        ("azure_storage_account_name", AZURITE_ACCOUNT.into()),
        ("azure_storage_sas_token", gen1_sas.clone()),
        ("expires_at_millis", gen1_expires.to_string()),
    ]);
    // Effective lead min(6 s, lifetime / 2): the first refresh is due about 4 s before expiry;
    // failed ones are retried after 300 ms, 600 ms, then every 1 s.
    let config = RefreshConfig {
        lead_time: Duration::from_secs(6),
        initial_backoff: Duration::from_millis(300),
        max_backoff: Duration::from_secs(1),
        jitter: 0.0,
        ..RefreshConfig::default()
    };
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let store = registry
        .open(
            &format!("az://{CONTAINER}/{case}"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            config,
        )
        .unwrap();

    // gen1 serves until shortly before its expiry, whatever the provider answers meanwhile.
    let mut ops = 0u32;
    while now_millis() < gen1_expires - 700 && ops < 10_000 {
        let body = Bytes::from(format!("{case} {ops}"));
        store
            .put("obj", body.clone())
            .await
            .unwrap_or_else(|e| panic!("{case}: put while gen1 is valid: {e}"));
        assert_eq!(store.get("obj").await.unwrap(), body, "{case}");
        ops += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let calls = provider.calls.load(Ordering::SeqCst);
    let stats = store.refresh_stats().unwrap();
    assert!(ops >= 10, "{case}: only {ops} rounds while gen1 was valid");
    assert_eq!(proxy.stats.rejections(), 0, "{case}: Azurite rejected gen1");
    assert_eq!(stats.generation, 1, "{case}: a bad answer became current");
    assert!(
        (2..=12).contains(&calls),
        "{case}: {calls} provider calls in ~4 s of failed refreshes (backoff 0.3-1 s)"
    );
    assert_eq!(stats.failures as usize, calls, "{case}: {stats:?}");

    // Past gen1's expiry (the scenario: nothing better ever arrives).
    let wait = (gen1_expires + 300 - now_millis()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let requests = proxy.stats.requests();
    let e = store.get("obj").await.unwrap_err();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{case}: {text}");
    assert!(
        matches!(e, Error::CredentialsExpired { .. }),
        "{case}: {e:?}"
    );
    assert!(text.contains(needle), "{case}: {needle:?} not in {text}");
    assert!(text.contains("bad-catalog"), "{case}: {text}");
    assert_eq!(
        proxy.stats.requests(),
        requests,
        "{case}: a request was sent after gen1 expired (expired SAS or another credential)"
    );
    let sig = gen1_sas.rsplit("sig=").next().unwrap();
    assert!(
        !format!("{text} {e:?}").contains(sig),
        "{case}: SAS in {text}"
    );
    println!("{case}: {ops} rounds on gen1, {calls} provider calls, then: {text}");
}

async fn run(cases: Vec<(&'static str, Answer, &'static str)>) {
    let Some(azurite) = start_azurite("azure_bad_answers") else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let azurite = Arc::new(azurite);
    let tasks: Vec<_> = cases
        .into_iter()
        .map(|(case, answer, needle)| tokio::spawn(scenario(azurite.clone(), case, answer, needle)))
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c06_expired_or_too_short_sas_answers_keep_gen1_until_it_expires() {
    poison_environment();
    run(vec![
        (
            "c06-already-expired",
            |now| Ok(Some(sas_answer(now - 1_000))),
            "returned expired credentials",
        ),
        (
            "c06-too-short",
            // A SAS valid for a minute, but vended as expiring in 400 ms.
            |now| {
                let mut o = sas_answer(now + 60_000);
                o.insert("expires_at_millis".into(), (now + 400).to_string());
                Ok(Some(o))
            },
            "too soon to use",
        ),
    ])
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c09_throwing_empty_secretless_or_zero_expiry_answers_keep_gen1_until_it_expires() {
    poison_environment();
    run(vec![
        (
            "c09-throws",
            |_| Err(Error::provider("bad-catalog", "catalog said no")),
            "catalog said no",
        ),
        (
            "c09-empty",
            |_| Ok(Some(StorageOptions::new())),
            "returned no credentials",
        ),
        (
            "c09-no-sas",
            |now| {
                Ok(Some(opts(&[
                    ("azure_storage_account_name", AZURITE_ACCOUNT.into()),
                    ("expires_at_millis", (now + 60_000).to_string()),
                ])))
            },
            "returned an expiry but no credential",
        ),
        (
            "c09-sas-without-sig",
            |now| {
                let mut o = sas_answer(now + 60_000);
                let sas = o["azure_storage_sas_token"].clone();
                let unsigned: Vec<&str> =
                    sas.split('&').filter(|p| !p.starts_with("sig=")).collect();
                o.insert("azure_storage_sas_token".into(), unsigned.join("&"));
                Ok(Some(o))
            },
            "'sig'",
        ),
        (
            "c09-zero-expiry",
            |now| {
                let mut o = sas_answer(now + 60_000);
                o.insert("expires_at_millis".into(), "0".into());
                Ok(Some(o))
            },
            "expires_at_millis",
        ),
    ])
    .await;
}
