//! Create-only and if-match writes of objects larger than one part (multipart uploads) against
//! the local S3 endpoint, through the public writer: the loser is refused with the writer's
//! error kind, the winner's bytes stay, and the loser's upload is aborted (no parts left). The
//! window between a writer's `HEAD` check and its completion, where only the conditional
//! completion refuses, is driven step by step in the crate's `io::write::race_tests`.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{data, endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{
    ErrorKind, ObjectWriter, RefreshConfig, StorageOptionsProvider, VendedStore, WriteMode,
    WriterOptions,
};

const MIB: usize = 1 << 20;
/// Three parts of 5 MiB (the last one 1 MiB).
const SIZE: usize = 11 * MIB;

async fn open() -> (Arc<local_s3::LocalS3>, VendedStore) {
    let s3 = endpoint().await;
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(300)));
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/race"),
            provider.vend(),
            Some(provider as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    (s3, store)
}

/// A writer of `bytes` under `mode` with every byte written (its parts uploading), not finished.
async fn written(store: &VendedStore, mode: WriteMode, bytes: &[u8]) -> ObjectWriter {
    let options = WriterOptions {
        part_size: 5 * MIB,
        mode,
        ..Default::default()
    };
    let mut w = store.writer("obj", options).unwrap();
    for piece in bytes.chunks(MIB) {
        w.write(piece).await.unwrap();
    }
    assert!(w.upload_id().is_some(), "a multipart upload");
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_create_only_multipart_writers_the_first_to_finish_wins() {
    let (s3, store) = open().await;
    let (mine, theirs) = (data(SIZE, 1), data(SIZE, 2));
    let mut a = written(&store, WriteMode::Create, &mine).await;
    let mut b = written(&store, WriteMode::Create, &theirs).await;
    a.finish().await.unwrap();
    let e = b.finish().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(
        b.finish().await.unwrap_err().kind(),
        ErrorKind::AlreadyExists,
        "the writer keeps its error"
    );
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from(mine));
    assert_eq!(
        s3.incomplete_uploads(Some(BUCKET)),
        vec![],
        "B's upload aborted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_if_match_multipart_write_with_a_stale_etag_is_refused() {
    let (s3, store) = open().await;
    let v1 = store
        .put_opts("obj", Bytes::from_static(b"v1"), WriteMode::Overwrite)
        .await
        .unwrap()
        .e_tag
        .unwrap();
    let v2 = store
        .put_opts("obj", Bytes::from_static(b"v2"), WriteMode::Overwrite)
        .await
        .unwrap()
        .e_tag
        .unwrap();
    let mut stale = written(&store, WriteMode::IfMatch(v1), &data(SIZE, 3)).await;
    let e = stale.finish().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Precondition, "{e}");
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from_static(b"v2"));
    assert_eq!(s3.incomplete_uploads(Some(BUCKET)), vec![]);
    // The current ETag: the write goes through.
    let fresh = data(SIZE, 4);
    let mut current = written(&store, WriteMode::IfMatch(v2), &fresh).await;
    current.finish().await.unwrap();
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from(fresh));
}
