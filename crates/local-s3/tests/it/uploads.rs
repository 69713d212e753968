//! Incomplete multipart uploads are listable: `LocalS3::incomplete_uploads`, the admin API
//! and S3 `ListMultipartUploads` (also for a key scoped to a prefix). Named after case C24,
//! whose tests assert that a failed upload leaves no parts.

use crate::common;

use std::time::Duration;

use common::{root_signer, s3_call, xml_field, BUCKET};
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};

#[tokio::test]
async fn c24_incomplete_uploads_are_listed_until_completed_or_aborted() {
    let s3 = common::start().await;
    let store = common::root_store(&s3, BUCKET);
    assert!(s3.incomplete_uploads(None).is_empty());

    let mut kept = store
        .put_multipart(&Path::from("t/kept.bin"))
        .await
        .unwrap();
    kept.put_part(PutPayload::from(vec![1u8; 5 << 20]))
        .await
        .unwrap();
    kept.put_part(PutPayload::from(vec![2u8; 10]))
        .await
        .unwrap();
    let mut aborted = store
        .put_multipart(&Path::from("t/gone.bin"))
        .await
        .unwrap();
    aborted
        .put_part(PutPayload::from(vec![3u8; 10]))
        .await
        .unwrap();

    let listed = s3.incomplete_uploads(Some(BUCKET));
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!((listed[0].key.as_str(), listed[0].parts), ("t/gone.bin", 1));
    assert_eq!((listed[1].key.as_str(), listed[1].parts), ("t/kept.bin", 2));
    assert!(listed
        .iter()
        .all(|u| u.bucket == BUCKET && !u.upload_id.is_empty()));
    assert!(s3.incomplete_uploads(Some("other")).is_empty());

    // The admin API answers the same list.
    let (status, body) = common::http(
        reqwest::Method::GET,
        &format!("{}/_admin/uploads?bucket={BUCKET}", s3.endpoint()),
    )
    .await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["key"], "t/kept.bin");
    assert_eq!(rows[1]["parts"], 2);
    assert_eq!(rows[1]["upload_id"], listed[1].upload_id.as_str());
    assert!(rows[1]["initiated_millis"].as_i64().unwrap() > 0);

    aborted.abort().await.unwrap();
    kept.complete().await.unwrap();
    assert!(s3.incomplete_uploads(None).is_empty());
    let (_, body) = common::http(
        reqwest::Method::GET,
        &format!("{}/_admin/uploads", s3.endpoint()),
    )
    .await;
    assert_eq!(body, "[]");
}

#[tokio::test]
async fn c24_list_multipart_uploads_through_s3_with_a_scoped_key() {
    let s3 = common::start().await;
    let store = common::root_store(&s3, BUCKET);
    let mut inside = store
        .put_multipart(&Path::from("table-1/part-0.parquet"))
        .await
        .unwrap();
    inside
        .put_part(PutPayload::from(vec![1u8; 10]))
        .await
        .unwrap();
    let _outside = store
        .put_multipart(&Path::from("table-2/part-0.parquet"))
        .await
        .unwrap();
    let creds = s3.issue_credentials(Duration::from_secs(60), Some("data/table-1/"));
    let signer = (
        creds.access_key_id.as_str(),
        creds.secret_access_key.as_str(),
        Some(creds.session_token.as_str()),
    );
    let client = reqwest::Client::new();
    let path = format!("/{BUCKET}");

    let scoped = s3_call(
        &client,
        &s3,
        "GET",
        &path,
        &[("uploads", ""), ("prefix", "table-1/")],
        &[],
        Vec::new(),
        signer,
    )
    .await;
    assert_eq!(scoped.status, 200, "{}", scoped.body);
    assert_eq!(
        xml_field(&scoped.body, "Key").as_deref(),
        Some("table-1/part-0.parquet")
    );
    let id = &s3.incomplete_uploads(None)[0].upload_id;
    assert_eq!(xml_field(&scoped.body, "UploadId").as_ref(), Some(id));
    assert!(!scoped.body.contains("table-2/"), "{}", scoped.body);

    // Without a prefix inside the scope the listing is denied, as for ListObjects.
    let denied = s3_call(
        &client,
        &s3,
        "GET",
        &path,
        &[("uploads", "")],
        &[],
        Vec::new(),
        signer,
    )
    .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_eq!(
        xml_field(&denied.body, "Code").as_deref(),
        Some("AccessDenied")
    );

    // The root key sees both; max-uploads pages by key marker.
    let all = s3_call(
        &client,
        &s3,
        "GET",
        &path,
        &[("uploads", ""), ("max-uploads", "1")],
        &[],
        Vec::new(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert_eq!(xml_field(&all.body, "IsTruncated").as_deref(), Some("true"));
    let marker = xml_field(&all.body, "NextKeyMarker").unwrap();
    assert_eq!(marker, "table-1/part-0.parquet");
    let next_id = xml_field(&all.body, "NextUploadIdMarker").unwrap();
    let rest = s3_call(
        &client,
        &s3,
        "GET",
        &path,
        &[
            ("uploads", ""),
            ("key-marker", &marker),
            ("upload-id-marker", &next_id),
        ],
        &[],
        Vec::new(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(
        xml_field(&rest.body, "Key").as_deref(),
        Some("table-2/part-0.parquet"),
        "{}",
        rest.body
    );
    assert_eq!(
        xml_field(&rest.body, "IsTruncated").as_deref(),
        Some("false")
    );
}
