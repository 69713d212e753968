//! Multipart uploads complete without joining their parts: the object is read across the
//! parts (ranges spanning part boundaries included), and a 2.25 GiB upload with object_store's
//! default client settings (30 s request timeout) completes (`--ignored`, measures).

use crate::common;

use std::time::{Duration, Instant};

use common::BUCKET;
use local_s3::{LocalS3, LocalS3Config};
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload,
};

const MIB: usize = 1 << 20;

fn part(n: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + n * 7) as u8).collect()
}

#[tokio::test]
async fn a_completed_upload_reads_back_across_its_parts() {
    let s3 = common::start().await;
    let store = common::root_store(&s3, BUCKET);
    let path = Path::from("mpu/three-parts.bin");
    let parts = [part(1, 5 * MIB), part(2, 5 * MIB), part(3, 123)];
    let mut upload = store.put_multipart(&path).await.unwrap();
    for p in &parts {
        upload.put_part(PutPayload::from(p.clone())).await.unwrap();
    }
    let result = upload.complete().await.unwrap();
    assert!(result.e_tag.unwrap().ends_with("-3\""));
    let whole: Vec<u8> = parts.concat();
    let got = store.get(&path).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.len(), whole.len());
    assert!(got[..] == whole[..]);
    // A range spanning all three parts.
    let (start, end) = (5 * MIB - 10, 10 * MIB + 100);
    let opts = GetOptions {
        range: Some(GetRange::Bounded(start as u64..end as u64)),
        ..Default::default()
    };
    let got = store
        .get_opts(&path, opts)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(got[..] == whole[start..end]);
    assert!(s3.incomplete_uploads(None).is_empty());
    // Only the object's data files remain: the upload's directory is gone.
    let uploads = s3.data_dir().join(BUCKET).join(".uploads");
    let left = std::fs::read_dir(&uploads).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0);
}

/// 2.25 GiB in 10 MiB parts (object_store's default part size, 8 at once), default client
/// settings: complete must answer well inside the 30 s request timeout. Prints the times.
async fn big_upload(in_memory: bool) {
    let s3 = LocalS3::start(LocalS3Config {
        in_memory,
        ..Default::default()
    })
    .await
    .unwrap();
    s3.create_bucket(BUCKET).unwrap();
    let store = AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_allow_http(true)
        .with_bucket_name(BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(s3.root_access_key())
        .with_secret_access_key(s3.root_secret_key())
        .build()
        .unwrap();
    let path = Path::from("big/2.25GiB.bin");
    let total = 2304 * MIB;
    let part_size = 10 * MIB;
    let started = Instant::now();
    let mut upload = store.put_multipart(&path).await.unwrap();
    let payload = PutPayload::from(vec![7u8; part_size]);
    let mut pending = Vec::new();
    for _ in 0..total / part_size {
        pending.push(upload.put_part(payload.clone()));
        if pending.len() == 8 {
            futures::future::try_join_all(pending.drain(..))
                .await
                .unwrap();
        }
    }
    futures::future::try_join_all(pending).await.unwrap();
    let rest = total % part_size;
    if rest > 0 {
        upload
            .put_part(PutPayload::from(vec![7u8; rest]))
            .await
            .unwrap();
    }
    let parts_done = started.elapsed();
    let complete_started = Instant::now();
    upload.complete().await.unwrap();
    let complete = complete_started.elapsed();
    let head = store.head(&path).await.unwrap();
    assert_eq!(head.size, total as u64);
    // Read it back across its parts: every byte is 7.
    let read_started = Instant::now();
    let mut stream = store.get(&path).await.unwrap().into_stream();
    let mut read = 0usize;
    while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
        let chunk = chunk.unwrap();
        assert!(chunk.iter().all(|&b| b == 7));
        read += chunk.len();
    }
    assert_eq!(read, total);
    let read_secs = read_started.elapsed().as_secs_f64();
    println!(
        "big multipart ({}): {} MiB in {} parts uploaded in {:.1} s, CompleteMultipartUpload {} ms, GET {:.0} MiB/s",
        if in_memory { "--in-memory" } else { "disk" },
        total / MIB,
        total.div_ceil(part_size),
        parts_done.as_secs_f64(),
        complete.as_millis(),
        (total / MIB) as f64 / read_secs
    );
    assert!(
        complete < Duration::from_secs(10),
        "complete took {complete:?}"
    );
}

#[tokio::test]
#[ignore = "uploads 2.25 GiB; run with --release -- --ignored --nocapture"]
async fn big_multipart_completes_fast_in_memory() {
    big_upload(true).await;
}

#[tokio::test]
#[ignore = "uploads 2.25 GiB; run with --release -- --ignored --nocapture"]
async fn big_multipart_completes_fast_on_disk() {
    big_upload(false).await;
}
