//! The window a `HEAD` check cannot close: the object appears (or changes) after a create-only
//! or if-match multipart writer checked it and before its completion. Driven step by step as
//! [`ObjectWriter::finish`] runs them (check, complete, abort after a failure), with the other
//! write in between, against the in-process S3 endpoint (which enforces `If-None-Match` and
//! `If-Match` on `CompleteMultipartUpload`): only the conditional completion can refuse here.
//! The same on Azurite with a SAS token (`If-None-Match`/`If-Match` on Put Block List).

use bytes::Bytes;
use local_s3::{LocalS3, LocalS3Config};

use super::*;
use crate::{ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig};

const MIB: usize = 1 << 20;
const BUCKET: &str = "race";

async fn open() -> (LocalS3, VendedStore) {
    let s3 = LocalS3::start(LocalS3Config::default()).await.unwrap();
    s3.create_bucket(BUCKET).unwrap();
    let store = ObjectStoreRegistry::new(RegistryConfig::default())
        .open(
            &format!("s3://{BUCKET}/t"),
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    (s3, store)
}

/// A writer of 11 MiB of `byte` (3 parts of 5 MiB) under `mode`, all parts handed over.
async fn three_parts(store: &VendedStore, mode: WriteMode, byte: u8) -> ObjectWriter {
    let options = WriterOptions {
        part_size: 5 * MIB,
        mode,
        ..Default::default()
    };
    let mut w = store.writer("obj", options).unwrap();
    w.write(&vec![byte; 11 * MIB]).await.unwrap();
    assert!(matches!(w.state, State::Multipart(_)), "a multipart upload");
    w
}

/// Runs the rest of `finish` for `w` once its check passed: completes its upload under its
/// mode and, when that fails, aborts the upload as `finish` does.
async fn complete_after_check(w: &mut ObjectWriter) -> Result<WriteResult> {
    let State::Multipart(mut upload) = std::mem::replace(&mut w.state, State::Closed(CLOSED))
    else {
        panic!("not a multipart upload");
    };
    match upload.finish(&w.options.mode).await {
        Ok(done) => Ok(done.into()),
        Err(e) => Err(abandon::after_failure(*upload, e).await),
    }
}

/// The statuses of the completions (`POST` on the object) the endpoint answered.
fn completions(s3: &LocalS3) -> Vec<u16> {
    s3.request_log()
        .into_iter()
        .filter(|r| r.method == "POST" && r.key.as_deref() == Some("t/obj"))
        .map(|r| r.status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_only_completion_after_the_object_appeared_is_refused_by_the_store() {
    let (s3, store) = open().await;
    let mut a = three_parts(&store, WriteMode::Create, b'a').await;
    let mut b = three_parts(&store, WriteMode::Create, b'b').await;
    // B's check passes: nothing there yet.
    check_mode(&*b.store, &b.path, &b.options.mode)
        .await
        .unwrap();
    a.finish().await.unwrap();
    let e = complete_after_check(&mut b).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    let body = store.get("obj").await.unwrap();
    assert_eq!(body, Bytes::from(vec![b'a'; 11 * MIB]), "A's bytes stay");
    assert_eq!(
        s3.incomplete_uploads(None),
        vec![],
        "B's upload was aborted"
    );
    // `POST ?uploads` (200) twice, A's completion (200), then B's refused one (412).
    assert_eq!(completions(&s3), vec![200, 200, 200, 412]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_if_match_completion_after_the_object_changed_is_refused_by_the_store() {
    let (s3, store) = open().await;
    let first = store
        .put_opts("obj", Bytes::from_static(b"v1"), WriteMode::Overwrite)
        .await
        .unwrap();
    let e_tag = first.e_tag.unwrap();
    let mut b = three_parts(&store, WriteMode::IfMatch(e_tag), b'b').await;
    check_mode(&*b.store, &b.path, &b.options.mode)
        .await
        .unwrap();
    store
        .put_opts("obj", Bytes::from_static(b"v2"), WriteMode::Overwrite)
        .await
        .unwrap();
    let e = complete_after_check(&mut b).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Precondition, "{e}");
    let body = store.get("obj").await.unwrap();
    assert_eq!(body, Bytes::from_static(b"v2"));
    assert_eq!(s3.incomplete_uploads(None), vec![]);
    assert_eq!(completions(&s3), vec![200, 412]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overwrite_completion_in_the_same_window_replaces_the_object() {
    // The control: without a condition, the same sequence completes.
    let (s3, store) = open().await;
    let mut a = three_parts(&store, WriteMode::Create, b'a').await;
    let mut b = three_parts(&store, WriteMode::Overwrite, b'b').await;
    a.finish().await.unwrap();
    complete_after_check(&mut b).await.unwrap();
    let body = store.get("obj").await.unwrap();
    assert_eq!(body, Bytes::from(vec![b'b'; 11 * MIB]));
    assert_eq!(completions(&s3), vec![200, 200, 200, 200]);
}

#[path = "../../../tests/it/emulators/mod.rs"]
mod emulators;

/// A store in a fresh container of a fresh Azurite, signed with an account SAS (no header is
/// signed: the condition can be added).
async fn open_azurite(test: &str) -> Option<(emulators::Emulator, VendedStore)> {
    let azurite = emulators::start_azurite(test)?;
    emulators::create_container(&azurite, BUCKET).await;
    let sas = emulators::account_sas(emulators::now_millis() + 600_000, false);
    let options = [
        ("azure_storage_use_emulator", "true"),
        ("azure_storage_endpoint", azurite.url.as_str()),
        ("azure_storage_account_name", emulators::AZURITE_ACCOUNT),
        ("azure_storage_sas_token", sas.as_str()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let store = ObjectStoreRegistry::new(RegistryConfig::default())
        .open(
            &format!("az://{BUCKET}/t"),
            options,
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    Some((azurite, store))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_a_create_only_block_list_after_the_blob_appeared_is_refused() {
    let Some((_azurite, store)) = open_azurite("azure_create_only_window").await else {
        return;
    };
    let mut a = three_parts(&store, WriteMode::Create, b'a').await;
    let mut b = three_parts(&store, WriteMode::Create, b'b').await;
    check_mode(&*b.store, &b.path, &b.options.mode)
        .await
        .unwrap();
    a.finish().await.unwrap();
    let e = complete_after_check(&mut b).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(
        store.get("obj").await.unwrap(),
        Bytes::from(vec![b'a'; 11 * MIB])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_an_if_match_block_list_after_the_blob_changed_is_refused() {
    let Some((_azurite, store)) = open_azurite("azure_if_match_window").await else {
        return;
    };
    let first = store
        .put_opts("obj", Bytes::from_static(b"v1"), WriteMode::Overwrite)
        .await
        .unwrap();
    let mut b = three_parts(&store, WriteMode::IfMatch(first.e_tag.unwrap()), b'b').await;
    check_mode(&*b.store, &b.path, &b.options.mode)
        .await
        .unwrap();
    store
        .put_opts("obj", Bytes::from_static(b"v2"), WriteMode::Overwrite)
        .await
        .unwrap();
    let e = complete_after_check(&mut b).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Precondition, "{e}");
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from_static(b"v2"));
}
