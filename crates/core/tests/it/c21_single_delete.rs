//! C21: a single-object delete is one `DELETE` request (works under prefix-scoped credentials
//! on an endpoint that authorizes bulk `POST ?delete` at bucket level, as moto does), retried
//! once after an auth failure; bulk deletes only for many keys.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use futures::{StreamExt, TryStreamExt};
use local_s3::RequestRecord;
use object_store::path::Path;
use vended_storage::{ErrorKind, RefreshConfig, StorageOptionsProvider};

fn requests_for(log: &[RequestRecord], from: usize) -> Vec<(String, Option<String>, bool)> {
    log[from..]
        .iter()
        .map(|r| (r.method.clone(), r.key.clone(), r.accepted))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c21_single_delete_is_one_delete_request_under_prefix_scoped_credentials() {
    let s3 = endpoint().await;
    s3.set_bulk_delete_bucket_level(true);
    let mut p = EndpointProvider::new(s3.clone(), Duration::from_secs(3600));
    p.scope = Some(format!("{BUCKET}/c21/"));
    p.with_expiry = false;
    let provider = Arc::new(p);
    let initial = provider.vend();
    let gen1 = provider.vended_keys()[0].clone();
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/c21"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    store.put("a", Bytes::from_static(b"a")).await.unwrap();
    store.put("b", Bytes::from_static(b"b")).await.unwrap();

    let before = s3.request_log().len();
    store.delete("a").await.unwrap();
    assert_eq!(
        requests_for(&s3.request_log(), before),
        vec![("DELETE".to_string(), Some("c21/a".to_string()), true)]
    );
    let e = store.head("a").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");

    // After a revocation: one rejected DELETE, one refetch, one accepted DELETE.
    s3.revoke(&gen1);
    let before = s3.request_log().len();
    store.delete("b").await.unwrap();
    let log = requests_for(&s3.request_log(), before);
    assert_eq!(
        log,
        vec![
            ("DELETE".to_string(), Some("c21/b".to_string()), false),
            ("DELETE".to_string(), Some("c21/b".to_string()), true),
        ]
    );
    assert_eq!(provider.calls(), 1);
    assert_eq!(s3.key_stats(&gen1).invalid_key, 1);

    // Control: the bulk request is what the endpoint refuses under these credentials.
    store.put("c", Bytes::from_static(b"c")).await.unwrap();
    store.put("d", Bytes::from_static(b"d")).await.unwrap();
    let os = store.object_store();
    let paths = vec![Path::from("c21/c"), Path::from("c21/d")];
    let results: Vec<_> = os
        .delete_stream(futures::stream::iter(paths.into_iter().map(Ok)).boxed())
        .collect()
        .await;
    assert!(results.iter().all(|r| r.is_err()), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c21_many_keys_use_one_bulk_request() {
    let s3 = endpoint().await;
    let store = registry()
        .open(
            &format!("s3://{BUCKET}/c21-bulk"),
            s3.root_storage_options(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    for name in ["x", "y", "z"] {
        store.put(name, Bytes::from_static(b"1")).await.unwrap();
    }
    let os = store.object_store();
    let before = s3.request_log().len();
    let paths = ["x", "y", "z"].map(|n| Ok(Path::from(format!("c21-bulk/{n}"))));
    let deleted: Vec<Path> = os
        .delete_stream(futures::stream::iter(paths).boxed())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(deleted.len(), 3);
    assert_eq!(
        requests_for(&s3.request_log(), before),
        vec![("POST".to_string(), None, true)]
    );
    assert!(store.list(None).await.unwrap().is_empty());
}
