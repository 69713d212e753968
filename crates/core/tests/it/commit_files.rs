//! Commit files (`VendedStore::put_commit`) against the local S3 endpoint: a PUT whose answer
//! is lost after it was stored is retried by `object_store` and recognised as ours (once, not
//! a conflict); another writer's commit at the path, even byte-identical, is `AlreadyExists`;
//! an endpoint that ignores `If-None-Match` is detected by one probe per store and every commit
//! is refused naming the endpoint. The plain create-only PUT under the same lost answer reports
//! the conflict the commit path avoids.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use local_s3::{LocalS3, RequestRecord};
use vended_storage::io::CONDITION_PROBE_PREFIX;
use vended_storage::{
    Error, ErrorKind, RefreshConfig, StorageOptionsProvider, VendedStore, WriteMode,
};

async fn open(bucket: &str, prefix: &str) -> (Arc<LocalS3>, VendedStore) {
    let s3 = endpoint().await;
    s3.create_bucket(bucket).unwrap();
    let provider = Arc::new(EndpointProvider::new(s3.clone(), Duration::from_secs(300)));
    let store = registry()
        .open(
            &format!("s3://{bucket}/{prefix}"),
            provider.vend(),
            Some(provider as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .unwrap();
    (s3, store)
}

fn puts_of(log: &[RequestRecord], bucket: &str, key: &str) -> Vec<u16> {
    log.iter()
        .filter(|r| {
            r.method == "PUT"
                && r.bucket.as_deref() == Some(bucket)
                && r.key.as_deref() == Some(key)
        })
        .map(|r| r.status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_commit_whose_first_attempt_landed_is_recognised_as_ours() {
    let (s3, store) = open(BUCKET, "commit-lost").await;
    let key = "commit-lost/_delta_log/00000000000000000000.json";
    let body = Bytes::from_static(b"{\"commitInfo\":{}}\n");
    let (lost_before, _) = s3.lost_answers();
    s3.lose_next_put_answers(BUCKET, key, 1);

    let r = store
        .put_commit("_delta_log/00000000000000000000.json", body.clone())
        .await
        .unwrap();

    assert!(r.recognised_retry, "{r:?}");
    assert_eq!(s3.lost_answers(), (lost_before + 1, 0));
    assert_eq!(
        puts_of(&s3.request_log(), BUCKET, key),
        vec![500, 412],
        "stored and answered 500, the retry refused by the condition"
    );
    assert_eq!(
        store
            .get("_delta_log/00000000000000000000.json")
            .await
            .unwrap(),
        body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_create_only_put_reports_its_own_landed_retry_as_a_conflict() {
    let (s3, store) = open(BUCKET, "plain-lost").await;
    s3.lose_next_put_answers(BUCKET, "plain-lost/v0.json", 1);
    let e = store
        .put_opts("v0.json", Bytes::from_static(b"mine"), WriteMode::Create)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_writers_commit_is_already_exists_even_with_the_same_bytes() {
    let (_s3, store) = open(BUCKET, "commit-theirs").await;
    let path = "_delta_log/00000000000000000001.json";
    let first = store
        .put_commit(path, Bytes::from_static(b"same"))
        .await
        .unwrap();
    assert!(!first.recognised_retry);

    let same = store
        .put_commit(path, Bytes::from_static(b"same"))
        .await
        .unwrap_err();
    assert_eq!(same.kind(), ErrorKind::AlreadyExists, "{same}");
    let other = store
        .put_commit(path, Bytes::from_static(b"other"))
        .await
        .unwrap_err();
    assert_eq!(other.kind(), ErrorKind::AlreadyExists, "{other}");
    assert_eq!(store.get(path).await.unwrap(), Bytes::from_static(b"same"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_ignoring_if_none_match_is_refused_after_one_probe() {
    let bucket = "commit-ignoring";
    let (s3, store) = open(bucket, "t").await;
    s3.ignore_conditions(bucket, true);

    for version in 0..3 {
        let path = format!("_delta_log/{version:020}.json");
        let e = store
            .put_commit(&path, Bytes::from_static(b"x"))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::ConditionIgnored { .. }), "{e:?}");
        assert_eq!(e.kind(), ErrorKind::Io);
        let text = e.to_string();
        assert!(text.contains(&s3.endpoint()), "names the endpoint: {text}");
        assert!(
            text.contains("S3DynamoDBLogStore"),
            "names an alternative: {text}"
        );
        assert!(text.contains(&format!("s3://{bucket}/t/{path}")), "{text}");
    }
    let log = s3.request_log();
    let probes: Vec<_> = log
        .iter()
        .filter(|r| r.bucket.as_deref() == Some(bucket))
        .filter(|r| {
            r.key
                .as_deref()
                .is_some_and(|k| k.contains(CONDITION_PROBE_PREFIX))
        })
        .map(|r| (r.method.as_str(), r.status))
        .collect();
    assert_eq!(
        probes,
        vec![("PUT", 200), ("PUT", 200), ("DELETE", 204)],
        "one probe for the store, however many commits"
    );
    assert!(
        !log.iter().any(|r| r.bucket.as_deref() == Some(bucket)
            && r.key.as_deref().is_some_and(|k| k.ends_with(".json"))),
        "no commit was written"
    );
    s3.ignore_conditions(bucket, false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_honouring_the_condition_is_probed_once_and_leaves_no_probe() {
    let bucket = "commit-honouring";
    let (s3, store) = open(bucket, "t").await;
    for version in 0..3 {
        let path = format!("_delta_log/{version:020}.json");
        store
            .put_commit(&path, Bytes::from_static(b"x"))
            .await
            .unwrap();
    }
    let log = s3.request_log();
    let probes: Vec<_> = log
        .iter()
        .filter(|r| r.bucket.as_deref() == Some(bucket))
        .filter(|r| {
            r.key
                .as_deref()
                .is_some_and(|k| k.contains(CONDITION_PROBE_PREFIX))
        })
        .map(|r| (r.method.as_str(), r.status))
        .collect();
    assert_eq!(probes, vec![("PUT", 200), ("PUT", 412), ("DELETE", 204)]);
    let listed: Vec<String> = store
        .list(Some("_delta_log"))
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.path)
        .collect();
    assert_eq!(listed.len(), 3, "{listed:?}");
}
