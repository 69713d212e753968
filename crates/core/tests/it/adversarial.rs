//! Adversarial variants of the CASES: malformed expiries and misbehaving providers (panics,
//! hangs, alternating answers, time going backwards), plus C01/C08 against the local S3
//! endpoint. Inputs, paths, URIs and concurrency are in `adversarial_inputs.rs`. Every test is
//! deterministic and bounded in time.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::providers::{creds, fn_provider, opts, refresher, NOW};
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::options::parse_expires_at_millis;
use vended_storage::refresh::{CredentialRefresher, ManualClock};
use vended_storage::{Error, RefreshConfig, Result, StorageOptions, StorageOptionsProvider};

// ---------------------------------------------------------------------------------------------
// C07 variants: malformed expiry strings.

#[test]
fn c07_malformed_expiry_variants_are_clear_errors() {
    let huge = "9".repeat(1_000_000);
    let huge_junk = "x".repeat(1_000_000);
    for v in [
        "+1767225600000",
        "１７６７２２５６０００００", // full-width digits
        "١٧٦٧٢٢٥٦٠٠٠٠٠",              // Arabic-Indic digits
        "1767225600000\u{0}",
        "17672256 00000",
        "0x19b7b2d8c00",
        "1_767_225_600_000",
        "1767225600000.0",
        "-0",
        "0",
        "   ",
        "\u{a0}",
        huge.as_str(),
        huge_junk.as_str(),
    ] {
        let e = parse_expires_at_millis(v).expect_err(v);
        let text = e.to_string();
        assert!(text.contains("expires_at_millis"), "{text}");
        assert!(
            text.len() < 400,
            "error text is bounded: {} bytes",
            text.len()
        );
    }
}

#[test]
fn c07_malformed_expiry_is_rejected_at_open_with_and_without_provider() {
    let reg = registry();
    for v in ["+1767225600000", "１７６７２２５６０００００", "1767225600"] {
        let mut o = creds("AKID", 0);
        o.insert("expires_at_millis".into(), v.into());
        o.insert("aws_endpoint".into(), "http://127.0.0.1:9".into());
        let e = reg
            .open(
                &format!("s3://{BUCKET}"),
                o.clone(),
                None,
                RefreshConfig::default(),
            )
            .expect_err(v);
        assert!(e.to_string().contains("expires_at_millis"), "{e}");
        assert!(!e.to_string().contains("hunter"), "{e}");
        let p = fn_provider(|_| Ok(None));
        let e = reg
            .open(
                &format!("s3://{BUCKET}"),
                o,
                Some(p),
                RefreshConfig::default(),
            )
            .expect_err(v);
        assert!(e.to_string().contains("expires_at_millis"), "{e}");
    }
}

#[tokio::test]
async fn c07_provider_vending_malformed_expiry_never_refreshes_per_request() {
    // gen1 is valid for 10 minutes; the provider answers with seconds. The refresh fails once
    // and backs off; requests keep using gen1 and do not call the provider again.
    let clock = Arc::new(ManualClock::new(NOW));
    let p = fn_provider(|_| {
        let mut o = creds("gen2", 0);
        o.insert("expires_at_millis".into(), "1767225600".into());
        Ok(Some(o))
    });
    let r = refresher(p.clone(), creds("gen1", NOW + 600_000), clock.clone());
    clock.advance(400_000); // inside the prefetch window
    for _ in 0..100 {
        let (c, _) = r.get_credential().await.unwrap();
        assert_eq!(&*c, "gen1");
        if let Some(res) = r.wait_idle().await {
            let e = res.unwrap_err().to_string();
            assert!(e.contains("expires_at_millis"), "{e}");
        }
    }
    assert_eq!(p.calls.load(Ordering::SeqCst), 1, "backoff, not a storm");
}

// ---------------------------------------------------------------------------------------------
// C05 / C09 variants: providers that panic, alternate, go backwards in time.

#[tokio::test]
async fn c05_a_panicking_provider_is_not_cached_and_the_next_call_retries() {
    let clock = Arc::new(ManualClock::new(NOW));
    let p = fn_provider(|n| {
        if n == 0 {
            panic!("provider bug");
        }
        Ok(Some(creds("gen2", NOW + 3_600_000)))
    });
    let r = refresher(p.clone(), StorageOptions::new(), clock.clone());
    let e = r.get_credential().await.unwrap_err();
    assert!(e.to_string().contains("fn-provider"), "{e}");
    // During the backoff (C17) a call fails fast without a provider call...
    assert!(r.get_credential().await.is_err());
    assert_eq!(p.calls.load(Ordering::SeqCst), 1);
    // ...and the failure is not cached: the next call after it asks the provider again.
    clock.advance(1_000);
    let (c, _) = tokio::time::timeout(Duration::from_secs(5), r.get_credential())
        .await
        .expect("no hang")
        .expect("second call refreshes");
    assert_eq!(&*c, "gen2");
    assert_eq!(p.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn c05_a_hanging_provider_times_out_and_is_retried() {
    struct Hang(AtomicUsize);
    impl std::fmt::Debug for Hang {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Hang")
        }
    }
    #[async_trait]
    impl StorageOptionsProvider for Hang {
        async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                futures::future::pending::<()>().await;
            }
            Ok(Some(creds("gen2", NOW + 3_600_000)))
        }
        fn provider_id(&self) -> String {
            "hang".into()
        }
    }
    let clock = Arc::new(ManualClock::new(NOW));
    let p = Arc::new(Hang(AtomicUsize::new(0)));
    let r = CredentialRefresher::new(
        p.clone(),
        StorageOptions::new(),
        vended_storage::cloud::aws::aws_mapper(),
        RefreshConfig {
            provider_timeout: Duration::from_millis(200),
            ..RefreshConfig::default()
        },
        clock.clone(),
    )
    .unwrap();
    let e = r.get_credential().await.unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    // The waiter's bound equals the provider timeout: let the timed-out refresh settle, then,
    // after the backoff (C17), the next call must try again rather than see a cached failure.
    r.wait_idle().await;
    clock.advance(1_000);
    let (c, _) = r.get_credential().await.unwrap();
    assert_eq!(c.key_id, "gen2");
}

#[tokio::test]
async fn c09_alternating_good_and_bad_answers_never_lose_the_valid_credential() {
    let clock = Arc::new(ManualClock::new(NOW));
    let c2 = clock.clone();
    let p = fn_provider(move |n| {
        let now = c2.now_millis_for_test();
        match n % 4 {
            0 => Ok(Some(StorageOptions::new())),
            1 => Ok(Some(opts(&[("aws_access_key_id", "no-secret")]))),
            2 => Err(Error::provider("fn-provider", "catalog down")),
            _ => Ok(Some(creds(&format!("gen{n}"), now + 600_000))),
        }
    });
    let r = refresher(p.clone(), creds("gen1", NOW + 600_000), clock.clone());
    for _ in 0..200 {
        clock.advance(5_000);
        let now = clock.now_millis_for_test();
        match r.get_credential().await {
            Ok(_) => {
                let g = r.stats();
                assert!(
                    g.expires_at_millis.is_none_or(|e| e > now),
                    "signed with an expired credential"
                );
            }
            Err(e) => panic!("a valid credential was available: {e}"),
        }
        r.wait_idle().await;
    }
}

trait NowForTest {
    fn now_millis_for_test(&self) -> i64;
}
impl NowForTest for ManualClock {
    fn now_millis_for_test(&self) -> i64 {
        vended_storage::refresh::Clock::now_millis(self)
    }
}

#[tokio::test]
async fn c06_credentials_expiring_earlier_than_the_current_ones_do_not_storm() {
    // The provider always returns the same expiry (a catalog that caches its credentials):
    // the refresher must not call it per request, and it must never sign with it once expired.
    let clock = Arc::new(ManualClock::new(NOW));
    let exp = NOW + 600_000;
    let p = fn_provider(move |n| Ok(Some(creds(&format!("gen{}", n + 2), exp))));
    let r = refresher(p.clone(), creds("gen1", exp), clock.clone());
    let mut last_err = None;
    let mut calls_at_expiry = 0;
    for _ in 0..2_000 {
        if clock.now_millis_for_test() < exp {
            calls_at_expiry = p.calls.load(Ordering::SeqCst);
        }
        clock.advance(400);
        match r.get_credential().await {
            Ok(_) => assert!(clock.now_millis_for_test() < exp),
            Err(e) => {
                assert!(clock.now_millis_for_test() >= exp - 500, "{e}");
                last_err = Some(e);
            }
        }
        r.wait_idle().await;
    }
    // Before expiry: no storm (each accepted answer halves the lead; answers too close to
    // expiry are rejected and backed off). After expiry every request tries the provider again
    // (C05: failures are not cached), which is by design.
    assert!(
        calls_at_expiry < 40,
        "{calls_at_expiry} provider calls for 1500 requests before expiry"
    );
    let e = last_err.expect("the credential expired").to_string();
    assert!(e.contains("expire"), "{e}");
    assert!(!e.contains("hunter"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Against the local S3 endpoint.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c01_600ms_credentials_never_sign_an_expired_request() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(
        s3.clone(),
        Duration::from_millis(600),
    ));
    let reg = registry();
    let store = Arc::new(
        reg.open(
            &format!("s3://{BUCKET}/short"),
            provider.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap(),
    );
    store.put("o", Bytes::from_static(b"short")).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_millis(2_500);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0;
            while std::time::Instant::now() < deadline {
                assert_eq!(store.get("o").await.unwrap(), Bytes::from_static(b"short"));
                n += 1;
            }
            n
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap() > 0);
    }
    let rejected: u64 = s3.all_stats().values().map(|s| s.expired).sum();
    assert_eq!(rejected, 0, "requests signed with expired credentials");
    let calls = provider.calls();
    assert!((2..200).contains(&calls), "{calls} provider calls");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c08_list_after_revocation_refetches_once_and_succeeds() {
    let s3 = endpoint().await;
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let reg = registry();
    let store = reg
        .open(
            &format!("s3://{BUCKET}/c08list"),
            provider.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    store.put("a", Bytes::from_static(b"a")).await.unwrap();
    s3.revoke(&provider.vended_keys()[0]);
    let listed = store
        .list(None)
        .await
        .expect("list refetches after rejection");
    assert_eq!(listed.len(), 1);
    assert_eq!(provider.calls(), 1);
}
