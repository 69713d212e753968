//! Case C24: a multipart upload in progress when its credential expires while the provider
//! fails. The write fails with the provider's error, nothing becomes visible, and the upload is
//! aborted with a refetched credential once the provider works again; until then the error and
//! the endpoint's list of incomplete uploads name the same upload.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use local_s3::LocalS3;
use vended_storage::{
    Error, ErrorKind, RefreshConfig, Result, StorageOptions, StorageOptionsProvider, VendedStore,
    WriterOptions,
};

const MIB: usize = 1 << 20;
/// Lifetime of each vended credential.
const TTL: Duration = Duration::from_secs(3);

/// Vends credentials from the endpoint, or fails with "catalog down" while `down` is set.
#[derive(Debug)]
struct Switchable {
    inner: EndpointProvider,
    down: AtomicBool,
}

#[async_trait]
impl StorageOptionsProvider for Switchable {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        if self.down.load(Ordering::SeqCst) {
            return Err(Error::provider("c24-provider", "catalog down"));
        }
        self.inner.fetch_storage_options().await
    }
    fn provider_id(&self) -> String {
        "c24-provider".into()
    }
}

async fn open(prefix: &str) -> (Arc<LocalS3>, Arc<Switchable>, VendedStore) {
    let s3 = endpoint().await;
    let provider = Arc::new(Switchable {
        inner: EndpointProvider::new(s3.clone(), TTL),
        down: AtomicBool::new(false),
    });
    let config = RefreshConfig {
        lead_time: Duration::from_millis(1000),
        stale_window: Duration::from_millis(500),
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(400),
        jitter: 0.0,
        ..RefreshConfig::default()
    };
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/{prefix}"),
            provider.inner.vend(),
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            config,
        )
        .unwrap();
    (s3, provider, store)
}

/// The upload ids the endpoint still holds for `key`.
fn incomplete(s3: &LocalS3, key: &str) -> Vec<String> {
    s3.incomplete_uploads(Some(BUCKET))
        .into_iter()
        .filter(|u| u.key == key)
        .map(|u| u.upload_id)
        .collect()
}

/// Takes the catalog down and waits until the last credential it vended has expired.
async fn outage_until_expiry(provider: &Switchable) {
    provider.down.store(true, Ordering::SeqCst);
    let deadline = Instant::now() + TTL + Duration::from_millis(500);
    tokio::time::sleep_until(deadline.into()).await;
}

/// Polls (every 100 ms, at most `limit`) until the endpoint holds no upload for `key`.
async fn wait_until_aborted(s3: &LocalS3, key: &str, limit: Duration) -> Vec<String> {
    let start = Instant::now();
    loop {
        let left = incomplete(s3, key);
        if left.is_empty() || start.elapsed() > limit {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn root_store(s3: &LocalS3) -> VendedStore {
    registry()
        .open(
            &format!("s3://{BUCKET}"),
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c24_a_failed_close_names_the_upload_and_aborts_it_once_the_provider_is_back() {
    let (s3, provider, store) = open("c24").await;
    let key = "c24/obj";
    let mut w = store.writer("obj", WriterOptions::default()).unwrap();
    w.write(&data(12 * MIB, 1)).await.unwrap();
    let id = w
        .upload_id()
        .expect("a multipart upload started")
        .to_string();
    assert_eq!(incomplete(&s3, key), vec![id.clone()]);

    outage_until_expiry(&provider).await;
    let e = w.finish().await.unwrap_err();

    // The provider's error, naming the upload, its location and that it is still there.
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    let text = e.to_string();
    assert!(text.contains("catalog down"), "{text}");
    assert!(
        text.contains(&id) && text.contains("s3://test-bucket/c24/obj"),
        "{text}"
    );
    assert!(text.contains("AbortIncompleteMultipartUpload"), "{text}");
    match &e {
        Error::UploadLeft {
            location,
            upload_id,
            ..
        } => {
            assert_eq!(location, "s3://test-bucket/c24/obj");
            assert_eq!(upload_id.as_deref(), Some(id.as_str()));
        }
        other => panic!("expected UploadLeft, got {other:?}"),
    }
    assert!(!text.contains("SECRET") && !text.contains(&s3.root_secret_key().to_string()));
    // Nothing visible, and the parts are still stored while the provider is down.
    let root = root_store(&s3);
    assert_eq!(
        root.head(key).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        incomplete(&s3, key),
        vec![id.clone()],
        "still there while down"
    );

    // The catalog is back: the background abort, signed with a refetched credential, removes
    // the upload.
    provider.down.store(false, Ordering::SeqCst);
    let left = wait_until_aborted(&s3, key, Duration::from_secs(30)).await;
    assert!(left.is_empty(), "upload {left:?} was not aborted");
    assert_eq!(
        root.head(key).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(w.finish().await.unwrap_err().kind(), ErrorKind::Credentials);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c24_a_dropped_writer_is_aborted_once_the_provider_is_back() {
    let (s3, provider, store) = open("c24drop").await;
    let key = "c24drop/obj";
    let mut w = store.writer("obj", WriterOptions::default()).unwrap();
    w.write(&data(11 * MIB, 2)).await.unwrap();
    let id = w.upload_id().unwrap().to_string();
    outage_until_expiry(&provider).await;
    drop(w);
    // Still there while the provider is down (the abort cannot be signed)...
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(incomplete(&s3, key), vec![id]);
    // ...and aborted once it is back.
    provider.down.store(false, Ordering::SeqCst);
    let left = wait_until_aborted(&s3, key, Duration::from_secs(30)).await;
    assert!(left.is_empty(), "upload {left:?} was not aborted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c24_a_failed_write_with_a_working_provider_leaves_no_upload() {
    // The part fails for another reason (a create-only write over an existing object, checked
    // before completing): the abort works at once and the error is the write's own.
    let (s3, _provider, store) = open("c24ok").await;
    store
        .put("obj", bytes::Bytes::from_static(b"x"))
        .await
        .unwrap();
    let mut w = store
        .writer(
            "obj",
            WriterOptions {
                mode: vended_storage::WriteMode::Create,
                ..WriterOptions::default()
            },
        )
        .unwrap();
    w.write(&data(11 * MIB, 3)).await.unwrap();
    let e = w.finish().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert!(!matches!(e, Error::UploadLeft { .. }), "{e}");
    assert!(incomplete(&s3, "c24ok/obj").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c24_a_finish_dropped_half_way_aborts_the_upload() {
    use futures::FutureExt;
    let (s3, _provider, store) = open("c24cancel").await;
    let key = "c24cancel/obj";
    let mut w = store.writer("obj", WriterOptions::default()).unwrap();
    w.write(&data(11 * MIB, 4)).await.unwrap();
    let id = w.upload_id().unwrap().to_string();
    // One poll, then the future is dropped (as a caller's timeout or select! would).
    assert!(
        w.finish().now_or_never().is_none(),
        "finish completed in one poll"
    );
    let left = wait_until_aborted(&s3, key, Duration::from_secs(30)).await;
    assert!(left.is_empty(), "upload {id} not aborted: {left:?}");
    assert_eq!(
        root_store(&s3).head(key).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
}
