//! Azure bearer tokens (`azure_storage_token`) refreshed against Azurite's OAuth mode
//! (`--oauth basic`, HTTPS only), which enforces each token's `exp` with 403
//! AuthenticationFailed "The token is expired." (tests/emulators/oauth.rs).
//!
//! TLS: the store verifies Azurite's certificate normally; it trusts the test CA because this
//! process's `SSL_CERT_FILE` names it, the standard variable the TLS stack's native root loading
//! reads (`rustls-native-certs`, used by reqwest's platform verifier). No certificate check is
//! disabled. `object_store` 0.14's `ClientOptions::with_root_certificate` has no option key,
//! so there is no storage option for a private CA; `SSL_CERT_FILE`/`SSL_CERT_DIR` is how a user
//! with one trusts it. This binary has one test, which sets the variable before any client is
//! built (no other thread reads the environment meanwhile).
//!
//! No proxy can count the endpoint's rejections here (the client talks TLS to Azurite itself),
//! so the endpoint's record is Azurite's debug log: every answer's status, and the reason of
//! every error.

use crate::emulators;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use emulators::oauth::{access_token, auth_log, start_azurite_oauth};
use emulators::{create_container, now_millis, AZURITE_ACCOUNT};
use vended_storage::{
    ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

const CONTAINER: &str = "vended";
/// Each token lives this long (whole seconds: `exp` has second resolution).
const TTL: Duration = Duration::from_secs(3);

/// Mints an access token living [`TTL`] per call, counting calls.
#[derive(Default)]
struct TokenProvider {
    calls: AtomicUsize,
    vended: Mutex<Vec<String>>,
}

impl std::fmt::Debug for TokenProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenProvider")
    }
}

impl TokenProvider {
    fn vend(&self) -> StorageOptions {
        let expires = (now_millis() + TTL.as_millis() as i64) / 1000 * 1000;
        let mut vended = self.vended.lock().unwrap();
        let token = access_token(expires, vended.len());
        vended.push(token.clone());
        [
            ("azure_storage_token".to_string(), token),
            ("expires_at_millis".to_string(), expires.to_string()),
        ]
        .into_iter()
        .collect()
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

/// Azurite's location (what the client brings itself) plus `vended` (token and expiry).
fn located(url: &str, vended: &StorageOptions) -> StorageOptions {
    let mut o: StorageOptions = [
        ("azure_storage_use_emulator", "true"),
        ("azure_storage_endpoint", url),
        ("azure_storage_account_name", AZURITE_ACCOUNT),
        // Client options decide which shared HTTP client a store gets (cloud/http.rs), and a
        // client reads the trusted roots (SSL_CERT_FILE, set by the test) when it is built: a
        // value no other test uses gives this store a client built after the test CA is trusted,
        // whatever the other tests of this binary built before.
        ("pool_idle_timeout", "89s"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    o.extend(vended.clone());
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azure_bearer_tokens_refresh_against_azurite_oauth_over_https() {
    let Some((azurite, ca, log)) = start_azurite_oauth("azure_oauth") else {
        return;
    };
    std::env::set_var("SSL_CERT_FILE", &ca.ca_pem);
    create_container(&azurite, CONTAINER).await; // account SAS, over HTTPS
    let provider = Arc::new(TokenProvider::default());
    let first = provider.vend();
    let options = located(&azurite.url, &first);
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let store = Arc::new(
        registry
            .open(
                &format!("az://{CONTAINER}/oauth"),
                options,
                Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
                RefreshConfig::default(),
            )
            .unwrap(),
    );

    // 10 s of concurrent writes and verified reads across 3-4 token lifetimes.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut workers = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < deadline && n < 100_000 {
                let path = format!("w{w}/obj-{n}");
                let body = Bytes::from(format!("worker {w} object {n}"));
                store.put(&path, body.clone()).await.expect("put");
                assert_eq!(store.get(&path).await.expect("get"), body);
                n += 1;
            }
            n
        }));
    }
    let mut verified = 0;
    for w in workers {
        verified += w.await.unwrap();
    }
    assert!(!store.list(Some("w0")).await.unwrap().is_empty());
    let calls = provider.calls.load(Ordering::SeqCst);
    let stats = store.refresh_stats().unwrap();
    println!("{verified} objects verified over HTTPS with bearer tokens; {calls} provider calls");
    assert!(verified > 40, "only {verified} objects verified");
    // 2-3 s tokens refresh about every 1-1.5 s.
    assert!((4..=40).contains(&calls), "{calls} provider calls in 10 s");
    assert_eq!(stats.failures, 0, "{stats:?}");
    assert_eq!(stats.endpoint_rejections, 0, "{stats:?}");
    assert_eq!(stats.auth_refetches, 0, "{stats:?}");
    assert_eq!(stats.generation as usize, calls + 1, "{stats:?}");

    // Control: the first token as static options (without its expiry, which the registry would
    // refuse at open as past) is rejected by Azurite by now.
    let mut control_options = located(&azurite.url, &first);
    control_options.remove("expires_at_millis");
    let control = registry
        .open(
            &format!("az://{CONTAINER}/control"),
            control_options.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let e = control.get("w0/obj-0").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    // Azurite's log: the control's rejection appears (bounded wait for the log to catch up;
    // the log is written in order, so every earlier answer is in it too), and it is the only
    // auth failure Azurite answered: the refreshing store had none.
    let wait = Instant::now() + Duration::from_secs(10);
    let counts = loop {
        let counts = auth_log(&log);
        if counts.expired >= 1 || Instant::now() > wait {
            break counts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        counts.expired, 1,
        "Azurite's 'token is expired' answers: {counts:?}"
    );
    assert_eq!(counts.rejected, 1, "Azurite's 401/403 answers: {counts:?}");
    // And the refreshing store's requests were authenticated as bearer tokens (a put and a
    // get per object, at least).
    assert!(
        counts.token_accepted as u64 >= 2 * verified,
        "{counts:?} for {verified} objects"
    );
    println!("Azurite's log: {counts:?}");
    // C08/C18 with a bearer token: a store opened with that expired token and no
    // expires_at_millis, plus the provider, gets Azurite's 403 once, refetches once and retries.
    // (A registry of its own: the first one would hand back its cached store for this URI.)
    let retrying = ObjectStoreRegistry::new(RegistryConfig::default())
        .open(
            &format!("az://{CONTAINER}/oauth"),
            control_options,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let calls_before = provider.calls.load(Ordering::SeqCst);
    assert!(!retrying.get("w0/obj-0").await.unwrap().is_empty());
    assert_eq!(
        provider.calls.load(Ordering::SeqCst) - calls_before,
        1,
        "one refetch"
    );
    let retry_stats = retrying.refresh_stats().unwrap();
    assert_eq!(retry_stats.auth_refetches, 1, "{retry_stats:?}");
    let wait = Instant::now() + Duration::from_secs(10);
    let after = loop {
        let c = auth_log(&log);
        if c.expired >= 2 || Instant::now() > wait {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(after.expired, 2, "one more expired-token answer: {after:?}");
    assert_eq!(after.rejected, 2, "{after:?}");

    // No token in the error, the stores' Debug or keys.
    for token in provider.vended.lock().unwrap().iter() {
        let signature_free = token.rsplit_once('.').unwrap().0;
        for text in [
            e.to_string(),
            format!("{e:?}"),
            format!("{control:?}"),
            format!("{:?}", control.key()),
            format!("{store:?}"),
        ] {
            assert!(!text.contains(signature_free), "token in {text}");
        }
    }
}
