//! Issue 24, read versus write: a store opened with `access_mode=read` (here with read-only keys
//! from the endpoint, as a catalog vends them for reading) reads, heads and lists; every write
//! (put, delete, copy, rename, multipart) is refused locally: kind `Credentials`, a message
//! naming the operation, the location and the read open, no request sent and no provider call.
//! A `read_write` store of the same table (read-write keys) writes. The two modes of one table,
//! even with the same provider, are two stores with their own credentials.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, BUCKET};
use local_s3::{KeyStats, LocalS3, Permissions};
use object_store::ObjectStoreExt;
use vended_storage::access::ACCESS_MODE;
use vended_storage::{
    AccessMode, ErrorKind, ObjectStoreRegistry, RefreshConfig, Result, StorageOptions,
    StorageOptionsProvider, VendedStore, WriterOptions,
};

/// Vends keys with `permissions`, ten minutes each; counts its calls, keeps the key ids.
#[derive(Debug)]
struct Vendor {
    s3: Arc<LocalS3>,
    permissions: Permissions,
    id: String,
    calls: AtomicUsize,
    keys: Mutex<Vec<String>>,
}

impl Vendor {
    fn new(s3: &Arc<LocalS3>, permissions: Permissions, id: &str) -> Arc<Self> {
        Arc::new(Self {
            s3: s3.clone(),
            permissions,
            id: id.into(),
            calls: AtomicUsize::new(0),
            keys: Mutex::new(Vec::new()),
        })
    }

    fn vend(&self) -> StorageOptions {
        let creds =
            self.s3
                .issue_credentials_with(Duration::from_secs(600), None, self.permissions);
        self.keys.lock().unwrap().push(creds.access_key_id.clone());
        self.s3.storage_options(&creds)
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

#[async_trait]
impl StorageOptionsProvider for Vendor {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Some(self.vend()))
    }

    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

/// The endpoint's options without any credential (the provider's first answer brings them).
fn without_credentials(s3: &LocalS3) -> StorageOptions {
    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let mut options = s3.storage_options(&creds);
    for key in [
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "expires_at_millis",
    ] {
        options.remove(key);
    }
    options
}

fn open(
    registry: &ObjectStoreRegistry,
    uri: &str,
    mut options: StorageOptions,
    mode: AccessMode,
    vendor: &Arc<Vendor>,
) -> VendedStore {
    mode.set_in(&mut options);
    let provider: Arc<dyn StorageOptionsProvider> = vendor.clone();
    registry
        .open(uri, options, Some(provider), RefreshConfig::default())
        .unwrap()
}

fn assert_refused<T: std::fmt::Debug>(r: Result<T>, operation: &str, location: &str) {
    let e = r.expect_err(operation);
    let message = e.to_string();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{message}");
    assert!(!e.is_retryable(), "{message}");
    assert!(
        message.contains(&format!(
            "{operation} {location} refused: the table was opened for reading (access mode READ)"
        )),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_store_reads_and_refuses_writes_locally_and_a_read_write_store_writes() {
    let s3 = endpoint().await;
    let registry = registry();
    let uri = format!("s3://{BUCKET}/am");
    let root = registry
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

    let reader = Vendor::new(&s3, Permissions::READ_ONLY, "table-am:read");
    let store = open(&registry, &uri, reader.vend(), AccessMode::Read, &reader);
    let key = reader.keys()[0].clone();
    assert_eq!(store.key().access, AccessMode::Read);
    assert_eq!(store.get("t/obj").await.unwrap(), &b"0123456789"[..]);
    assert_eq!(store.head("t/obj").await.unwrap().size, 10);
    assert_eq!(store.list(Some("t")).await.unwrap().len(), 1);
    let reads = s3.key_stats(&key);
    assert_eq!(
        reads,
        KeyStats {
            accepted: 3,
            ..KeyStats::default()
        }
    );

    let at = format!("s3://{BUCKET}/am/t");
    assert_refused(
        store.put("t/new", Bytes::from_static(b"x")).await,
        "PUT",
        &format!("{at}/new"),
    );
    assert_refused(store.delete("t/obj").await, "DELETE", &format!("{at}/obj"));
    assert_refused(
        store.copy("t/obj", "t/copy").await,
        "COPY",
        &format!("{at}/obj -> {at}/copy"),
    );
    assert_refused(
        store.rename("t/obj", "t/moved").await,
        "RENAME",
        &format!("{at}/obj -> {at}/moved"),
    );
    let mut writer = store.writer("t/big", WriterOptions::default()).unwrap();
    let data = common::data(6 << 20, 24);
    let written = match writer.write(&data).await {
        Ok(()) => writer.finish().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert_refused(written, "PUT (multipart)", &format!("{at}/big"));
    let mut small = store.writer("t/small", WriterOptions::default()).unwrap();
    small.write(b"abc").await.unwrap();
    let e = small.finish().await.map(|_| ()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    assert!(e.to_string().contains("opened for reading"), "{e}");

    assert_eq!(
        s3.key_stats(&key),
        reads,
        "no request sent for a refused write"
    );
    assert_eq!(reader.calls(), 0, "no provider call for a refused write");
    assert!(s3.incomplete_uploads(Some(BUCKET)).is_empty());

    // The same table opened for writing, with read-write keys, writes.
    let writer_vendor = Vendor::new(&s3, Permissions::READ_WRITE, "table-am:read_write");
    let rw = open(
        &registry,
        &uri,
        writer_vendor.vend(),
        AccessMode::ReadWrite,
        &writer_vendor,
    );
    assert_ne!(rw.key(), store.key());
    rw.put("t/new", Bytes::from_static(b"x")).await.unwrap();
    rw.rename("t/new", "t/moved").await.unwrap();
    assert_eq!(store.get("t/moved").await.unwrap(), &b"x"[..]);
    assert_eq!(writer_vendor.calls(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_two_modes_of_one_table_have_their_own_stores_and_credentials() {
    let s3 = endpoint().await;
    let registry = registry();
    let uri = format!("s3://{BUCKET}/two");
    let root = registry
        .open(
            &uri,
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    root.put("obj", Bytes::from_static(b"abc")).await.unwrap();

    // One provider (one id) for both modes: the store key still keeps them apart.
    let vendor = Vendor::new(&s3, Permissions::READ_WRITE, "table-two");
    let base = without_credentials(&s3);
    let read = open(&registry, &uri, base.clone(), AccessMode::Read, &vendor);
    let rw = open(
        &registry,
        &uri,
        base.clone(),
        AccessMode::ReadWrite,
        &vendor,
    );
    let read_again = open(&registry, &uri, base.clone(), AccessMode::Read, &vendor);
    assert_ne!(read.key(), rw.key());
    assert_eq!(read.key(), read_again.key());
    assert_eq!(registry.len(), 3, "root, read and read-write stores");

    assert_eq!(read.get("obj").await.unwrap(), &b"abc"[..]);
    assert_eq!(read_again.get("obj").await.unwrap(), &b"abc"[..]);
    assert_eq!(vendor.calls(), 1, "the read stores share one credential");
    assert_eq!(rw.get("obj").await.unwrap(), &b"abc"[..]);
    assert_eq!(vendor.calls(), 2, "the read-write store fetched its own");
    let keys = vendor.keys();
    assert_eq!(keys.len(), 2);
    assert_ne!(keys[0], keys[1]);
    assert_eq!(s3.key_stats(&keys[0]).accepted, 2);
    assert_eq!(s3.key_stats(&keys[1]).accepted, 1);
    assert!(read.put("obj", Bytes::from_static(b"x")).await.is_err());
    rw.put("obj", Bytes::from_static(b"x")).await.unwrap();
    assert_eq!(
        s3.key_stats(&keys[0]).accepted,
        2,
        "the read key never wrote"
    );
    assert_eq!(
        base.get(ACCESS_MODE),
        None,
        "the mode is set per open, not in the shared options"
    );
}

#[tokio::test]
async fn the_registry_keeps_modes_apart_and_refuses_writes_of_read_stores() {
    let registry = registry();
    let open = |mode: Option<&str>| {
        let mut options = StorageOptions::new();
        if let Some(mode) = mode {
            options.insert(ACCESS_MODE.to_string(), mode.to_string());
        }
        registry
            .open(
                "memory://access-test/t",
                options,
                None,
                RefreshConfig::default(),
            )
            .unwrap()
    };
    let default = open(None);
    let rw = open(Some("read_write"));
    let read = open(Some("read"));
    assert_eq!(default.key(), rw.key(), "read_write is the default");
    assert_ne!(read.key(), rw.key());
    assert_eq!(read.key().access, AccessMode::Read);
    assert!(
        read.key().options.iter().all(|(k, _)| k != ACCESS_MODE),
        "the mode is the key's access, not an option"
    );
    assert_eq!(registry.len(), 2);

    rw.put("a", Bytes::from_static(b"1")).await.unwrap();
    let e = read.put("b", Bytes::from_static(b"2")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials);
    assert!(
        e.to_string()
            .contains("PUT memory://access-test/t/b refused"),
        "{e}"
    );
    let e = read.delete("a").await.unwrap_err();
    assert!(e.to_string().contains("DELETE"), "{e}");
    assert!(read
        .object_store()
        .put(
            &object_store::path::Path::from("t/c"),
            object_store::PutPayload::from_static(b"3")
        )
        .await
        .is_err());

    let bad = registry.open(
        "memory://access-test/t",
        std::collections::HashMap::from([(ACCESS_MODE.to_string(), "write".to_string())]),
        None,
        RefreshConfig::default(),
    );
    assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidOptions);
}

#[test]
fn a_table_open_keeps_the_callers_mode_and_drops_a_vended_one() {
    let mine: StorageOptions =
        std::collections::HashMap::from([(ACCESS_MODE.to_string(), "read".to_string())]);
    let vended: StorageOptions =
        std::collections::HashMap::from([(ACCESS_MODE.to_string(), "read_write".to_string())]);
    assert_eq!(
        vended_storage::table::open_options(&mine, &vended)[ACCESS_MODE],
        "read"
    );
    let o = vended_storage::table::open_options(&StorageOptions::new(), &vended);
    assert!(!o.contains_key(ACCESS_MODE), "{o:?}");
}
