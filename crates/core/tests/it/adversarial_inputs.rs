//! Adversarial variants of the CASES, on inputs: secrets in odd option keys, huge or odd option
//! maps, odd URIs, odd paths and ranges, tiny capacities, and concurrent open/close. Providers
//! and expiry are in `adversarial.rs`. Every test is deterministic and bounded in time.

use crate::common;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::providers::{creds, fn_provider, opts, FnProvider, NOW};
use common::{registry, BUCKET};
use vended_storage::options::Redacted;
use vended_storage::{Error, RefreshConfig, Session, SessionConfig, StorageOptions};

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
    // open_range (Java's getRange): cut at the end, one body of the bytes that exist; a start
    // at or past the end names the range and the object's size.
    match s.open_range("ten", 8..100).await.unwrap() {
        vended_storage::io::RangeRead::Body(mut body) => {
            assert_eq!((body.len(), body.range()), (2, 8..10));
            assert_eq!(body.next_chunk().await.unwrap().unwrap(), &b"89"[..]);
            assert!(body.next_chunk().await.unwrap().is_none());
        }
        other => panic!("a store without a session streams the body: {other:?}"),
    }
    for past in [10..20, 11..12] {
        let e = s.open_range("ten", past.clone()).await.unwrap_err();
        assert!(
            matches!(e, Error::InvalidOption { ref key, .. } if key == "range"),
            "{past:?}: {e}"
        );
        assert!(
            e.to_string()
                .contains("past the end of the object (10 bytes)"),
            "{e}"
        );
    }
    assert!(matches!(
        s.open_range("ten", 3..3).await,
        Err(Error::InvalidOption { .. })
    ));

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
