use std::collections::HashMap;

use object_store::memory::InMemory;
use object_store::ObjectStoreExt;

use super::*;
use crate::ErrorKind;

fn store() -> (Arc<InMemory>, ReadOnlyStore) {
    let inner = Arc::new(InMemory::new());
    let ro = ReadOnlyStore::new(inner.clone(), "s3://bucket");
    (inner, ro)
}

/// The error's kind, retryability and message, as callers see it.
fn seen(e: object_store::Error) -> (ErrorKind, bool, String) {
    let e = Error::from(e);
    (e.kind(), e.is_retryable(), e.to_string())
}

fn assert_refused(e: object_store::Error, operation: &str, location: &str) {
    let (kind, retryable, message) = seen(e);
    assert_eq!(kind, ErrorKind::Credentials, "{message}");
    assert!(!retryable, "{message}");
    let expected = format!("{operation} {location} refused: the table was opened for reading");
    assert!(message.contains(&expected), "{message}");
    assert!(message.contains("access mode READ"), "{message}");
}

#[test]
fn modes_parse_and_print() {
    assert_eq!(AccessMode::default(), AccessMode::ReadWrite);
    assert_eq!(AccessMode::parse(" READ "), Some(AccessMode::Read));
    assert_eq!(AccessMode::parse("read-write"), Some(AccessMode::ReadWrite));
    assert_eq!(AccessMode::parse("Read_Write"), Some(AccessMode::ReadWrite));
    assert_eq!(AccessMode::parse("write"), None);
    assert_eq!(AccessMode::Read.as_str(), "read");
    assert_eq!(AccessMode::ReadWrite.to_string(), "READ_WRITE");
    assert!(!AccessMode::Read.allows_writes());

    let mut options: StorageOptions = HashMap::from([
        (ACCESS_MODE.to_string(), "read".to_string()),
        ("aws_region".to_string(), "r".to_string()),
    ]);
    assert_eq!(
        AccessMode::take_from(&mut options).unwrap(),
        Some(AccessMode::Read)
    );
    assert!(!options.contains_key(ACCESS_MODE), "taken out");
    assert_eq!(AccessMode::take_from(&mut options).unwrap(), None);
    AccessMode::ReadWrite.set_in(&mut options);
    assert_eq!(options[ACCESS_MODE], "read_write");

    let mut bad: StorageOptions = HashMap::from([(ACCESS_MODE.to_string(), "rw".to_string())]);
    let e = AccessMode::take_from(&mut bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidOptions);
    assert!(
        e.to_string().contains("'access_mode'") && e.to_string().contains("\"rw\""),
        "{e}"
    );
}

#[tokio::test]
async fn writes_are_refused_naming_operation_and_location_and_reads_pass() {
    let (inner, ro) = store();
    let p = Path::from("t/data");
    inner
        .put(&p, PutPayload::from_static(b"abc"))
        .await
        .unwrap();

    assert_eq!(
        ro.get(&p).await.unwrap().bytes().await.unwrap(),
        Bytes::from_static(b"abc")
    );
    assert_eq!(ro.head(&p).await.unwrap().size, 3);
    assert_eq!(
        ro.get_range(&p, 1..2).await.unwrap(),
        Bytes::from_static(b"b")
    );
    let listed: Vec<_> = ro.list(None).collect().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        ro.list_with_delimiter(None)
            .await
            .unwrap()
            .common_prefixes
            .len(),
        1
    );

    let q = Path::from("t/other");
    assert_refused(
        ro.put(&q, PutPayload::from_static(b"x")).await.unwrap_err(),
        "PUT",
        "s3://bucket/t/other",
    );
    assert_refused(
        match ro.put_multipart(&q).await {
            Err(e) => e,
            Ok(_) => panic!("a multipart upload was started"),
        },
        "PUT (multipart)",
        "s3://bucket/t/other",
    );
    assert_refused(
        ro.delete(&p).await.unwrap_err(),
        "DELETE",
        "s3://bucket/t/data",
    );
    assert_refused(
        ro.copy(&p, &q).await.unwrap_err(),
        "COPY",
        "s3://bucket/t/data -> s3://bucket/t/other",
    );
    assert_refused(
        ro.rename(&p, &q).await.unwrap_err(),
        "RENAME",
        "s3://bucket/t/data -> s3://bucket/t/other",
    );
    // Nothing reached the inner store.
    let names: Vec<String> = inner
        .list(None)
        .map(|m| m.unwrap().location.to_string())
        .collect()
        .await;
    assert_eq!(names, vec!["t/data".to_string()]);

    let mp = ReadOnlyStore::multipart(inner.clone(), "s3://bucket");
    assert_refused(
        mp.create_multipart(&q).await.unwrap_err(),
        "PUT (multipart)",
        "s3://bucket/t/other",
    );
    assert_refused(
        mp.put_part(&q, &"1".to_string(), 0, PutPayload::from_static(b"x"))
            .await
            .unwrap_err(),
        "PUT (multipart)",
        "s3://bucket/t/other",
    );
}
