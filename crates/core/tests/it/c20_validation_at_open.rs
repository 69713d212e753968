//! C20: options that can be checked without a request are rejected when the store is opened,
//! by key and never quoting a secret, and the same options coming from a provider are
//! rejected by the same rules with the same message. Nothing panics.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{ErrorKind, RefreshConfig, Result, StorageOptions, StorageOptionsProvider};

const SECRET: &str = "SECRET-c20-hunter2";

fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Good static credentials pointing at a port nothing listens on (no request is ever sent).
fn good() -> StorageOptions {
    opts(&[
        ("aws_endpoint", "http://127.0.0.1:9"),
        ("aws_allow_http", "true"),
        ("aws_region", "us-east-1"),
        ("aws_access_key_id", "AKIDC20"),
        ("aws_secret_access_key", SECRET),
        ("aws_session_token", SECRET),
        ("expires_at_millis", &(now_millis() + 3_600_000).to_string()),
    ])
}

/// The C20 inputs: (key, value) over [`good`].
fn bad_inputs() -> Vec<(&'static str, String)> {
    vec![
        ("aws_endpoint", "http://127.0.0.1:notaport".into()),
        ("aws_session_token", format!("{SECRET}\nX-Injected: 1")),
        ("aws_session_token", format!("{SECRET}\0")),
        ("aws_secret_access_key", format!("{SECRET}\u{7f}")),
        ("aws_region", "us east 1".into()),
    ]
}

/// Answers every call with `options`.
#[derive(Debug)]
struct Answers {
    id: String,
    options: StorageOptions,
    calls: AtomicUsize,
}

#[async_trait]
impl StorageOptionsProvider for Answers {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Some(self.options.clone()))
    }
    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

fn count_panics() -> Arc<AtomicUsize> {
    let panics = Arc::new(AtomicUsize::new(0));
    let p = panics.clone();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        p.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
    panics
}

#[tokio::test]
async fn c20_bad_options_are_rejected_at_open_and_from_a_provider_alike() {
    let panics = count_panics();
    let reg = registry();
    for (i, (key, value)) in bad_inputs().into_iter().enumerate() {
        let id = format!("c20-provider-{i}");
        let mut o = good();
        o.insert(key.into(), value.clone());

        // At open: an InvalidOption naming the key, no secret, before any request.
        let at_open = reg
            .open(
                &format!("s3://{BUCKET}/t"),
                o.clone(),
                None,
                RefreshConfig::default(),
            )
            .expect_err(key);
        assert_eq!(at_open.kind(), ErrorKind::InvalidOptions, "{at_open}");
        let open_text = at_open.to_string();
        assert!(open_text.contains(&format!("'{key}'")), "{open_text}");
        assert!(
            !format!("{at_open} {at_open:?}").contains(SECRET),
            "{at_open:?}"
        );

        // The same options as an initial seed with a provider: rejected the same way.
        let p = Arc::new(Answers {
            id: id.clone(),
            options: o.clone(),
            calls: AtomicUsize::new(0),
        });
        let seeded = reg
            .open(
                &format!("s3://{BUCKET}/t"),
                o.clone(),
                Some(p),
                RefreshConfig::default(),
            )
            .expect_err(key);
        assert_eq!(seeded.to_string(), open_text);

        // From a provider, after a good open without credentials: the first request fetches,
        // the answer is rejected with the open-time message inside, and nothing is sent.
        let p = Arc::new(Answers {
            id: id.clone(),
            options: o,
            calls: AtomicUsize::new(0),
        });
        let store = reg
            .open(
                &format!("s3://{BUCKET}/p"),
                opts(&[
                    ("aws_endpoint", "http://127.0.0.1:9"),
                    ("aws_allow_http", "true"),
                ]),
                Some(p.clone()),
                RefreshConfig::default(),
            )
            .unwrap();
        let from_provider = store.put("x", Bytes::from_static(b"x")).await.unwrap_err();
        let text = format!("{from_provider}");
        assert_eq!(from_provider.kind(), ErrorKind::Credentials, "{text}");
        assert!(
            text.contains(&id) && text.contains(&open_text),
            "{text}\n{open_text}"
        );
        assert!(
            !format!("{from_provider:?}").contains(SECRET),
            "{from_provider:?}"
        );
        assert_eq!(p.calls.load(Ordering::SeqCst), 1);
    }
    assert_eq!(panics.load(Ordering::SeqCst), 0, "no panic anywhere");
}

#[tokio::test]
async fn c20_expired_initial_options_without_a_provider_are_rejected_at_open() {
    let reg = registry();
    let mut o = good();
    let past = now_millis() - 60_000;
    o.insert("expires_at_millis".into(), past.to_string());
    let e = reg
        .open(
            &format!("s3://{BUCKET}/t"),
            o.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOptions);
    let text = e.to_string();
    assert!(
        text.contains("'expires_at_millis'")
            && text.contains(&format!(
                "expired credentials: expires_at_millis={past} is "
            ))
            && text.contains("ms in the past"),
        "{text}"
    );
    assert!(!text.contains(SECRET));

    // A provider that answers with the same expired options: the same wording.
    let p = Arc::new(Answers {
        id: "c20-expired".into(),
        options: o,
        calls: AtomicUsize::new(0),
    });
    let store = reg
        .open(
            &format!("s3://{BUCKET}/p"),
            opts(&[
                ("aws_endpoint", "http://127.0.0.1:9"),
                ("aws_allow_http", "true"),
            ]),
            Some(p),
            RefreshConfig::default(),
        )
        .unwrap();
    let e = store.get("x").await.unwrap_err().to_string();
    assert!(
        e.contains(&format!(
            "expired credentials: expires_at_millis={past} is "
        )) && e.contains("ms in the past"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c20_expired_seed_with_a_provider_is_fetched_fresh_on_first_use() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(
        s3.clone(),
        std::time::Duration::from_secs(60),
    ));
    let mut seed = provider.vend();
    seed.insert(
        "expires_at_millis".into(),
        (now_millis() - 1_000).to_string(),
    );
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/seed"),
            seed,
            Some(provider.clone()),
            RefreshConfig::default(),
        )
        .expect("an expired seed is not an error when a provider can refresh it");
    assert_eq!(provider.calls(), 0, "no provider call at open");
    store.put("o", Bytes::from_static(b"v")).await.unwrap();
    assert_eq!(provider.calls(), 1, "the first request fetched once");
    assert_eq!(store.get("o").await.unwrap(), Bytes::from_static(b"v"));
    assert_eq!(provider.calls(), 1);
}

#[test]
fn c20_uri_user_info_and_query_are_rejected_at_open() {
    let reg = registry();
    for (uri, part) in [
        (format!("s3://AKID:{SECRET}@{BUCKET}/p"), "user info"),
        (
            format!("s3://{BUCKET}/p/?X-Amz-Security-Token={SECRET}"),
            "query",
        ),
    ] {
        let e = reg
            .open(&uri, good(), None, RefreshConfig::default())
            .expect_err(&uri);
        assert_eq!(e.kind(), ErrorKind::InvalidOptions);
        let text = format!("{e} {e:?}");
        assert!(text.contains(part), "{text}");
        assert!(!text.contains(SECRET), "{text}");
    }
}
