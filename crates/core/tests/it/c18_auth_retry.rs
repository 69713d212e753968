//! C18: every operation recovers from a credential the endpoint rejects, by one mechanism
//! (`AuthRetryStore`): (a) the key was revoked (403 `InvalidAccessKeyId`), (b) the key expired
//! at the endpoint while the options carried no `expires_at_millis` (400 `ExpiredToken`; the
//! answer to HEAD has no body). Exactly one refetch, one rejected request, one retry; the call
//! succeeds. Without a provider, the same cause gives the same error kind on every operation.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use futures::TryStreamExt;
use local_s3::LocalS3;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use vended_storage::{ErrorKind, RefreshConfig, StorageOptions, StorageOptionsProvider};

#[derive(Debug, Clone, Copy)]
enum Op {
    Head,
    Get,
    GetRange,
    GetRanges,
    Put,
    PutMultipart,
    List,
    ListWithDelimiter,
    Delete,
    Copy,
    CopyIfNotExists,
    Rename,
}

const OPS: [Op; 12] = [
    Op::Head,
    Op::Get,
    Op::GetRange,
    Op::GetRanges,
    Op::Put,
    Op::PutMultipart,
    Op::List,
    Op::ListWithDelimiter,
    Op::Delete,
    Op::Copy,
    Op::CopyIfNotExists,
    Op::Rename,
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cause {
    Revoked,
    Expired,
}

const BODY: &[u8] = b"0123456789";

/// Writes `{dir}/obj` with the root key.
async fn seed(s3: &Arc<LocalS3>, dir: &str) {
    let root = registry()
        .open(
            &format!("s3://{BUCKET}/{dir}"),
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    root.put("obj", Bytes::from_static(BODY)).await.unwrap();
}

/// Runs `op` on `store` under `dir` (which holds `obj`).
async fn run(op: Op, store: &Arc<dyn ObjectStore>, dir: &str) -> vended_storage::Result<()> {
    let obj = Path::from(format!("{dir}/obj"));
    let other = Path::from(format!("{dir}/other"));
    let prefix = Path::from(dir);
    match op {
        Op::Head => assert_eq!(store.head(&obj).await?.size, BODY.len() as u64),
        Op::Get => assert_eq!(store.get(&obj).await?.bytes().await?, BODY),
        Op::GetRange => assert_eq!(store.get_range(&obj, 2..5).await?, &BODY[2..5]),
        Op::GetRanges => {
            let parts = store.get_ranges(&obj, &[0..1, 8..10]).await?;
            assert_eq!(
                parts,
                vec![Bytes::from_static(b"0"), Bytes::from_static(b"89")]
            );
        }
        Op::Put => {
            store.put(&other, PutPayload::from_static(b"new")).await?;
        }
        Op::PutMultipart => {
            let mut upload = store.put_multipart(&other).await?;
            upload.put_part(PutPayload::from_static(b"part")).await?;
            upload.complete().await?;
        }
        Op::List => {
            let all: Vec<_> = store.list(Some(&prefix)).try_collect().await?;
            assert_eq!(all.len(), 1);
        }
        Op::ListWithDelimiter => {
            assert_eq!(
                store
                    .list_with_delimiter(Some(&prefix))
                    .await?
                    .objects
                    .len(),
                1
            );
        }
        Op::Delete => store.delete(&obj).await?,
        Op::Copy => store.copy(&obj, &other).await?,
        Op::CopyIfNotExists => store.copy_if_not_exists(&obj, &other).await?,
        Op::Rename => store.rename(&obj, &other).await?,
    }
    Ok(())
}

/// Options whose key the endpoint rejects for `cause`, without `expires_at_millis`, and that
/// key's id.
fn rejected_options(s3: &LocalS3, cause: Cause, scope: Option<&str>) -> (StorageOptions, String) {
    let ttl = match cause {
        Cause::Revoked => Duration::from_secs(3600),
        Cause::Expired => Duration::ZERO, // expired at the endpoint from the start
    };
    let creds = s3.issue_credentials(ttl, scope);
    if cause == Cause::Revoked {
        s3.revoke(&creds.access_key_id);
    }
    let mut options = s3.storage_options(&creds);
    options.remove("expires_at_millis");
    (options, creds.access_key_id)
}

fn extra_options(op: Op, options: &mut StorageOptions) {
    if matches!(op, Op::CopyIfNotExists) {
        options.insert("aws_copy_if_not_exists".into(), "multipart".into());
    }
}

async fn recovers(op: Op, cause: Cause) {
    let s3 = endpoint().await;
    let dir = format!("c18-{op:?}-{cause:?}").to_lowercase();
    seed(&s3, &dir).await;
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let (mut initial, gen1) = rejected_options(&s3, cause, None);
    extra_options(op, &mut initial);
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/{dir}"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let result = run(op, &store.object_store(), &dir).await;
    assert!(result.is_ok(), "{op:?} after {cause:?}: {:?}", result.err());
    assert_eq!(provider.calls(), 1, "{op:?} {cause:?}: exactly one refetch");
    let stats = s3.key_stats(&gen1);
    // A bodiless 403 HEAD is told apart from a denied path by one probe GET (case C29): a
    // revoked key costs that one more rejected request; nothing else changes.
    let rejected = if matches!((op, cause), (Op::Head, Cause::Revoked)) {
        2
    } else {
        1
    };
    assert_eq!(
        (stats.rejected, stats.accepted),
        (rejected, 0),
        "{op:?} {cause:?}: {rejected} rejected request(s) with the old key: {stats:?}"
    );
    match cause {
        Cause::Revoked => assert_eq!(stats.invalid_key, rejected),
        Cause::Expired => assert_eq!(stats.expired, 1),
    }
    let gen2 = provider.vended_keys()[0].clone();
    let stats2 = s3.key_stats(&gen2);
    assert!(
        stats2.accepted >= 1 && stats2.rejected == 0,
        "{op:?} {cause:?}: the retry used the fresh key: {stats2:?}"
    );
    assert_eq!(store.refresh_stats().unwrap().failures, 0);
}

macro_rules! c18_case {
    ($name:ident, $op:expr, $cause:expr) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            recovers($op, $cause).await;
        }
    };
}

c18_case!(c18_head_after_revocation, Op::Head, Cause::Revoked);
c18_case!(
    c18_head_after_expiry_without_expires_at,
    Op::Head,
    Cause::Expired
);
c18_case!(c18_get_after_revocation, Op::Get, Cause::Revoked);
c18_case!(
    c18_get_after_expiry_without_expires_at,
    Op::Get,
    Cause::Expired
);
c18_case!(c18_get_range_after_revocation, Op::GetRange, Cause::Revoked);
c18_case!(
    c18_get_range_after_expiry_without_expires_at,
    Op::GetRange,
    Cause::Expired
);
c18_case!(
    c18_get_ranges_after_revocation,
    Op::GetRanges,
    Cause::Revoked
);
c18_case!(
    c18_get_ranges_after_expiry_without_expires_at,
    Op::GetRanges,
    Cause::Expired
);
c18_case!(c18_put_after_revocation, Op::Put, Cause::Revoked);
c18_case!(
    c18_put_after_expiry_without_expires_at,
    Op::Put,
    Cause::Expired
);
c18_case!(
    c18_put_multipart_after_revocation,
    Op::PutMultipart,
    Cause::Revoked
);
c18_case!(
    c18_put_multipart_after_expiry_without_expires_at,
    Op::PutMultipart,
    Cause::Expired
);
c18_case!(c18_list_after_revocation, Op::List, Cause::Revoked);
c18_case!(
    c18_list_after_expiry_without_expires_at,
    Op::List,
    Cause::Expired
);
c18_case!(
    c18_list_with_delimiter_after_revocation,
    Op::ListWithDelimiter,
    Cause::Revoked
);
c18_case!(
    c18_list_with_delimiter_after_expiry_without_expires_at,
    Op::ListWithDelimiter,
    Cause::Expired
);
c18_case!(c18_delete_after_revocation, Op::Delete, Cause::Revoked);
c18_case!(
    c18_delete_after_expiry_without_expires_at,
    Op::Delete,
    Cause::Expired
);
c18_case!(c18_copy_after_revocation, Op::Copy, Cause::Revoked);
c18_case!(
    c18_copy_after_expiry_without_expires_at,
    Op::Copy,
    Cause::Expired
);
c18_case!(
    c18_copy_if_not_exists_after_revocation,
    Op::CopyIfNotExists,
    Cause::Revoked
);
c18_case!(
    c18_copy_if_not_exists_after_expiry_without_expires_at,
    Op::CopyIfNotExists,
    Cause::Expired
);
c18_case!(c18_rename_after_revocation, Op::Rename, Cause::Revoked);
c18_case!(
    c18_rename_after_expiry_without_expires_at,
    Op::Rename,
    Cause::Expired
);

/// Without a provider nothing can be refetched: every operation fails, and the same cause gives
/// the same kind (Credentials) and a one-line message naming the code (or, for HEAD, the
/// status) on every operation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c18_same_cause_gives_the_same_kind_on_every_operation() {
    let s3 = endpoint().await;
    for cause in [Cause::Revoked, Cause::Expired] {
        for op in OPS {
            let dir = format!("c18-static-{op:?}-{cause:?}").to_lowercase();
            seed(&s3, &dir).await;
            let (mut options, _) = rejected_options(&s3, cause, None);
            extra_options(op, &mut options);
            let store = registry()
                .open(
                    &format!("s3://{BUCKET}/{dir}"),
                    options,
                    None,
                    RefreshConfig::default(),
                )
                .unwrap();
            let e = run(op, &store.object_store(), &dir).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Credentials, "{op:?} {cause:?}: {e}");
            assert!(!e.is_retryable(), "{op:?} {cause:?}: {e}");
            let text = e.to_string();
            eprintln!("{op:?} {cause:?}: {text}");
            let expected = match (cause, op) {
                // The probe GET of a bodiless 403 HEAD (C29) gives the code.
                (Cause::Revoked, Op::Head) => "403 InvalidAccessKeyId: ",
                (Cause::Expired, Op::Head) => "400 Bad Request",
                (Cause::Revoked, _) => "403 InvalidAccessKeyId: ",
                (Cause::Expired, _) => "400 ExpiredToken: The provided token has expired.",
            };
            assert!(text.contains(expected), "{op:?} {cause:?}: {text}");
            assert!(text.contains(&format!("s3://{BUCKET}/{dir}")), "{text}");
            assert!(
                !text.contains('<') && !text.contains("RequestId") && !text.contains('\n'),
                "{op:?} {cause:?}: one line without XML: {text}"
            );
        }
    }
}

/// A store never stays stuck: after the rejected key was replaced, every later call of every
/// operation works without another refetch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c18_store_is_not_stuck_after_a_rejection() {
    let s3 = endpoint().await;
    let dir = "c18-not-stuck";
    seed(&s3, dir).await;
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let (initial, _) = rejected_options(&s3, Cause::Revoked, None);
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/{dir}"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    let os = store.object_store();
    for _ in 0..3 {
        run(Op::Head, &os, dir).await.unwrap();
        run(Op::List, &os, dir).await.unwrap();
        run(Op::Get, &os, dir).await.unwrap();
    }
    assert_eq!(provider.calls(), 1);
}
