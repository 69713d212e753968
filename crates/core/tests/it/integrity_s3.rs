//! End-to-end checksums on S3 against the local endpoint (which verifies every checksum header
//! it receives and returns stored checksums): writes carry CRC64NVME, whole reads are checked.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{
    ErrorKind, RefreshConfig, StorageOptionsProvider, VendedStore, WriteMode, WriterOptions,
};

async fn open(s3: &Arc<local_s3::LocalS3>, prefix: &str, extra: &[(&str, &str)]) -> VendedStore {
    let s3 = s3.clone();
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
    let s3 = endpoint().await;
    let store = open(&s3, "integrity-on", &[]).await;
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
    let s3 = endpoint().await;
    let store = open(&s3, "integrity-off", &[("checksums", "false")]).await;
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

/// One bit flipped in a GET's body by the endpoint: read once more and returned intact; two
/// flips in a row: kind `Integrity` naming the object and both values; with checksums off the
/// flipped bytes are returned (the control that shows the check is what catches it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_response_bit_is_caught_on_s3_and_missed_with_checksums_off() {
    let s3 = endpoint().await;
    let store = open(&s3, "flip-get", &[]).await;
    let src = bytes::Bytes::from(data(1 << 20, 7));
    store.put("f.bin", src.clone()).await.unwrap();
    let key = "flip-get/f.bin";

    s3.flip_next_response(BUCKET, key);
    assert_eq!(store.get("f.bin").await.unwrap(), src, "re-read intact");
    let stats = store.stats();
    assert_eq!((stats.checksum_mismatches, stats.checksums_matched), (1, 1));

    s3.flip_next_response(BUCKET, key);
    s3.flip_next_response(BUCKET, key);
    let e = store.get("f.bin").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Integrity, "{e}");
    let text = e.to_string();
    assert!(text.contains(&format!("s3://{BUCKET}/{key}")), "{text}");
    assert!(text.contains("CRC64NVME"), "{text}");

    // Java's getAll and getInto, and streams read to the end, go through get_into/bodies.
    s3.flip_next_response(BUCKET, key);
    let mut buf = vec![0u8; src.len()];
    assert_eq!(
        store.get_into("f.bin", &mut buf).await.unwrap(),
        src.len() as u64
    );
    assert_eq!(&buf[..], &src[..], "get_into read it again");
    s3.flip_next_response(BUCKET, key);
    let mut body = store
        .read_to_end("f.bin", 0, src.len() as u64, None)
        .await
        .unwrap();
    let mut whole = vec![0u8; src.len()];
    let e = body.read_into(&mut whole).await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::Integrity,
        "a stream fails at its last byte: {e}"
    );

    let off = open(&s3, "flip-get-off", &[("checksums", "false")]).await;
    off.put("f.bin", src.clone()).await.unwrap();
    s3.flip_next_response(BUCKET, "flip-get-off/f.bin");
    let corrupted = off.get("f.bin").await.unwrap();
    assert_ne!(
        corrupted, src,
        "without checksums the flipped bit is handed on"
    );
    assert_eq!(s3.flips().response, 6);
}

/// One bit flipped in a PUT's body, and in a multipart part, after the endpoint received it:
/// the endpoint's check of the CRC64NVME the client sent refuses it and nothing is stored; with
/// checksums off the corrupted object is stored (the control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_request_bit_is_refused_by_the_endpoint_and_stored_with_checksums_off() {
    let s3 = endpoint().await;
    let store = open(&s3, "flip-put", &[]).await;
    let src = bytes::Bytes::from(data(1 << 20, 8));
    s3.flip_next_request(BUCKET, "flip-put/p.bin");
    let e = store.put("p.bin", src.clone()).await.unwrap_err();
    assert!(e.to_string().contains("BadDigest"), "{e}");
    assert_eq!(
        store.head("p.bin").await.unwrap_err().kind(),
        ErrorKind::NotFound
    );

    let big = data(11 << 20, 9);
    s3.flip_next_request(BUCKET, "flip-put/m.bin");
    let mut w = store
        .writer(
            "m.bin",
            WriterOptions {
                part_size: 5 << 20,
                max_concurrency: 2,
                mode: WriteMode::Overwrite,
            },
        )
        .unwrap();
    let written = async {
        w.write(&big).await?;
        w.finish().await
    }
    .await;
    let e = written.unwrap_err();
    assert!(e.to_string().contains("BadDigest"), "{e}");
    assert_eq!(
        store.head("m.bin").await.unwrap_err().kind(),
        ErrorKind::NotFound
    );

    let off = open(&s3, "flip-put-off", &[("checksums", "false")]).await;
    s3.flip_next_request(BUCKET, "flip-put-off/p.bin");
    off.put("p.bin", src.clone()).await.unwrap();
    assert_ne!(off.get("p.bin").await.unwrap(), src, "stored one bit off");
    assert_eq!(s3.flips().request, 3);
}

/// A multipart object's full-object CRC64NVME is checked on its whole reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multipart_objects_are_checked_too() {
    let s3 = endpoint().await;
    let store = open(&s3, "integrity-mpu", &[]).await;
    let big = data(12 << 20, 10);
    let mut w = store
        .writer(
            "big.bin",
            WriterOptions {
                part_size: 5 << 20,
                max_concurrency: 2,
                mode: WriteMode::Overwrite,
            },
        )
        .unwrap();
    w.write(&big).await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(&store.get("big.bin").await.unwrap()[..], &big[..]);
    assert_eq!(store.stats().checksums_matched, 1);
}
