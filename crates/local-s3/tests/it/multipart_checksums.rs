//! Multipart checksums as on S3: the upload's algorithm and type are recorded, each part's
//! checksum is verified and kept, CompleteMultipartUpload checks the listed part checksums
//! and stores the object's (FULL_OBJECT: the CRC of the whole object; COMPOSITE: the
//! checksum of the part checksums, `-N`), which GET and HEAD return with checksum mode. And
//! the exact sequence object_store 0.14.2 sends with `aws_checksum_algorithm=crc64nvme`
//! completes with the FULL_OBJECT CRC64NVME stored.

use crate::common;

use common::{checksum, root_call, xml_field, Answer, BUCKET};
use local_s3::LocalS3;
use object_store::aws::{AmazonS3Builder, Checksum};
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};

const MODE: (&str, &str) = ("x-amz-checksum-mode", "ENABLED");
const MIB: usize = 1 << 20;

fn data(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn code(a: &Answer) -> String {
    xml_field(&a.body, "Code").unwrap_or_default()
}

/// CreateMultipartUpload with `headers`; the upload id.
async fn create(s3: &LocalS3, path: &str, headers: &[(&str, &str)]) -> String {
    let a = root_call(s3, "POST", path, &[("uploads", "")], headers, Vec::new()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    xml_field(&a.body, "UploadId").unwrap()
}

async fn part(
    s3: &LocalS3,
    path: &str,
    id: &str,
    n: u32,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let n = n.to_string();
    let query = [("partNumber", n.as_str()), ("uploadId", id)];
    root_call(s3, "PUT", path, &query, headers, body.to_vec()).await
}

/// One part as CompleteMultipartUpload lists it: number, ETag and checksum elements, such
/// as `("ChecksumCRC32C", value)`.
struct Listed<'a>(u32, &'a str, Vec<(&'a str, &'a str)>);

/// CompleteMultipartUpload listing `parts`.
async fn complete(
    s3: &LocalS3,
    path: &str,
    id: &str,
    parts: &[Listed<'_>],
    headers: &[(&str, &str)],
) -> Answer {
    let mut xml = String::from("<CompleteMultipartUpload>");
    for Listed(n, etag, checksums) in parts {
        xml.push_str(&format!(
            "<Part><PartNumber>{n}</PartNumber><ETag>{etag}</ETag>"
        ));
        for (element, value) in checksums {
            xml.push_str(&format!("<{element}>{value}</{element}>"));
        }
        xml.push_str("</Part>");
    }
    xml.push_str("</CompleteMultipartUpload>");
    let query = [("uploadId", id)];
    root_call(s3, "POST", path, &query, headers, xml.into_bytes()).await
}

#[tokio::test]
async fn create_upload_refuses_the_checksum_types_s3_refuses() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/refused");
    for headers in [
        vec![
            ("x-amz-checksum-algorithm", "CRC64NVME"),
            ("x-amz-checksum-type", "COMPOSITE"),
        ],
        vec![
            ("x-amz-checksum-algorithm", "SHA256"),
            ("x-amz-checksum-type", "FULL_OBJECT"),
        ],
        vec![("x-amz-checksum-type", "FULL_OBJECT")],
        vec![("x-amz-checksum-algorithm", "MD5")],
    ] {
        let a = root_call(&s3, "POST", &path, &[("uploads", "")], &headers, Vec::new()).await;
        assert_eq!(a.status, 400, "{headers:?}: {}", a.body);
        assert_eq!(code(&a), "InvalidRequest", "{headers:?}");
    }
    assert!(s3.incomplete_uploads(None).is_empty());
}

#[tokio::test]
async fn a_part_checksum_is_verified_echoed_and_a_mismatch_refused() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/verified");
    let id = create(&s3, &path, &[("x-amz-checksum-algorithm", "CRC32C")]).await;
    let body = data(1, 1000);
    let crc = checksum("crc32c", &body);
    let ok = part(
        &s3,
        &path,
        &id,
        1,
        &[("x-amz-checksum-crc32c", &crc)],
        &body,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.header("x-amz-checksum-crc32c").as_deref(), Some(&*crc));

    let wrong = checksum("crc32c", b"other bytes");
    let bad = part(
        &s3,
        &path,
        &id,
        2,
        &[("x-amz-checksum-crc32c", &wrong)],
        &body,
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(code(&bad), "BadDigest");
    // Only part 1 is kept; ListParts shows its checksum and the upload's algorithm.
    assert_eq!(s3.incomplete_uploads(None)[0].parts, 1);
    let listed = root_call(&s3, "GET", &path, &[("uploadId", &id)], &[], Vec::new()).await;
    assert_eq!(
        xml_field(&listed.body, "ChecksumCRC32C").as_deref(),
        Some(&*crc)
    );
    assert_eq!(
        xml_field(&listed.body, "ChecksumAlgorithm").as_deref(),
        Some("CRC32C")
    );
    assert_eq!(
        xml_field(&listed.body, "ChecksumType").as_deref(),
        Some("COMPOSITE")
    );
}

#[tokio::test]
async fn a_missing_or_other_part_checksum_is_refused() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/missing");
    let id = create(&s3, &path, &[("x-amz-checksum-algorithm", "CRC32C")]).await;
    let body = data(2, 100);
    let none = part(&s3, &path, &id, 1, &[], &body).await;
    assert_eq!(none.status, 400, "{}", none.body);
    assert_eq!(code(&none), "InvalidRequest");
    assert!(none
        .body
        .contains("expected checksum Type: crc32c, actual checksum Type: null"));
    let crc32 = checksum("crc32", &body);
    let other = part(
        &s3,
        &path,
        &id,
        1,
        &[("x-amz-checksum-crc32", &crc32)],
        &body,
    )
    .await;
    assert_eq!(other.status, 400, "{}", other.body);
    assert!(
        other.body.contains("actual checksum Type: crc32"),
        "{}",
        other.body
    );
    assert_eq!(s3.incomplete_uploads(None)[0].parts, 0);

    // FULL_OBJECT: as on S3, a part without its checksum is taken, the endpoint computes it.
    let path = format!("/{BUCKET}/mpu/full-computed");
    let id = create(
        &s3,
        &path,
        &[
            ("x-amz-checksum-algorithm", "CRC32"),
            ("x-amz-checksum-type", "FULL_OBJECT"),
        ],
    )
    .await;
    let p = part(&s3, &path, &id, 1, &[], &body).await;
    assert_eq!(p.status, 200, "{}", p.body);
    let done = complete(&s3, &path, &id, &[Listed(1, &p.etag.unwrap(), vec![])], &[]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(xml_field(&done.body, "ChecksumCRC32"), Some(crc32.clone()));
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], Vec::new()).await;
    assert_eq!(head.header("x-amz-checksum-crc32"), Some(crc32));
    assert_eq!(
        head.header("x-amz-checksum-type").as_deref(),
        Some("FULL_OBJECT")
    );
}

#[tokio::test]
async fn complete_with_a_wrong_or_missing_part_checksum_is_refused() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/complete");
    let id = create(&s3, &path, &[("x-amz-checksum-algorithm", "CRC32C")]).await;
    let body = data(3, 100);
    let crc = checksum("crc32c", &body);
    let p = part(
        &s3,
        &path,
        &id,
        1,
        &[("x-amz-checksum-crc32c", &crc)],
        &body,
    )
    .await;
    let etag = p.etag.unwrap();

    let wrong = checksum("crc32c", b"x");
    let bad = complete(
        &s3,
        &path,
        &id,
        &[Listed(1, &etag, vec![("ChecksumCRC32C", &wrong)])],
        &[],
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(code(&bad), "InvalidPart");
    let missing = complete(&s3, &path, &id, &[Listed(1, &etag, vec![])], &[]).await;
    assert_eq!(missing.status, 400, "{}", missing.body);
    assert_eq!(code(&missing), "InvalidRequest");
    assert!(
        missing.body.contains("It was missing for part 1"),
        "{}",
        missing.body
    );
    let mode = complete(
        &s3,
        &path,
        &id,
        &[Listed(1, &etag, vec![("ChecksumCRC32C", &crc)])],
        &[("x-amz-checksum-type", "FULL_OBJECT")],
    )
    .await;
    assert_eq!(code(&mode), "InvalidRequest", "{}", mode.body);
    // Refusals leave the upload as it was; the right list completes it.
    assert_eq!(s3.incomplete_uploads(None).len(), 1);
    let ok = complete(
        &s3,
        &path,
        &id,
        &[Listed(1, &etag, vec![("ChecksumCRC32C", &crc)])],
        &[],
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(s3.incomplete_uploads(None).is_empty());
}

#[tokio::test]
async fn full_object_crc64nvme_is_the_crc_of_the_whole_object() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/full-crc64nvme");
    let id = create(&s3, &path, &[("x-amz-checksum-algorithm", "CRC64NVME")]).await;
    let parts = [data(4, 5 * MIB), data(5, 5 * MIB + 3), data(6, 1234)];
    let mut listed = Vec::new();
    for (i, body) in parts.iter().enumerate() {
        let crc = checksum("crc64nvme", body);
        let n = i as u32 + 1;
        let p = part(
            &s3,
            &path,
            &id,
            n,
            &[("x-amz-checksum-crc64nvme", &crc)],
            body,
        )
        .await;
        assert_eq!(p.status, 200, "{}", p.body);
        listed.push((n, p.etag.unwrap(), crc));
    }
    let whole = parts.concat();
    let expected = checksum("crc64nvme", &whole);
    let list: Vec<Listed> = listed
        .iter()
        .map(|(n, e, c)| Listed(*n, e, vec![("ChecksumCRC64NVME", c)]))
        .collect();

    // A whole-object checksum given with Complete must be the computed one.
    let wrong = checksum("crc64nvme", b"not the object");
    let header = "x-amz-checksum-crc64nvme";
    let bad = complete(&s3, &path, &id, &list, &[(header, &wrong)]).await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(code(&bad), "BadDigest");
    let done = complete(&s3, &path, &id, &list, &[(header, &expected)]).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(
        xml_field(&done.body, "ChecksumCRC64NVME"),
        Some(expected.clone())
    );
    assert_eq!(
        xml_field(&done.body, "ChecksumType").as_deref(),
        Some("FULL_OBJECT")
    );

    let get = root_call(&s3, "GET", &path, &[], &[MODE], Vec::new()).await;
    assert!(get.bytes == whole);
    assert_eq!(get.header(header), Some(expected));
    assert_eq!(
        get.header("x-amz-checksum-type").as_deref(),
        Some("FULL_OBJECT")
    );
    let plain = root_call(&s3, "HEAD", &path, &[], &[], Vec::new()).await;
    assert_eq!(plain.header(header), None, "only with checksum mode");
}

#[tokio::test]
async fn composite_crc32c_is_the_checksum_of_the_part_checksums() {
    let s3 = common::start().await;
    let path = format!("/{BUCKET}/mpu/composite");
    let id = create(&s3, &path, &[("x-amz-checksum-algorithm", "CRC32C")]).await;
    let parts = [data(7, 5 * MIB), data(8, 10)];
    let crcs: Vec<String> = parts.iter().map(|p| checksum("crc32c", p)).collect();
    let mut etags = Vec::new();
    for (i, body) in parts.iter().enumerate() {
        let h = [("x-amz-checksum-crc32c", crcs[i].as_str())];
        let p = part(&s3, &path, &id, i as u32 + 1, &h, body).await;
        assert_eq!(p.status, 200, "{}", p.body);
        etags.push(p.etag.unwrap());
    }
    let list = [
        Listed(1, &etags[0], vec![("ChecksumCRC32C", &crcs[0])]),
        Listed(2, &etags[1], vec![("ChecksumCRC32C", &crcs[1])]),
    ];
    let done = complete(&s3, &path, &id, &list, &[]).await;
    assert_eq!(done.status, 200, "{}", done.body);

    let mut binary = Vec::new();
    for c in &crcs {
        binary.extend(base64_simd::STANDARD.decode_to_vec(c).unwrap());
    }
    let expected = format!("{}-2", checksum("crc32c", &binary));
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], Vec::new()).await;
    assert_eq!(head.header("x-amz-checksum-crc32c"), Some(expected));
    assert_eq!(
        head.header("x-amz-checksum-type").as_deref(),
        Some("COMPOSITE")
    );
    let plain = root_call(&s3, "GET", &path, &[], &[], Vec::new()).await;
    assert_eq!(plain.header("x-amz-checksum-crc32c"), None);
}

/// object_store 0.14.2 with `aws_checksum_algorithm=crc64nvme`: CreateMultipartUpload with
/// `x-amz-checksum-algorithm: CRC64NVME` (no type: FULL_OBJECT), each UploadPart with
/// `x-amz-checksum-crc64nvme`, whose echo it lists as `<ChecksumCRC64NVME>` in Complete.
#[tokio::test]
async fn object_store_crc64nvme_multipart_completes_with_the_full_object_crc() {
    let s3 = common::start().await;
    let store = AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_allow_http(true)
        .with_bucket_name(BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(s3.root_access_key())
        .with_secret_access_key(s3.root_secret_key())
        .with_checksum_algorithm(Checksum::CRC64NVME)
        .build()
        .unwrap();
    let location = Path::from("os/crc64nvme.bin");
    let parts = [data(9, 5 * MIB), data(10, 777)];
    let mut upload = store.put_multipart(&location).await.unwrap();
    for p in &parts {
        upload.put_part(PutPayload::from(p.clone())).await.unwrap();
    }
    upload.complete().await.unwrap();
    let whole = parts.concat();
    let path = format!("/{BUCKET}/os/crc64nvme.bin");
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], Vec::new()).await;
    let expected = checksum("crc64nvme", &whole);
    assert_eq!(head.header("x-amz-checksum-crc64nvme"), Some(expected));
    assert_eq!(
        head.header("x-amz-checksum-type").as_deref(),
        Some("FULL_OBJECT")
    );
    let got = store.get(&location).await.unwrap().bytes().await.unwrap();
    assert!(got[..] == whole[..]);

    // An upload of no parts: object_store sends one empty part.
    let empty = Path::from("os/empty.bin");
    store
        .put_multipart(&empty)
        .await
        .unwrap()
        .complete()
        .await
        .unwrap();
    let path = format!("/{BUCKET}/os/empty.bin");
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], vec![]).await;
    let expected = checksum("crc64nvme", b"");
    assert_eq!(head.header("x-amz-checksum-crc64nvme"), Some(expected));

    // Its single PUT sends the header too, and the object keeps it.
    let small = Path::from("os/small.bin");
    store
        .put(&small, PutPayload::from(data(11, 99)))
        .await
        .unwrap();
    let path = format!("/{BUCKET}/os/small.bin");
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], vec![]).await;
    let expected = checksum("crc64nvme", &data(11, 99));
    assert_eq!(head.header("x-amz-checksum-crc64nvme"), Some(expected));
}
