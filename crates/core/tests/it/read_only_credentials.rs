//! Issue 24: a store opened with a read-only vended credential reads, heads and lists; every
//! write (put, delete, copy, multipart) fails at once with a message saying the credential does
//! not allow writes, kind `Credentials`, one refused request each and no extra provider call
//! (an `AccessDenied` is no expired credential). A credential without LIST reads but cannot
//! list, and says so.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, BUCKET};
use local_s3::{KeyStats, LocalS3, Permissions};
use vended_storage::cloud::located::{NO_LISTING, NO_WRITES};
use vended_storage::{
    Error, ErrorKind, RefreshConfig, Result, StorageOptions, StorageOptionsProvider, VendedStore,
    WriterOptions,
};

/// Vends keys with `permissions` living ten minutes; counts its calls and keeps every secret.
#[derive(Debug)]
struct Vendor {
    s3: Arc<LocalS3>,
    permissions: Permissions,
    calls: AtomicUsize,
    keys: Mutex<Vec<(String, String, String)>>,
}

impl Vendor {
    fn new(s3: Arc<LocalS3>, permissions: Permissions) -> Arc<Self> {
        Arc::new(Self {
            s3,
            permissions,
            calls: AtomicUsize::new(0),
            keys: Mutex::new(Vec::new()),
        })
    }

    fn vend(&self) -> StorageOptions {
        let creds =
            self.s3
                .issue_credentials_with(Duration::from_secs(600), None, self.permissions);
        self.keys.lock().unwrap().push((
            creds.access_key_id.clone(),
            creds.secret_access_key.clone(),
            creds.session_token.clone(),
        ));
        self.s3.storage_options(&creds)
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The only key vended so far.
    fn key(&self) -> (String, String, String) {
        let keys = self.keys.lock().unwrap();
        assert_eq!(keys.len(), 1, "one key vended");
        keys[0].clone()
    }
}

#[async_trait]
impl StorageOptionsProvider for Vendor {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Some(self.vend()))
    }

    fn provider_id(&self) -> String {
        "read-only-vendor".into()
    }
}

/// Seeds `{dir}/t/obj` with the root key, then opens `s3://BUCKET/{dir}` with the vendor's
/// first credential and the vendor as provider.
async fn open(s3: &Arc<LocalS3>, vendor: &Arc<Vendor>, dir: &str) -> VendedStore {
    let uri = format!("s3://{BUCKET}/{dir}");
    let root = registry()
        .open(
            &uri,
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    root.put("t/obj", Bytes::from_static(b"0123456789"))
        .await
        .unwrap();
    let provider: Arc<dyn StorageOptionsProvider> = vendor.clone();
    registry()
        .open(
            &uri,
            vendor.vend(),
            Some(provider),
            RefreshConfig::default(),
        )
        .unwrap()
}

/// The error of `r`: kind `Credentials`, message exactly `expected`, no secret in it.
fn assert_refused<T: std::fmt::Debug>(
    r: Result<T>,
    expected: &str,
    secrets: &(String, String, String),
) {
    let e: Error = r.expect_err(expected);
    let message = e.to_string();
    assert_eq!(
        (e.kind(), message.as_str()),
        (ErrorKind::Credentials, expected)
    );
    assert!(!e.is_retryable(), "{message}");
    assert!(
        !message.contains(&secrets.1) && !message.contains(&secrets.2),
        "a secret in: {message}"
    );
}

fn read_only(op: &str) -> String {
    format!("{NO_WRITES}: the credential is read-only: {op} is a write, which it does not allow")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_credential_reads_and_every_write_says_it_is_not_allowed() {
    let s3 = endpoint().await;
    let vendor = Vendor::new(s3.clone(), Permissions::READ_ONLY);
    let store = open(&s3, &vendor, "ro").await;
    let key = vendor.key();
    let at = format!("s3://{BUCKET}/ro/t");

    assert_eq!(store.get("t/obj").await.unwrap(), &b"0123456789"[..]);
    assert_eq!(store.head("t/obj").await.unwrap().size, 10);
    let listed = store.list(Some("t")).await.unwrap();
    assert_eq!(
        listed.iter().map(|o| o.path.as_str()).collect::<Vec<_>>(),
        ["t/obj"]
    );

    assert_refused(
        store.put("t/new", Bytes::from_static(b"x")).await,
        &format!("PUT {at}/new: 403 AccessDenied: {}", read_only("PutObject")),
        &key,
    );
    assert_refused(
        store.delete("t/obj").await,
        &format!(
            "DELETE {at}/obj: 403 AccessDenied: {}",
            read_only("DeleteObject")
        ),
        &key,
    );
    assert_refused(
        store.copy("t/obj", "t/copy").await,
        &format!(
            "COPY {at}/obj -> {at}/copy: 403 AccessDenied: {}",
            read_only("CopyObject")
        ),
        &key,
    );
    // More than one part: a multipart upload, refused at its creation.
    let mut writer = store.writer("t/big", WriterOptions::default()).unwrap();
    let data = common::data(6 << 20, 24);
    let written = match writer.write(&data).await {
        Ok(()) => writer.finish().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_refused(
        written,
        &format!(
            "POST {at}/big: 403 AccessDenied: {}",
            read_only("CreateMultipartUpload")
        ),
        &key,
    );

    assert_eq!(vendor.calls(), 0, "no refetch for a refused permission");
    assert_eq!(
        s3.key_stats(&key.0),
        KeyStats {
            accepted: 3,
            rejected: 4,
            denied: 4,
            ..KeyStats::default()
        },
        "one request per refused write, none retried"
    );
    assert!(s3.incomplete_uploads(Some(BUCKET)).is_empty());
    assert_eq!(store.get("t/obj").await.unwrap(), &b"0123456789"[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_without_list_reads_and_a_listing_says_it_is_not_allowed() {
    let s3 = endpoint().await;
    let vendor = Vendor::new(s3.clone(), Permissions::READ_ONLY.without_list());
    let store = open(&s3, &vendor, "nl").await;
    let key = vendor.key();

    assert_eq!(store.get("t/obj").await.unwrap(), &b"0123456789"[..]);
    assert_eq!(store.get_range("t/obj", 2..5).await.unwrap(), &b"234"[..]);
    assert_refused(
        store.list(Some("t")).await,
        &format!(
            "LIST s3://{BUCKET}/nl/t/: 403 AccessDenied: {NO_LISTING}: the credential does not allow listing: ListObjectsV2 is refused"
        ),
        &key,
    );
    assert_eq!(vendor.calls(), 0, "no refetch for a refused listing");
    assert_eq!(s3.key_stats(&key.0).denied, 1);
    assert_eq!(s3.key_stats(&key.0).expired, 0);
}
