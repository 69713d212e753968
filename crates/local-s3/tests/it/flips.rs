//! Bit-flip fault injection: a flip armed for the request side corrupts the next PUT or part
//! body of its key after it was received and before it is verified (the endpoint refuses it
//! with `BadDigest`, nothing is stored); one armed for the response side corrupts the body the
//! next GET of its key sends, headers unchanged (only the client's own check can see it). One
//! flip each, counted, per key; also armed through `POST /_admin/flip`.

use crate::common;

use common::{checksum, root_call, xml_field, BUCKET};
use local_s3::{FlipCounts, FlipSide};
use object_store::aws::{AmazonS3Builder, Checksum};
use object_store::path::Path;
use object_store::{MultipartUpload, ObjectStoreExt, PutPayload};

const MODE: (&str, &str) = ("x-amz-checksum-mode", "ENABLED");

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 13 + 5) as u8).collect()
}

/// The positions of the bits where `a` and `b` differ: `(byte, mask)`.
fn differing_bits(a: &[u8], b: &[u8]) -> Vec<(usize, u8)> {
    assert_eq!(a.len(), b.len());
    let mut out = Vec::new();
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        for bit in 0..8 {
            if (x ^ y) & (1 << bit) != 0 {
                out.push((i, 1 << bit));
            }
        }
    }
    out
}

#[tokio::test]
async fn a_flipped_request_body_is_refused_with_bad_digest_and_nothing_is_stored() {
    let s3 = common::start().await;
    let body = data(4096);
    let crc = checksum("crc64nvme", &body);
    let path = format!("/{BUCKET}/flip/request.bin");
    let header = [("x-amz-checksum-crc64nvme", crc.as_str())];

    s3.flip_next_request(BUCKET, "flip/request.bin");
    assert_eq!(
        s3.flips(),
        FlipCounts {
            request: 0,
            response: 0,
            armed: 1
        }
    );
    let refused = root_call(&s3, "PUT", &path, &[], &header, body.clone()).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(
        xml_field(&refused.body, "Code").as_deref(),
        Some("BadDigest")
    );
    assert_eq!(
        root_call(&s3, "HEAD", &path, &[], &[], vec![]).await.status,
        404
    );
    assert_eq!(
        s3.flips(),
        FlipCounts {
            request: 1,
            response: 0,
            armed: 0
        }
    );

    // One-shot: the same PUT again is stored.
    let put = root_call(&s3, "PUT", &path, &[], &header, body.clone()).await;
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(s3.flips().request, 1);

    // Without a checksum the flipped body is stored as received: one bit off.
    s3.flip_next_request(BUCKET, "flip/unchecked.bin");
    let path = format!("/{BUCKET}/flip/unchecked.bin");
    let put = root_call(&s3, "PUT", &path, &[], &[], body.clone()).await;
    assert_eq!(put.status, 200, "{}", put.body);
    let stored = root_call(&s3, "GET", &path, &[], &[], vec![]).await.bytes;
    assert_eq!(differing_bits(&body, &stored), vec![(2048, 1)]);
    assert_eq!(s3.flips().request, 2);
}

#[tokio::test]
async fn a_flipped_part_is_refused_through_object_store_with_crc64nvme() {
    let s3 = common::start().await;
    let store = AmazonS3Builder::new()
        .with_endpoint(s3.endpoint())
        .with_allow_http(true)
        .with_bucket_name(BUCKET)
        .with_region("us-east-1")
        .with_access_key_id(s3.root_access_key())
        .with_secret_access_key(s3.root_secret_key())
        .with_retry(object_store::RetryConfig {
            max_retries: 0,
            ..Default::default()
        })
        .with_checksum_algorithm(Checksum::CRC64NVME)
        .build()
        .unwrap();
    let location = Path::from("flip/part.bin");
    s3.flip_next_request(BUCKET, "flip/part.bin");
    let mut upload = store.put_multipart(&location).await.unwrap();
    let err = upload
        .put_part(PutPayload::from(data(1000)))
        .await
        .unwrap_err();
    let text = common::error_text(&err);
    assert!(text.contains("BadDigest"), "{text}");
    assert_eq!(s3.flips().request, 1);
    assert_eq!(
        s3.incomplete_uploads(None)[0].parts,
        0,
        "the part was not kept"
    );

    // A single PUT through object_store: refused the same way.
    s3.flip_next_request(BUCKET, "flip/put.bin");
    let err = store
        .put(&Path::from("flip/put.bin"), PutPayload::from(data(10)))
        .await
        .unwrap_err();
    assert!(common::error_text(&err).contains("BadDigest"));
    assert_eq!(s3.flips().request, 2);
}

#[tokio::test]
async fn a_flipped_response_body_differs_by_one_bit_under_the_stored_checksum() {
    let s3 = common::start().await;
    let body = data(10_001);
    let crc = checksum("crc64nvme", &body);
    let path = format!("/{BUCKET}/flip/response.bin");
    let put = root_call(
        &s3,
        "PUT",
        &path,
        &[],
        &[("x-amz-checksum-crc64nvme", &crc)],
        body.clone(),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);

    s3.flip_next_response(BUCKET, "flip/response.bin");
    // A HEAD has no body: the flip stays armed.
    let head = root_call(&s3, "HEAD", &path, &[], &[MODE], vec![]).await;
    assert_eq!(head.status, 200);
    assert_eq!(s3.flips().armed, 1);
    let got = root_call(&s3, "GET", &path, &[], &[MODE], vec![]).await;
    assert_eq!(got.status, 200);
    assert_eq!(differing_bits(&body, &got.bytes), vec![(5000, 1)]);
    // The headers still carry the stored checksum, which the bytes no longer match.
    assert_eq!(got.header("x-amz-checksum-crc64nvme"), Some(crc.clone()));
    assert_ne!(checksum("crc64nvme", &got.bytes), crc);
    assert_eq!(got.header("content-length").as_deref(), Some("10001"));
    assert_eq!(
        s3.flips(),
        FlipCounts {
            request: 0,
            response: 1,
            armed: 0
        }
    );

    // One-shot: the next GET is intact.
    let again = root_call(&s3, "GET", &path, &[], &[MODE], vec![]).await;
    assert!(again.bytes == body);
    assert_eq!(s3.flips().response, 1);

    // An offset of a ranged GET counts from the first byte sent.
    s3.arm_flip(FlipSide::Response, BUCKET, "flip/response.bin", Some(2));
    let range = [("range", "bytes=100-199")];
    let part = root_call(&s3, "GET", &path, &[], &range, vec![]).await;
    assert_eq!(part.status, 206);
    assert_eq!(differing_bits(&body[100..200], &part.bytes), vec![(2, 1)]);
    assert_eq!(s3.flips().response, 2);
}

#[tokio::test]
async fn flips_are_armed_per_key_and_counted_through_the_admin_api() {
    let s3 = common::start().await;
    let body = data(64);
    for key in ["admin/a", "admin/b c"] {
        let path = format!("/{BUCKET}/{key}");
        assert_eq!(
            root_call(&s3, "PUT", &path, &[], &[], body.clone())
                .await
                .status,
            200
        );
    }
    let admin = |rest: &str| format!("{}/_admin/{rest}", s3.endpoint());
    let post = reqwest::Method::POST;
    let (status, text) = common::http(
        post.clone(),
        &admin("flip?key=data%2Fadmin%2Fb%20c&where=response&offset=7"),
    )
    .await;
    assert_eq!(status, 204, "{text}");
    let (_, flips) = common::http(reqwest::Method::GET, &admin("flips")).await;
    let flips: serde_json::Value = serde_json::from_str(&flips).unwrap();
    assert_eq!(
        flips,
        serde_json::json!({"request": 0, "response": 0, "armed": 1})
    );

    // Another key is untouched; the armed one is flipped at byte 7.
    let a = root_call(&s3, "GET", &format!("/{BUCKET}/admin/a"), &[], &[], vec![]).await;
    assert!(a.bytes == body);
    let b = root_call(
        &s3,
        "GET",
        &format!("/{BUCKET}/admin/b c"),
        &[],
        &[],
        vec![],
    )
    .await;
    assert_eq!(differing_bits(&body, &b.bytes), vec![(7, 1)]);
    let (_, flips) = common::http(reqwest::Method::GET, &admin("flips")).await;
    let flips: serde_json::Value = serde_json::from_str(&flips).unwrap();
    assert_eq!(
        flips,
        serde_json::json!({"request": 0, "response": 1, "armed": 0})
    );

    for bad in [
        "flip?where=response",
        "flip?key=data&where=response",
        "flip?key=data%2Fk&where=sideways",
        "flip?key=data%2Fk&where=request&offset=-1",
    ] {
        let (status, text) = common::http(post.clone(), &admin(bad)).await;
        assert_eq!(status, 400, "{bad}: {text}");
    }
    let (status, _) = common::http(reqwest::Method::GET, &admin("flip")).await;
    assert_eq!(status, 405);
}
