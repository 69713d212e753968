//! End-to-end checksums on S3 against the local endpoint (which verifies every checksum header
//! it receives and returns stored checksums): writes carry CRC64NVME, whole reads are checked.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{RefreshConfig, StorageOptionsProvider, VendedStore};

async fn open(prefix: &str, extra: &[(&str, &str)]) -> VendedStore {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3, Duration::from_secs(3600)));
    let mut initial = provider.vend();
    for (k, v) in extra {
        initial.insert(k.to_string(), v.to_string());
    }
    registry()
        .open(
            &format!("s3://{BUCKET}/{prefix}"),
            initial,
            Some(provider as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_reads_are_checked_against_the_stored_crc64nvme() {
    let store = open("integrity-on", &[]).await;
    let src = bytes::Bytes::from(data(3 << 20, 5));
    store.put("a.bin", src.clone()).await.unwrap();
    let before = store.stats();
    assert_eq!(store.get("a.bin").await.unwrap(), src);
    let after = store.stats();
    assert_eq!(after.checksums_matched - before.checksums_matched, 1);
    assert_eq!(after.checksum_mismatches, 0);
    // A ranged read is not a whole read: not checked.
    assert_eq!(
        store.get_range("a.bin", 10..20).await.unwrap(),
        src.slice(10..20)
    );
    assert_eq!(store.stats().checksums_matched, after.checksums_matched);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksums_off_sends_and_checks_none() {
    let store = open("integrity-off", &[("checksums", "false")]).await;
    let src = bytes::Bytes::from(data(1 << 20, 6));
    store.put("b.bin", src.clone()).await.unwrap();
    assert_eq!(store.get("b.bin").await.unwrap(), src);
    assert_eq!(store.stats().checksums_matched, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_checksums_value_is_refused_naming_the_option() {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3, Duration::from_secs(3600)));
    let mut initial = provider.vend();
    initial.insert("checksums".into(), "maybe".into());
    let e = registry()
        .open(
            &format!("s3://{BUCKET}/x"),
            initial,
            Some(provider as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("'checksums'"), "{e}");
    assert!(e.to_string().contains("maybe"), "{e}");
}
