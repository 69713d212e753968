//! Read-only keys and keys without LIST (issue 24): what each may do, through a real S3
//! client (object_store), raw signed calls, the admin API and STS.

use crate::common;

use std::time::Duration;

use common::{
    error_text, http, root_store, s3_call, start, store_for, sts_post, xml_field, BUCKET,
};
use futures::TryStreamExt;
use local_s3::{KeyStats, LocalS3, Permissions, TemporaryCredentials};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use reqwest::Method;
use serde_json::Value;

async fn put(store: &dyn ObjectStore, key: &str) -> object_store::Result<()> {
    store
        .put(&Path::from(key), PutPayload::from_static(b"data"))
        .await
        .map(|_| ())
}

async fn get(store: &dyn ObjectStore, key: &str) -> object_store::Result<Vec<u8>> {
    Ok(store.get(&Path::from(key)).await?.bytes().await?.to_vec())
}

async fn list(store: &dyn ObjectStore, prefix: &str) -> object_store::Result<Vec<String>> {
    let prefix = Path::from(prefix);
    let listed: Vec<_> = store.list(Some(&prefix)).try_collect().await?;
    Ok(listed.into_iter().map(|m| m.location.to_string()).collect())
}

/// The error of `r`, with its sources, which must be a 403 `AccessDenied` containing `says`.
fn assert_denied<T: std::fmt::Debug>(r: object_store::Result<T>, says: &str) {
    let text = error_text(&r.expect_err(says));
    assert!(
        text.contains("403") && text.contains("AccessDenied") && text.contains(says),
        "expected AccessDenied saying {says:?}: {text}"
    );
}

fn read_only(op: &str) -> String {
    format!("the credential is read-only: {op} is a write, which it does not allow")
}

/// `n` requests of `creds` denied and `accepted` accepted, nothing else refused.
fn assert_stats(s3: &LocalS3, creds: &TemporaryCredentials, accepted: u64, denied: u64) {
    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            accepted,
            rejected: denied,
            denied,
            ..KeyStats::default()
        }
    );
}

#[tokio::test]
async fn a_read_only_key_reads_heads_and_lists_but_never_writes() {
    let s3 = start().await;
    let root = root_store(&s3, BUCKET);
    put(&root, "t/a").await.unwrap();
    let creds = s3.issue_credentials_with(Duration::from_secs(60), None, Permissions::READ_ONLY);
    let store = store_for(&s3, BUCKET, &creds);

    assert_eq!(get(&store, "t/a").await.unwrap(), b"data");
    assert_eq!(store.head(&Path::from("t/a")).await.unwrap().size, 4);
    assert_eq!(list(&store, "t").await.unwrap(), vec!["t/a".to_string()]);

    assert_denied(put(&store, "t/b").await, &read_only("PutObject"));
    // object_store deletes through the bulk DeleteObjects.
    assert_denied(
        store.delete(&Path::from("t/a")).await,
        &read_only("DeleteObjects"),
    );
    assert_denied(
        store.copy(&Path::from("t/a"), &Path::from("t/c")).await,
        &read_only("CopyObject"),
    );
    assert_denied(
        store.put_multipart(&Path::from("t/m")).await.map(|_| ()),
        &read_only("CreateMultipartUpload"),
    );
    // A single DELETE and a part upload into the root's upload, as raw signed calls.
    let client = reqwest::Client::new();
    let signer = (
        creds.access_key_id.as_str(),
        creds.secret_access_key.as_str(),
        Some(creds.session_token.as_str()),
    );
    let path = format!("/{BUCKET}/t/a");
    let answer = s3_call(&client, &s3, "DELETE", &path, &[], &[], Vec::new(), signer).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert_eq!(
        xml_field(&answer.body, "Code").as_deref(),
        Some("AccessDenied")
    );
    assert_eq!(
        xml_field(&answer.body, "Message"),
        Some(read_only("DeleteObject"))
    );
    let upload = root.put_multipart(&Path::from("t/up")).await.unwrap();
    let uploads = s3.incomplete_uploads(Some(BUCKET));
    let upload_id = uploads[0].upload_id.clone();
    let answer = s3_call(
        &client,
        &s3,
        "PUT",
        &format!("/{BUCKET}/t/up"),
        &[("partNumber", "1"), ("uploadId", &upload_id)],
        &[],
        b"part".to_vec(),
        signer,
    )
    .await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert_eq!(
        xml_field(&answer.body, "Message"),
        Some(read_only("UploadPart"))
    );
    drop(upload);

    assert_eq!(get(&root, "t/a").await.unwrap(), b"data", "nothing deleted");
    assert!(
        root.head(&Path::from("t/b")).await.is_err(),
        "nothing written"
    );
    assert_stats(&s3, &creds, 3, 6);
    s3.shutdown().await;
}

#[tokio::test]
async fn a_key_without_list_reads_and_writes_but_never_lists() {
    let s3 = start().await;
    let creds = s3.issue_credentials_with(
        Duration::from_secs(60),
        Some("data/t/"),
        Permissions::READ_WRITE.without_list(),
    );
    let store = store_for(&s3, BUCKET, &creds);
    put(&store, "t/a").await.unwrap();
    assert_eq!(get(&store, "t/a").await.unwrap(), b"data");
    assert_denied(
        list(&store, "t").await,
        "the credential does not allow listing: ListObjectsV2 is refused",
    );
    let client = reqwest::Client::new();
    let signer = (
        creds.access_key_id.as_str(),
        creds.secret_access_key.as_str(),
        Some(creds.session_token.as_str()),
    );
    let answer = s3_call(
        &client,
        &s3,
        "GET",
        &format!("/{BUCKET}"),
        &[("uploads", ""), ("prefix", "t/")],
        &[],
        Vec::new(),
        signer,
    )
    .await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert_eq!(
        xml_field(&answer.body, "Message").as_deref(),
        Some("the credential does not allow listing: ListMultipartUploads is refused")
    );
    // Read-only and without LIST: reads only.
    let reader = s3.issue_credentials_with(
        Duration::from_secs(60),
        None,
        Permissions::READ_ONLY.without_list(),
    );
    let reader_store = store_for(&s3, BUCKET, &reader);
    assert_eq!(get(&reader_store, "t/a").await.unwrap(), b"data");
    assert_denied(list(&reader_store, "t").await, "does not allow listing");
    assert_denied(put(&reader_store, "t/b").await, &read_only("PutObject"));
    assert_stats(&s3, &creds, 2, 2);
    assert_stats(&s3, &reader, 1, 2);
    s3.shutdown().await;
}

async fn admin_post(s3: &LocalS3, query: &str) -> (u16, Value) {
    let url = format!("{}/_admin/credentials?{query}", s3.endpoint());
    let (status, body) = http(Method::POST, &url).await;
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn creds_of(json: &Value) -> TemporaryCredentials {
    TemporaryCredentials {
        access_key_id: json["access_key_id"].as_str().unwrap().into(),
        secret_access_key: json["secret_access_key"].as_str().unwrap().into(),
        session_token: json["session_token"].as_str().unwrap().into(),
        expires_at_millis: json["expires_at_millis"].as_i64().unwrap(),
    }
}

#[tokio::test]
async fn the_admin_api_mints_read_only_and_no_list_keys_and_names_bad_parameters() {
    let s3 = start().await;
    let (status, json) = admin_post(&s3, "ttl_ms=60000&scope=data/t/&access=read&list=false").await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(
        (json["access"].as_str(), json["list"].as_bool()),
        (Some("read"), Some(false))
    );
    let store = store_for(&s3, BUCKET, &creds_of(&json));
    assert_denied(put(&store, "t/a").await, &read_only("PutObject"));
    assert_denied(list(&store, "t").await, "does not allow listing");

    let (status, json) = admin_post(&s3, "ttl_ms=60000").await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(
        (json["access"].as_str(), json["list"].as_bool()),
        (Some("read-write"), Some(true))
    );

    for (query, message) in [
        (
            "access=write",
            "access must be read, read-only or read-write, got \"write\"",
        ),
        (
            "access=",
            "access must be read, read-only or read-write, got \"\"",
        ),
        ("list=no", "list must be true or false, got \"no\""),
        (
            "access=read&list=0",
            "list must be true or false, got \"0\"",
        ),
    ] {
        let (status, json) = admin_post(&s3, query).await;
        assert_eq!(
            (status, json["error"].as_str()),
            (400, Some(message)),
            "{query}"
        );
    }
    s3.shutdown().await;
}

#[tokio::test]
async fn sts_assume_role_takes_access_and_list() {
    let s3 = start().await;
    let form = "Action=AssumeRole&Version=2011-06-15&DurationSeconds=60";
    let (status, xml) = sts_post(
        &s3,
        &format!("{form}&Scope=data%2Ft%2F&Access=read&List=false"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{xml}");
    let creds = TemporaryCredentials {
        access_key_id: xml_field(&xml, "AccessKeyId").unwrap(),
        secret_access_key: xml_field(&xml, "SecretAccessKey").unwrap(),
        session_token: xml_field(&xml, "SessionToken").unwrap(),
        expires_at_millis: 0,
    };
    let root = root_store(&s3, BUCKET);
    put(&root, "t/a").await.unwrap();
    let store = store_for(&s3, BUCKET, &creds);
    assert_eq!(get(&store, "t/a").await.unwrap(), b"data");
    assert_denied(put(&store, "t/b").await, &read_only("PutObject"));
    assert_denied(list(&store, "t").await, "does not allow listing");

    for (param, message) in [
        (
            "Access=none",
            "Access must be read, read-only or read-write, got &quot;none&quot;",
        ),
        (
            "List=maybe",
            "List must be true or false, got &quot;maybe&quot;",
        ),
    ] {
        let (status, xml) = sts_post(&s3, &format!("{form}&{param}"), None).await;
        assert_eq!(status, 400, "{xml}");
        assert_eq!(xml_field(&xml, "Code").as_deref(), Some("ValidationError"));
        assert_eq!(
            xml_field(&xml, "Message").as_deref(),
            Some(message),
            "{xml}"
        );
    }
    s3.shutdown().await;
}
