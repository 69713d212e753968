//! C26: every key S3 accepts (1 to 1,024 bytes of UTF-8) is stored, listed and read back
//! exactly; longer keys get 400 KeyTooLongError.

use crate::common;

use std::collections::BTreeSet;

use common::{root_signer, s3_call, xml_field, BUCKET};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const SPARK_PREFIX: &str = "warehouse/orders/_temporary/0/_temporary/";

/// Spark's temporary part-file key under the README's location shape (over 170 bytes).
fn spark_key(task: u32) -> String {
    format!(
        "{SPARK_PREFIX}attempt_2026120204000012345678901234567890123456_0001_m_{task:06}_9/p=0/\
         part-{task:05}-3f2b8c1e-9d4a-4b7e-8a61-0c5d2e7f9a13.c000.snappy.parquet"
    )
}

fn keys() -> Vec<String> {
    let mut keys = vec![
        "plain.txt".to_owned(),
        "with space/a b.txt".to_owned(),
        "plus+sign/a+b.txt".to_owned(),
        "percent%/100%25 done.txt".to_owned(),
        "unicode/ünïcödé-日本語-🙂.txt".to_owned(),
        "equals/p=0/q=a=b.txt".to_owned(),
        "dir-like/".to_owned(),
        spark_key(1),
        spark_key(2),
    ];
    keys.push(format!("long/{}", "k".repeat(1024 - 5)));
    // 1,024 bytes of multi-byte characters: 'é' is 2 bytes.
    keys.push(format!("wide/{}", "é".repeat((1024 - 5) / 2)));
    keys
}

#[tokio::test]
async fn c26_keys_up_to_1024_bytes_are_stored_listed_and_read_back_exactly() {
    let s3 = common::start().await;
    let store = common::root_store(&s3, BUCKET);
    assert!(spark_key(1).len() > 170, "{}", spark_key(1).len());
    let keys = keys();
    assert_eq!(keys[9].len(), 1024);
    assert!(keys[10].len() <= 1024 && keys[10].len() > 1020);
    let client = reqwest::Client::new();
    for key in &keys {
        // Raw signed PUT/GET so that the key reaches the endpoint unchanged.
        let put = s3_call(
            &client,
            &s3,
            "PUT",
            &format!("/{BUCKET}/{key}"),
            &[],
            &[],
            key.as_bytes().to_vec(),
            root_signer(&s3),
        )
        .await;
        assert_eq!(
            put.status,
            200,
            "PUT {key:?} ({} bytes): {}",
            key.len(),
            put.body
        );
        let get = s3_call(
            &client,
            &s3,
            "GET",
            &format!("/{BUCKET}/{key}"),
            &[],
            &[],
            Vec::new(),
            root_signer(&s3),
        )
        .await;
        assert_eq!(
            (get.status, get.body.as_str()),
            (200, key.as_str()),
            "GET {key:?}"
        );
    }
    // Through object_store too (it percent-encodes paths its own way).
    let spark = Path::from(spark_key(3));
    store
        .put(&spark, PutPayload::from_static(b"part"))
        .await
        .unwrap();
    let got = store.get(&spark).await.unwrap().bytes().await.unwrap();
    assert_eq!(&got[..], b"part");

    // Listing returns every key exactly.
    let listed: BTreeSet<String> = store
        .list(None)
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .unwrap();
    for key in keys.iter().filter(|k| !k.ends_with('/')) {
        assert!(listed.contains(key.as_str()), "{key:?} not listed");
    }
    let under = store
        .list_with_delimiter(Some(&Path::from(format!(
            "{SPARK_PREFIX}attempt_2026120204000012345678901234567890123456_0001_m_000001_9"
        ))))
        .await
        .unwrap();
    let prefixes: Vec<String> = under
        .common_prefixes
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(
        prefixes,
        [format!(
            "{SPARK_PREFIX}attempt_2026120204000012345678901234567890123456_0001_m_000001_9/p=0"
        )]
    );
}

#[tokio::test]
async fn c26_listing_pages_and_url_encoding_keep_keys_exact() {
    let s3 = common::start().await;
    let client = reqwest::Client::new();
    let keys = keys();
    for key in &keys {
        let put = s3_call(
            &client,
            &s3,
            "PUT",
            &format!("/{BUCKET}/{key}"),
            &[],
            &[],
            Vec::new(),
            root_signer(&s3),
        )
        .await;
        assert_eq!(put.status, 200, "{}", put.body);
    }
    // Pages of 2 with continuation tokens, encoding-type=url: every key once, in order.
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..20 {
        let mut query = vec![
            ("list-type", "2"),
            ("max-keys", "2"),
            ("encoding-type", "url"),
        ];
        if let Some(t) = &token {
            query.push(("continuation-token", t.as_str()));
        }
        let page = s3_call(
            &client,
            &s3,
            "GET",
            &format!("/{BUCKET}"),
            &query,
            &[],
            Vec::new(),
            root_signer(&s3),
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        for part in page.body.split("<Key>").skip(1) {
            let encoded = &part[..part.find("</Key>").unwrap()];
            let decoded = percent_encoding::percent_decode_str(encoded)
                .decode_utf8()
                .unwrap();
            assert!(
                !encoded.contains(' ') && !encoded.contains('+'),
                "{encoded}"
            );
            seen.push(decoded.into_owned());
        }
        token = xml_field(&page.body, "NextContinuationToken");
        if token.is_none() {
            break;
        }
    }
    let mut expected = keys.clone();
    expected.sort();
    assert_eq!(seen, expected);

    // Prefix and delimiter at the Spark attempt level.
    let listed = s3_call(
        &client,
        &s3,
        "GET",
        &format!("/{BUCKET}"),
        &[
            ("list-type", "2"),
            ("prefix", SPARK_PREFIX),
            ("delimiter", "/"),
        ],
        &[],
        Vec::new(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(
        listed.body.matches("<CommonPrefixes>").count(),
        2,
        "{}",
        listed.body
    );
    assert!(!listed.body.contains("<Contents>"), "{}", listed.body);
}

#[tokio::test]
async fn c26_a_key_over_1024_bytes_gets_key_too_long() {
    let s3 = common::start().await;
    let client = reqwest::Client::new();
    let key = "k".repeat(1025);
    let put = s3_call(
        &client,
        &s3,
        "PUT",
        &format!("/{BUCKET}/{key}"),
        &[],
        &[],
        b"x".to_vec(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(put.status, 400, "{}", put.body);
    assert_eq!(
        xml_field(&put.body, "Code").as_deref(),
        Some("KeyTooLongError")
    );
    assert!(s3.incomplete_uploads(None).is_empty());
}
