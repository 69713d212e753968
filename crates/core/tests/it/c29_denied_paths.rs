//! Case C29: a credential scoped to a prefix; the job touches paths outside the scope. A
//! `HEAD` there is answered 403 without a body, a `GET` 403 `AccessDenied`. A denial is not an
//! expired or revoked credential: nothing is invalidated, no catalog call is spent on it (a
//! bodiless 403 is told apart by one probe request, not a refetch), the denied call fails with
//! `AccessDenied` naming the location, and another thread reading inside the scope never fails.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{ErrorKind, RefreshConfig, StorageOptionsProvider, VendedStore};

const DENIED_HEADS: usize = 1_000;

/// A store for the whole bucket whose provider vends keys scoped to `wh/t1/` (ten minutes),
/// with `wh/t1/in.parquet` written through it.
async fn open_scoped() -> (Arc<local_s3::LocalS3>, Arc<EndpointProvider>, VendedStore) {
    let s3 = endpoint().await;
    let mut provider = EndpointProvider::new(s3.clone(), Duration::from_secs(600));
    provider.scope = Some(format!("{BUCKET}/wh/t1/"));
    provider.id = "c29-scoped".into();
    let provider = Arc::new(provider);
    let initial = provider.vend();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    store
        .put("wh/t1/in.parquet", Bytes::from_static(b"inside the scope"))
        .await
        .unwrap();
    (s3, provider, store)
}

/// Sets the flag when dropped (also when the test panics).
struct Stop(Arc<AtomicBool>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c29_a_thousand_denied_heads_cost_no_catalog_call_and_no_read_elsewhere() {
    let (s3, provider, store) = open_scoped().await;
    let store = Arc::new(store);
    let key = provider.vended_keys()[0].clone();
    let calls_before = provider.calls();
    let rejections_before = store.refresh_stats().unwrap().endpoint_rejections;
    let before = s3.key_stats(&key);

    // Another thread reads inside the scope the whole time (until the HEADs are done, or the
    // test fails: the guard stops it, so a broken rule fails the test instead of hanging it).
    let done = Arc::new(AtomicBool::new(false));
    let _stop = Stop(done.clone());
    let (reads, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let reader = {
        let (store, done, reads, failed) =
            (store.clone(), done.clone(), reads.clone(), failed.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) || reads.load(Ordering::SeqCst) == 0 {
                match store.get("wh/t1/in.parquet").await {
                    Ok(b) => assert_eq!(b, Bytes::from_static(b"inside the scope")),
                    Err(e) => {
                        if failed.fetch_add(1, Ordering::SeqCst) == 0 {
                            eprintln!("in-scope read failed: {e}");
                        }
                    }
                }
                reads.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        })
    };

    for i in 0..DENIED_HEADS {
        let path = format!("wh/t10/{}.parquet", i % 7);
        let e = store.head(&path).await.expect_err("outside the scope");
        let text = e.to_string();
        assert_eq!(e.kind(), ErrorKind::Credentials, "{text}");
        if i == 0 {
            eprintln!("denied HEAD: {text}");
        }
        assert!(text.contains("AccessDenied"), "{text}");
        assert!(text.contains(&format!("s3://{BUCKET}/{path}")), "{text}");
    }
    // A GET outside the scope has a body: AccessDenied at once.
    let e = store.get("wh/t10/0.parquet").await.unwrap_err();
    assert!(e.to_string().contains("AccessDenied"), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("s3://{BUCKET}/wh/t10/0.parquet")),
        "{e}"
    );
    done.store(true, Ordering::SeqCst);
    reader.await.unwrap();

    assert!(
        provider.calls() - calls_before <= 1,
        "{} provider calls for {DENIED_HEADS} denied HEADs",
        provider.calls() - calls_before
    );
    assert_eq!(
        store.refresh_stats().unwrap().endpoint_rejections - rejections_before,
        0,
        "the valid credential was never invalidated"
    );
    assert_eq!(failed.load(Ordering::SeqCst), 0, "in-scope reads failed");
    assert!(reads.load(Ordering::SeqCst) > 0);
    // One request per denied HEAD: a probe only for the first HEAD of each of the 7 keys
    // (then remembered), all signed with the first key; and the one GET.
    let after = s3.key_stats(&key);
    let denied = after.denied - before.denied;
    assert_eq!(
        denied,
        DENIED_HEADS as u64 + 7 + 1,
        "denied requests for {DENIED_HEADS} HEADs of 7 keys and one GET"
    );
    assert_eq!(provider.vended_keys().len(), 1, "one key vended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c29_a_revoked_key_is_still_told_apart_on_head() {
    // The probe must not turn a revoked key into a denial (C18 (a) for HEAD).
    let (s3, provider, store) = open_scoped().await;
    s3.revoke(&provider.vended_keys()[0]);
    let info = store
        .head("wh/t1/in.parquet")
        .await
        .expect("refetched and retried");
    assert_eq!(info.size, 16);
    assert_eq!(provider.calls(), 1, "one refetch");
}
