//! Stored checksums come back as on S3: on GET and HEAD only with `x-amz-checksum-mode:
//! ENABLED`, with `x-amz-checksum-type`, and never for a range; a PUT whose checksum does not
//! match its bytes is refused with `BadDigest` and stores nothing.

use crate::common;

use common::{checksum, root_call, xml_field, BUCKET};

const MODE: (&str, &str) = ("x-amz-checksum-mode", "ENABLED");

/// Every `x-amz-checksum-*` header of an answer, sorted.
fn checksum_headers(a: &common::Answer) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = a
        .headers
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("x-amz-checksum-"))
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn get_and_head_return_stored_checksums_only_with_checksum_mode() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mode/object.bin");
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let crc = checksum("crc32c", &data);
    let put = root_call(
        &s3,
        "PUT",
        &path,
        &[],
        &[("x-amz-checksum-crc32c", &crc)],
        data.clone(),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.header("x-amz-checksum-crc32c").as_deref(), Some(&*crc));

    for method in ["GET", "HEAD"] {
        let plain = root_call(&s3, method, &path, &[], &[], Vec::new()).await;
        assert_eq!(plain.status, 200);
        assert_eq!(
            checksum_headers(&plain),
            vec![],
            "{method} without the mode"
        );

        let enabled = root_call(&s3, method, &path, &[], &[MODE], Vec::new()).await;
        assert_eq!(enabled.status, 200);
        assert_eq!(
            checksum_headers(&enabled),
            vec![
                ("x-amz-checksum-crc32c".to_owned(), crc.clone()),
                ("x-amz-checksum-type".to_owned(), "FULL_OBJECT".to_owned()),
            ],
            "{method} with the mode"
        );
    }
    let whole = root_call(&s3, "GET", &path, &[], &[MODE], Vec::new()).await;
    assert!(whole.bytes == data);

    // A range, even one covering the whole object, gets no checksum.
    for range in ["bytes=0-99", "bytes=0-9999"] {
        let part = root_call(
            &s3,
            "GET",
            &path,
            &[],
            &[MODE, ("range", range)],
            Vec::new(),
        )
        .await;
        assert_eq!(part.status, 206);
        assert_eq!(checksum_headers(&part), vec![], "{range}");
    }
}

#[tokio::test]
async fn every_algorithm_is_verified_and_a_mismatch_stores_nothing() {
    let s3 = common::start().await;
    let data = b"the quick brown fox".to_vec();
    for algorithm in ["crc32", "crc32c", "sha1", "sha256", "crc64nvme"] {
        let path = format!("/{BUCKET}/verify/{algorithm}");
        let header = format!("x-amz-checksum-{algorithm}");
        let wrong = checksum(algorithm, b"something else");
        let refused = root_call(&s3, "PUT", &path, &[], &[(&header, &wrong)], data.clone()).await;
        assert_eq!(refused.status, 400, "{algorithm}: {}", refused.body);
        assert_eq!(
            xml_field(&refused.body, "Code").as_deref(),
            Some("BadDigest")
        );
        let head = root_call(&s3, "HEAD", &path, &[], &[], Vec::new()).await;
        assert_eq!(head.status, 404, "{algorithm}: nothing stored");

        let right = checksum(algorithm, &data);
        let put = root_call(&s3, "PUT", &path, &[], &[(&header, &right)], data.clone()).await;
        assert_eq!(put.status, 200, "{algorithm}: {}", put.body);
        let head = root_call(&s3, "HEAD", &path, &[], &[MODE], Vec::new()).await;
        assert_eq!(
            head.header(&header).as_deref(),
            Some(&*right),
            "{algorithm}"
        );
    }
}

#[tokio::test]
async fn an_object_written_without_a_checksum_returns_none() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/plain/object");
    let put = root_call(&s3, "PUT", &path, &[], &[], b"abc".to_vec()).await;
    assert_eq!(put.status, 200);
    let get = root_call(&s3, "GET", &path, &[], &[MODE], Vec::new()).await;
    assert_eq!(get.status, 200);
    assert_eq!(checksum_headers(&get), vec![]);
}
