//! Adversarial variants of the CASES: malformed inputs, misbehaving providers, odd paths and
//! URIs, and concurrency. Every test is deterministic and bounded in time.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::options::{parse_expires_at_millis, Redacted};
use vended_storage::refresh::{CredentialRefresher, ManualClock};
use vended_storage::{
    Error, RefreshConfig, Result, Session, SessionConfig, StorageOptions, StorageOptionsProvider,
};

fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const NOW: i64 = 1_800_000_000_000;

/// A provider driven by a closure over the call number (0-based).
struct FnProvider<F> {
    id: String,
    calls: AtomicUsize,
    f: F,
}

impl<F> std::fmt::Debug for FnProvider<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FnProvider({})", self.id)
    }
}

#[async_trait]
impl<F> StorageOptionsProvider for FnProvider<F>
where
    F: Fn(usize) -> Result<Option<StorageOptions>> + Send + Sync,
{
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        (self.f)(n)
    }
    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

fn fn_provider<F>(f: F) -> Arc<FnProvider<F>>
where
    F: Fn(usize) -> Result<Option<StorageOptions>> + Send + Sync,
{
    Arc::new(FnProvider {
        id: "fn-provider".into(),
        calls: AtomicUsize::new(0),
        f,
    })
}

fn creds(key: &str, expires: i64) -> StorageOptions {
    opts(&[
        ("aws_access_key_id", key),
        ("aws_secret_access_key", "SECRET-hunter2"),
        ("aws_session_token", "TOKEN-hunter3"),
        ("expires_at_millis", &expires.to_string()),
    ])
}

fn refresher(
    provider: Arc<dyn StorageOptionsProvider>,
    initial: StorageOptions,
    clock: Arc<ManualClock>,
) -> CredentialRefresher<String> {
    CredentialRefresher::new(
        provider,
        initial,
        Arc::new(|o: &StorageOptions| {
            vended_storage::cloud::aws::aws_credential_from_options(o).map(|c| c.key_id)
        }),
        RefreshConfig {
            jitter: 0.0,
            ..RefreshConfig::default()
        },
        clock,
    )
    .unwrap()
}

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
// Secrets.

#[test]
fn secrets_in_less_common_option_keys_are_redacted() {
    let o = opts(&[
        ("aws_sse_customer_key_base64", "SSEC-hunter4"),
        ("aws_region", "us-east-1"),
    ]);
    let text = format!("{}", Redacted(&o));
    assert!(!text.contains("hunter4"), "{text}");
}

#[test]
fn the_sse_customer_key_never_appears_in_a_store_key_or_debug() {
    let reg = registry();
    let mut o = creds("AKID", NOW + 600_000);
    o.insert(
        "aws_sse_customer_key_base64".into(),
        "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=".into(),
    );
    o.insert("aws_endpoint".into(), "http://127.0.0.1:9".into());
    o.insert("aws_allow_http".into(), "true".into());
    let s = reg
        .open(
            &format!("s3://{BUCKET}"),
            o.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let text = format!("{s:?} {:?}", s.key());
    assert!(!text.contains("MDEyMzQ1Njc4"), "{text}");
    assert!(!text.contains("hunter"), "{text}");
    // Different encryption keys are different stores.
    o.insert(
        "aws_sse_customer_key_base64".into(),
        "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=".into(),
    );
    let s2 = reg
        .open(&format!("s3://{BUCKET}"), o, None, RefreshConfig::default())
        .unwrap();
    assert_ne!(s.key(), s2.key());
}

#[tokio::test]
async fn huge_provider_id_and_errors_stay_usable_and_secret_free() {
    let id = "p".repeat(100_000);
    let p = Arc::new(FnProvider {
        id: id.clone(),
        calls: AtomicUsize::new(0),
        f: |_| Err(Error::provider("x", "catalog down")),
    });
    let reg = registry();
    let s = reg
        .open(
            "s3://bucket/t",
            opts(&[
                ("aws_endpoint", "http://127.0.0.1:9"),
                ("aws_allow_http", "true"),
            ]),
            Some(p),
            RefreshConfig::default(),
        )
        .unwrap();
    let e = s.get("x").await.unwrap_err();
    assert!(e.to_string().contains("catalog down"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Options.

#[test]
fn option_maps_with_empty_keys_values_and_100k_entries() {
    let reg = registry();
    let mut o = opts(&[("", ""), ("x", "")]);
    for i in 0..100_000 {
        o.insert(format!("layer_opt_{i}"), format!("v{i}"));
    }
    let t = std::time::Instant::now();
    let s = reg.open("memory://big", o.clone(), None, RefreshConfig::default());
    assert!(s.is_ok(), "{:?}", s.err());
    let mut s3 = o;
    s3.insert("aws_skip_signature".into(), "true".into());
    s3.insert("aws_endpoint".into(), "http://127.0.0.1:9".into());
    assert!(reg
        .open("s3://b", s3, None, RefreshConfig::default())
        .is_ok());
    assert!(t.elapsed() < Duration::from_secs(8), "{:?}", t.elapsed());

    // Empty credential values are clear errors naming the key.
    for (k, bad) in [
        ("aws_access_key_id", creds("", NOW + 600_000)),
        ("aws_secret_access_key", {
            let mut c = creds("AKID", NOW + 600_000);
            c.insert("aws_secret_access_key".into(), "  ".into());
            c
        }),
    ] {
        let e = reg
            .open("s3://b", bad, None, RefreshConfig::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(k), "{e}");
    }
}

#[test]
fn unknown_and_miscased_aws_options_are_rejected_by_name() {
    let reg = registry();
    for key in ["aws_endpiont", "AWS_ENDPOINT", "Aws_Region"] {
        let o = opts(&[(key, "http://127.0.0.1:9"), ("aws_skip_signature", "true")]);
        let e = reg
            .open("s3://b", o, None, RefreshConfig::default())
            .expect_err(key)
            .to_string();
        assert!(e.contains(key), "{e}");
    }
    let e = reg
        .open(
            "s3://b",
            opts(&[("aws_skip_signature", "maybe")]),
            None,
            RefreshConfig::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("aws_skip_signature"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// URIs.

#[test]
fn odd_uris_are_parsed_or_rejected_clearly() {
    use vended_storage::uri::parse_store_uri;
    for (uri, needle) in [
        ("file://relative", "absolute path"),
        ("file:relative", "absolute path"),
        ("s3://", "bucket"),
        ("", "not a URI"),
        ("s3://bucket/../x", ".."),
        ("s3://bucket/a/%2e%2e/b", ".."),
        ("s3://bucket/a/./b", "."),
        ("memory://a/../b", ".."),
        ("s3://bucket/a?versionId=1", "query"),
        ("s3://bucket/a#frag", "fragment"),
        ("memory:", "scheme://"),
    ] {
        let e = parse_store_uri(uri).expect_err(uri).to_string();
        assert!(e.contains(needle), "{uri}: {e}");
    }
    let u = parse_store_uri("memory://a/b").unwrap();
    assert_eq!((u.authority.as_str(), u.base.as_ref()), ("a", "b"));
    let e = parse_store_uri("s3://bucket//a//b/")
        .unwrap_err()
        .to_string();
    assert!(e.contains("empty path segment"), "{e}");
    let u = parse_store_uri("s3://bucket/a/b/").unwrap();
    assert_eq!(u.base.as_ref(), "a/b");
    let u = parse_store_uri("s3://bucket/t%C3%A4ble/").unwrap();
    assert_eq!(u.base.as_ref(), "täble");
    let u = parse_store_uri("s3://bucket/täble/my table").unwrap();
    assert_eq!(u.base.as_ref(), "täble/my table");
    let u = parse_store_uri("memory://m/日本").unwrap();
    assert_eq!(u.base.as_ref(), "日本");
    // A long prefix is fine.
    let long = format!("s3://bucket/{}", "a/".repeat(5_000));
    assert!(parse_store_uri(&long).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Paths and ranges on a memory store.

#[tokio::test]
async fn odd_paths_and_ranges_on_a_memory_store() {
    let reg = registry();
    let s = reg
        .open(
            "memory://paths/base",
            StorageOptions::new(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    for bad in ["", "/", "//", "a//b", "../x", "a/../b", "a/./b", ".", ".."] {
        let e = s.put(bad, Bytes::from_static(b"x")).await.expect_err(bad);
        assert!(
            matches!(e, Error::InvalidOption { ref key, .. } if key == "path"),
            "{bad}: {e}"
        );
    }
    s.put("dir/", Bytes::from_static(b"trail")).await.unwrap();
    assert_eq!(s.get("dir").await.unwrap(), Bytes::from_static(b"trail"));
    let uni = "ünï/cødé/日本語.bin";
    s.put(uni, Bytes::from_static(b"u")).await.unwrap();
    assert_eq!(s.get(uni).await.unwrap(), Bytes::from_static(b"u"));
    let long = "x".repeat(10_000);
    s.put(&long, Bytes::from_static(b"l")).await.unwrap();
    assert_eq!(s.get(&long).await.unwrap().len(), 1);

    s.put("ten", Bytes::from_static(b"0123456789"))
        .await
        .unwrap();
    assert!(matches!(
        s.get_range("ten", 3..3).await,
        Err(Error::InvalidOption { .. })
    ));
    let r = s.get_range("ten", 8..100).await;
    match r {
        Ok(b) => assert_eq!(b, Bytes::from_static(b"89")),
        Err(e) => assert!(
            e.to_string().contains("range") || e.to_string().contains("Range"),
            "{e}"
        ),
    }
    let e = s.get_range("ten", 10..20).await.unwrap_err();
    assert!(!e.to_string().is_empty());
    let e = s
        .get_range("ten", u64::MAX - 1..u64::MAX)
        .await
        .unwrap_err();
    assert!(!e.to_string().is_empty());

    assert!(s.list(Some("")).await.is_ok());
    assert!(s.list(Some("/")).await.is_ok());
    assert!(s.list(Some("nothing-here")).await.unwrap().is_empty());
    let all = s.list(None).await.unwrap();
    assert!(all.iter().any(|m| m.path == "ten"), "{all:?}");

    // Paths are relative to the base prefix.
    let other = reg
        .open(
            "memory://paths",
            StorageOptions::new(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    assert_eq!(other.get("base/ten").await.unwrap().len(), 10);
}

#[tokio::test]
async fn a_session_with_tiny_capacities_still_answers_correctly() {
    let session = Arc::new(
        Session::new(SessionConfig {
            metadata_capacity: 1,
            range_capacity_bytes: 1,
            max_range_bytes: 1 << 20,
            ttl: Duration::from_millis(1),
        })
        .unwrap(),
    );
    let reg = registry();
    let s = reg
        .open(
            "memory://tiny",
            StorageOptions::new(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    for i in 0..50u8 {
        let p = format!("o{i}");
        s.put(&p, Bytes::from(vec![i; 16])).await.unwrap();
        assert_eq!(
            s.get_range(&p, 0..16).await.unwrap(),
            Bytes::from(vec![i; 16])
        );
        assert_eq!(s.head(&p).await.unwrap().size, 16);
        s.put(&p, Bytes::from(vec![i; 8])).await.unwrap();
        assert_eq!(
            s.get_range(&p, 0..8).await.unwrap(),
            Bytes::from(vec![i; 8])
        );
        assert_eq!(s.head(&p).await.unwrap().size, 8);
    }
    assert!(session.invalidate("").is_err());
    session.invalidate("memory://tiny/").unwrap();
}

// ---------------------------------------------------------------------------------------------
// Concurrency.

#[test]
fn concurrent_open_and_close_of_many_stores() {
    let reg = Arc::new(registry());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let reg = reg.clone();
            std::thread::spawn(move || {
                for i in 0..300 {
                    let p = fn_provider(|_| Ok(None));
                    let uri = format!("memory://m{}/p{}", i % 7, t);
                    let s = reg
                        .open(
                            &uri,
                            StorageOptions::new(),
                            Some(p),
                            RefreshConfig::default(),
                        )
                        .unwrap();
                    drop(s);
                    let s = reg
                        .open(&uri, StorageOptions::new(), None, RefreshConfig::default())
                        .unwrap();
                    drop(s);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(reg.len() <= 1_000);
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
