//! The data plane (crate `io` module) against the local S3 endpoint, which enforces SigV4,
//! session tokens, expiry and revocation.

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use vended_storage::{
    Error, ErrorKind, RefreshConfig, StorageOptionsProvider, VendedStore, WriteMode, WriterOptions,
};

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.unwrap_err().kind()
}

async fn open(
    prefix: &str,
    ttl: Duration,
    extra: &[(&str, &str)],
) -> (Arc<local_s3::LocalS3>, Arc<EndpointProvider>, VendedStore) {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), ttl));
    let mut initial = provider.vend();
    for (k, v) in extra {
        initial.insert(k.to_string(), v.to_string());
    }
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/{prefix}"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    (s3, provider, store)
}

const MIB: usize = 1 << 20;

/// The multipart uploads the endpoint holds that were neither completed nor aborted, as
/// `key upload-id`.
fn upload_files(s3: &local_s3::LocalS3) -> Vec<String> {
    s3.incomplete_uploads(Some(BUCKET))
        .into_iter()
        .map(|u| format!("{} {}", u.key, u.upload_id))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c18_multipart_upload_of_64_mib_across_2_s_credentials() {
    let (s3, provider, store) = open("mpu", Duration::from_secs(2), &[]).await;
    let src = data(64 * MIB, 11);
    let mut w = store
        .writer(
            "big.bin",
            WriterOptions {
                part_size: 5 * MIB,
                max_concurrency: 4,
                mode: WriteMode::Create,
            },
        )
        .unwrap();
    // Four segments of 16 MiB with a pause between them: the scenario is an upload that
    // outlives its credentials (2 s), so parts are signed by several generations.
    for (i, segment) in src.chunks(16 * MIB).enumerate() {
        for piece in segment.chunks(MIB) {
            w.write(piece).await.unwrap();
        }
        assert_eq!(
            kind(store.head("big.bin").await),
            ErrorKind::NotFound,
            "invisible before finish"
        );
        if i < 3 {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
    }
    let result = w.finish().await.unwrap();
    assert!(result.e_tag.is_some());

    let mut buf = vec![0u8; src.len()];
    assert_eq!(
        store.get_into("big.bin", &mut buf).await.unwrap(),
        src.len() as u64
    );
    assert_eq!(Sha256::digest(&buf), Sha256::digest(&src));

    let keys = provider.vended_keys();
    assert!(provider.calls() >= 2, "only {} refreshes", provider.calls());
    for key in &keys {
        let stats = s3.key_stats(key);
        assert_eq!(stats.rejected, 0, "key {key}: {stats:?}");
    }
    let part_signers: HashSet<String> = s3
        .request_log()
        .into_iter()
        .filter(|r| r.method == "PUT" && r.key.as_deref() == Some("mpu/big.bin"))
        .map(|r| r.access_key_id)
        .collect();
    assert!(
        part_signers.len() >= 2,
        "parts signed by {} key(s) only",
        part_signers.len()
    );
    assert_eq!(store.refresh_stats().unwrap().failures, 0);
    assert!(upload_files(&s3).is_empty(), "{:?}", upload_files(&s3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c18_a_part_rejected_by_a_revoked_key_is_retried_once_with_a_fresh_one() {
    let s3 = endpoint().await;
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/revoked"),
            provider.vend(),
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    let src = data(16 * MIB, 12);
    let mut w = store
        .writer(
            "obj",
            WriterOptions {
                part_size: 5 * MIB,
                max_concurrency: 2,
                ..Default::default()
            },
        )
        .unwrap();
    w.write(&src[..6 * MIB]).await.unwrap(); // the upload starts with gen1
    let gen1 = provider.vended_keys()[0].clone();
    s3.revoke(&gen1);
    w.write(&src[6 * MIB..]).await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(
        Sha256::digest(store.get("obj").await.unwrap()),
        Sha256::digest(&src)
    );
    assert_eq!(provider.calls(), 1, "one refetch for every rejected part");
    assert!(s3.key_stats(&gen1).rejected >= 1);
    assert_eq!(s3.key_stats(&provider.vended_keys()[1]).rejected, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_multipart_upload_leaves_no_object_and_no_parts() {
    let (s3, _provider, store) = open("abort", Duration::from_secs(3600), &[]).await;
    let mut w = store.writer("obj", WriterOptions::default()).unwrap();
    w.write(&data(12 * MIB, 13)).await.unwrap();
    assert!(!upload_files(&s3).is_empty(), "the upload started");
    w.abort().await.unwrap();
    assert_eq!(kind(store.head("obj").await), ErrorKind::NotFound);
    assert!(upload_files(&s3).is_empty(), "{:?}", upload_files(&s3));
    assert_eq!(kind(w.write(b"x").await), ErrorKind::Closed);

    // Dropped unfinished: aborted in the background.
    let mut w = store.writer("dropped", WriterOptions::default()).unwrap();
    w.write(&data(11 * MIB, 14)).await.unwrap();
    drop(w);
    let mut left = upload_files(&s3);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = upload_files(&s3);
    }
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(kind(store.head("dropped").await), ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranged_reads_at_random_offsets_equal_the_source() {
    let (_s3, _provider, store) = open("ranges", Duration::from_secs(3600), &[]).await;
    let src = data(8 * MIB + 17, 15);
    store.put("obj", Bytes::from(src.clone())).await.unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for _ in 0..40 {
        let offset = rng.random_range(0..src.len() as u64);
        let len = rng.random_range(1..600_000usize);
        let mut buf = vec![0u8; len];
        let n = store
            .read_range_into("obj", offset, &mut buf)
            .await
            .unwrap();
        let end = (offset as usize + len).min(src.len());
        assert_eq!(n, end - offset as usize);
        assert_eq!(&buf[..n], &src[offset as usize..end]);
    }
    let mut buf = [0u8; 8];
    assert_eq!(
        store
            .read_range_into("obj", src.len() as u64, &mut buf)
            .await
            .unwrap(),
        0,
        "at the end"
    );
    assert_eq!(
        store
            .read_range_into("obj", 1 << 40, &mut buf)
            .await
            .unwrap(),
        0
    );
    let ranges = [0..100, 5 * MIB as u64..5 * MIB as u64 + 1000, 100..200];
    let got = store.get_ranges("obj", &ranges).await.unwrap();
    for (r, b) in ranges.iter().zip(&got) {
        assert_eq!(&b[..], &src[r.start as usize..r.end as usize]);
    }
    // An ETag read once pins the version.
    let e_tag = store.head("obj").await.unwrap().e_tag.unwrap();
    store
        .put("obj", Bytes::from_static(b"replaced"))
        .await
        .unwrap();
    assert_eq!(
        kind(
            store
                .read_range_into_if_match("obj", 0, &mut buf, Some(&e_tag))
                .await
        ),
        ErrorKind::Precondition
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_only_and_if_match_puts() {
    let (_s3, _provider, store) = open("cond", Duration::from_secs(3600), &[]).await;
    let first = store
        .put_opts("obj", Bytes::from_static(b"one"), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        kind(
            store
                .put_opts("obj", Bytes::from_static(b"two"), WriteMode::Create)
                .await
        ),
        ErrorKind::AlreadyExists
    );
    assert_eq!(
        kind(
            store
                .put_opts(
                    "obj",
                    Bytes::from_static(b"two"),
                    WriteMode::IfMatch("\"nope\"".into())
                )
                .await
        ),
        ErrorKind::Precondition
    );
    store
        .put_opts(
            "obj",
            Bytes::from_static(b"two"),
            WriteMode::IfMatch(first.e_tag.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from_static(b"two"));
    assert_eq!(
        kind(
            store
                .put_opts(
                    "missing",
                    Bytes::from_static(b"x"),
                    WriteMode::IfMatch("\"a\"".into())
                )
                .await
        ),
        ErrorKind::Precondition
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_and_listings_agree_and_are_relative() {
    let (_s3, _provider, store) = open("list", Duration::from_secs(3600), &[]).await;
    for p in ["a/1", "a/2", "a/sub/3", "b/4", "top"] {
        store.put(p, Bytes::from(p.to_string())).await.unwrap();
    }
    use futures::TryStreamExt;
    let listed: Vec<_> = store
        .list_stream(None)
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 5);
    for info in &listed {
        let head = store.head(&info.path).await.unwrap();
        // A listing's ETag, where the endpoint gives one, must agree with HEAD's.
        if info.e_tag.is_some() {
            assert_eq!(head.e_tag, info.e_tag, "ETag of {}", info.path);
        }
        assert_eq!(head.size, info.size, "size of {}", info.path);
        assert_eq!(
            head.last_modified_millis, info.last_modified_millis,
            "last modification of {} (HEAD gives whole seconds, listings milliseconds)",
            info.path
        );
    }
    let level = store.list_with_delimiter(None).await.unwrap();
    assert_eq!(level.objects.len(), 1);
    assert_eq!(level.objects[0].path, "top");
    let head = store.head("top").await.unwrap();
    assert_eq!(
        level.objects[0].last_modified_millis,
        head.last_modified_millis
    );
    assert_eq!(level.common_prefixes, ["a", "b"]);
    let level = store.list_with_delimiter(Some("a/")).await.unwrap();
    let objects: Vec<_> = level.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["a/1", "a/2"]);
    assert_eq!(level.common_prefixes, ["a/sub"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_renames_and_create_only_copies() {
    let (_s3, _provider, store) = open(
        "copy",
        Duration::from_secs(3600),
        &[("aws_copy_if_not_exists", "multipart")],
    )
    .await;
    store.put("src", Bytes::from_static(b"data")).await.unwrap();
    store.copy("src", "dst").await.unwrap();
    assert_eq!(store.get("dst").await.unwrap(), Bytes::from_static(b"data"));
    assert_eq!(
        kind(store.copy_if_not_exists("src", "dst").await),
        ErrorKind::AlreadyExists
    );
    store.copy_if_not_exists("src", "fresh").await.unwrap();
    assert_eq!(
        store.get("fresh").await.unwrap(),
        Bytes::from_static(b"data")
    );
    store.rename("fresh", "moved").await.unwrap();
    assert_eq!(kind(store.head("fresh").await), ErrorKind::NotFound);
    assert_eq!(
        store.get("moved").await.unwrap(),
        Bytes::from_static(b"data")
    );

    // Without the option an S3 store cannot copy create-only: said with the option's name.
    let (_s3, _provider, plain) = open("copy2", Duration::from_secs(3600), &[]).await;
    plain.put("src", Bytes::from_static(b"data")).await.unwrap();
    let e = plain.copy_if_not_exists("src", "dst").await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "aws_copy_if_not_exists"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_part_size_below_5_mib_is_refused_by_name() {
    let (_s3, _provider, store) = open("badpart", Duration::from_secs(3600), &[]).await;
    let e = store
        .writer(
            "obj",
            WriterOptions {
                part_size: 5 * MIB - 1,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "part_size"),
        "{e}"
    );
    // A small object through a writer is one PUT.
    let mut w = store.writer("small", WriterOptions::default()).unwrap();
    w.write(b"hello").await.unwrap();
    w.finish().await.unwrap();
    assert_eq!(
        store.get("small").await.unwrap(),
        Bytes::from_static(b"hello")
    );
    assert_eq!(kind(w.write(b"more").await), ErrorKind::Closed);
}
