//! Credential enforcement seen through a real S3 client (object_store).

use crate::common;

use std::time::Duration;

use common::{error_text, root_store, start, store_for, temp_store, BUCKET};
use futures::TryStreamExt;
use local_s3::{KeyStats, REASON_BAD_TOKEN, REASON_DENIED, REASON_EXPIRED, REASON_INVALID_KEY};
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{MultipartUpload, ObjectStore, ObjectStoreExt, PutPayload};

async fn put(store: &dyn ObjectStore, key: &str, data: &'static [u8]) -> object_store::Result<()> {
    store
        .put(&Path::from(key), PutPayload::from_static(data))
        .await
        .map(|_| ())
}

async fn get(store: &dyn ObjectStore, key: &str) -> object_store::Result<Vec<u8>> {
    Ok(store.get(&Path::from(key)).await?.bytes().await?.to_vec())
}

#[tokio::test]
async fn root_and_temporary_keys_read_and_write() {
    let s3 = start().await;
    let root = root_store(&s3, BUCKET);
    put(&root, "a/root.txt", b"from root").await.unwrap();
    assert_eq!(get(&root, "a/root.txt").await.unwrap(), b"from root");

    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let temp = store_for(&s3, BUCKET, &creds);
    put(&temp, "a/temp.txt", b"from temp").await.unwrap();
    assert_eq!(get(&temp, "a/temp.txt").await.unwrap(), b"from temp");
    assert_eq!(get(&temp, "a/root.txt").await.unwrap(), b"from root");

    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            accepted: 3,
            ..KeyStats::default()
        }
    );
    assert_eq!(
        s3.key_stats(s3.root_access_key()),
        KeyStats {
            accepted: 2,
            ..KeyStats::default()
        }
    );
    assert_eq!(s3.key_stats("never-seen"), KeyStats::default());
    let log = s3.request_log();
    assert_eq!(log.len(), 5);
    assert_eq!(log[2].access_key_id, creds.access_key_id);
    assert_eq!(log[2].method, "PUT");
    assert_eq!(log[2].bucket.as_deref(), Some(BUCKET));
    assert_eq!(log[2].key.as_deref(), Some("a/temp.txt"));
    assert!(log[2].accepted);
    assert_eq!(log[2].status, 200);

    // Debug never shows the secret or the token.
    let debug = format!("{creds:?}");
    assert!(debug.contains(&creds.access_key_id));
    assert!(!debug.contains(&creds.secret_access_key));
    assert!(!debug.contains(&creds.session_token));
    s3.shutdown().await;
}

#[tokio::test]
async fn missing_or_wrong_session_token_is_rejected() {
    let s3 = start().await;
    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let other = s3.issue_credentials(Duration::from_secs(60), None);

    let no_token = temp_store(&s3, BUCKET, &creds, None);
    let err = put(&no_token, "x", b"1").await.unwrap_err();
    assert!(
        error_text(&err).contains("InvalidToken"),
        "{}",
        error_text(&err)
    );

    let wrong_token = temp_store(&s3, BUCKET, &creds, Some(&other.session_token));
    let err = get(&wrong_token, "x").await.unwrap_err();
    assert!(
        error_text(&err).contains("InvalidToken"),
        "{}",
        error_text(&err)
    );

    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            rejected: 2,
            bad_token: 2,
            ..KeyStats::default()
        }
    );
    let last = s3.request_log().pop().unwrap();
    assert_eq!(
        (last.accepted, last.reason.as_deref(), last.status),
        (false, Some(REASON_BAD_TOKEN), 403)
    );
}

#[tokio::test]
async fn expired_credentials_get_expired_token() {
    let s3 = start().await;
    let creds = s3.issue_credentials(Duration::from_secs(1), None);
    let store = store_for(&s3, BUCKET, &creds);
    put(&store, "k", b"v").await.unwrap();

    let wait = creds.expires_at_millis - local_now_millis() + 100;
    tokio::time::sleep(Duration::from_millis(wait.max(0) as u64)).await;
    let err = get(&store, "k").await.unwrap_err();
    let text = error_text(&err);
    assert!(text.contains("ExpiredToken"), "{text}");
    assert!(text.contains("The provided token has expired."), "{text}");

    // Credentials issued already expired.
    let dead = s3.issue_credentials(Duration::ZERO, None);
    let err = get(&store_for(&s3, BUCKET, &dead), "k").await.unwrap_err();
    assert!(error_text(&err).contains("ExpiredToken"));

    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            accepted: 1,
            rejected: 1,
            expired: 1,
            ..KeyStats::default()
        }
    );
    let last = s3.request_log().pop().unwrap();
    assert_eq!(
        (last.reason.as_deref(), last.status),
        (Some(REASON_EXPIRED), 400)
    );
}

fn local_now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test]
async fn revoked_and_unknown_keys_are_invalid() {
    let s3 = start().await;
    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let store = store_for(&s3, BUCKET, &creds);
    put(&store, "k", b"v").await.unwrap();
    s3.revoke(&creds.access_key_id);
    let err = get(&store, "k").await.unwrap_err();
    assert!(
        error_text(&err).contains("InvalidAccessKeyId"),
        "{}",
        error_text(&err)
    );
    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            accepted: 1,
            rejected: 1,
            invalid_key: 1,
            ..KeyStats::default()
        }
    );

    let mut unknown = creds.clone();
    unknown.access_key_id = "ASIAUNKNOWNKEY000000".to_owned();
    let err = get(&store_for(&s3, BUCKET, &unknown), "k")
        .await
        .unwrap_err();
    assert!(error_text(&err).contains("InvalidAccessKeyId"));
    assert_eq!(s3.key_stats("ASIAUNKNOWNKEY000000").invalid_key, 1);
    let last = s3.request_log().pop().unwrap();
    assert_eq!(
        (last.reason.as_deref(), last.status),
        (Some(REASON_INVALID_KEY), 403)
    );
}

#[tokio::test]
async fn wrong_secret_and_unsigned_requests_are_rejected() {
    let s3 = start().await;
    let mut creds = s3.issue_credentials(Duration::from_secs(60), None);
    creds.secret_access_key = "not-the-secret".to_owned();
    let err = get(&store_for(&s3, BUCKET, &creds), "k").await.unwrap_err();
    assert!(
        error_text(&err).contains("SignatureDoesNotMatch"),
        "{}",
        error_text(&err)
    );
    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            rejected: 1,
            ..KeyStats::default()
        }
    );
    assert_eq!(
        s3.request_log()[0].reason.as_deref(),
        Some("SignatureDoesNotMatch")
    );

    let (status, body) = common::http(
        reqwest::Method::GET,
        &format!("{}/{BUCKET}/k", s3.endpoint()),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("AccessDenied"));
    assert_eq!(
        s3.key_stats(""),
        KeyStats {
            rejected: 1,
            denied: 1,
            ..KeyStats::default()
        }
    );
}

#[tokio::test]
async fn scope_limits_objects_and_lists() {
    let s3 = start().await;
    s3.create_bucket("other").unwrap();
    let root = root_store(&s3, BUCKET);
    put(&root, "tenant-b/secret.txt", b"b").await.unwrap();

    let creds = s3.issue_credentials(Duration::from_secs(60), Some("data/tenant-a/"));
    let store = store_for(&s3, BUCKET, &creds);
    put(&store, "tenant-a/x.txt", b"a").await.unwrap();
    assert_eq!(get(&store, "tenant-a/x.txt").await.unwrap(), b"a");
    let listed: Vec<_> = store
        .list(Some(&Path::from("tenant-a")))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    store
        .copy(&Path::from("tenant-a/x.txt"), &Path::from("tenant-a/y.txt"))
        .await
        .unwrap();
    // Multipart upload: create, upload part, complete.
    let mut upload = store
        .put_multipart(&Path::from("tenant-a/multi.bin"))
        .await
        .unwrap();
    upload
        .put_part(PutPayload::from(vec![7u8; 1024]))
        .await
        .unwrap();
    upload.complete().await.unwrap();
    assert_eq!(
        get(&root, "tenant-a/multi.bin").await.unwrap(),
        vec![7u8; 1024]
    );
    store.delete(&Path::from("tenant-a/y.txt")).await.unwrap();
    let accepted = s3.key_stats(&creds.access_key_id).accepted;

    let denied = [
        error_text(&get(&store, "tenant-b/secret.txt").await.unwrap_err()),
        error_text(&put(&store, "tenant-b/evil.txt", b"x").await.unwrap_err()),
        error_text(
            &store
                .list(Some(&Path::from("tenant-b")))
                .try_collect::<Vec<_>>()
                .await
                .unwrap_err(),
        ),
        error_text(&store.list(None).try_collect::<Vec<_>>().await.unwrap_err()),
        error_text(
            &store
                .copy(
                    &Path::from("tenant-b/secret.txt"),
                    &Path::from("tenant-a/stolen.txt"),
                )
                .await
                .unwrap_err(),
        ),
        error_text(
            &get(&store_for(&s3, "other", &creds), "tenant-a/x.txt")
                .await
                .unwrap_err(),
        ),
    ];
    for text in &denied {
        assert!(text.contains("AccessDenied"), "{text}");
    }
    let stats = s3.key_stats(&creds.access_key_id);
    assert_eq!(
        stats,
        KeyStats {
            accepted,
            rejected: 6,
            denied: 6,
            ..KeyStats::default()
        }
    );
    let log = s3.request_log();
    let last = log.last().unwrap();
    assert_eq!(
        (last.reason.as_deref(), last.bucket.as_deref()),
        (Some(REASON_DENIED), Some("other"))
    );
    // The out-of-scope object is untouched.
    assert!(get(&root, "tenant-b/evil.txt").await.is_err());
}

#[tokio::test]
async fn presigned_urls_carry_the_token() {
    let s3 = start().await;
    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let store = store_for(&s3, BUCKET, &creds);
    put(&store, "p.txt", b"presigned").await.unwrap();
    let url = store
        .signed_url(
            object_store::signer::Method::GET,
            &Path::from("p.txt"),
            Duration::from_secs(60),
        )
        .await
        .unwrap();
    assert!(url.as_str().contains("X-Amz-Security-Token"), "{url}");
    let (status, body) = common::http(reqwest::Method::GET, url.as_str()).await;
    assert_eq!((status, body.as_str()), (200, "presigned"));
    assert_eq!(s3.key_stats(&creds.access_key_id).accepted, 2);

    s3.revoke(&creds.access_key_id);
    let (status, body) = common::http(reqwest::Method::GET, url.as_str()).await;
    assert_eq!(status, 403);
    assert!(body.contains("InvalidAccessKeyId"));
}
