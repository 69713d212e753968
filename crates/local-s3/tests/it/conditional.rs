//! C25: conditional writes are atomic per key. Races of `If-None-Match: *` (PutObject,
//! CompleteMultipartUpload, CopyObject) and `If-Match` have exactly one winner; the losers
//! get 412 PreconditionFailed; If-Match on a missing key gets 404 NoSuchKey, as on S3.

use crate::common;

use std::sync::Arc;

use common::{root_signer, s3_call, xml_field, BUCKET};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use tokio::sync::Barrier;

const THREADS: usize = 16;
const KEYS: usize = 50;
/// Rounds of the put-if-absent race, each on 50 fresh keys (16 x 50 x 10 = 8,000 PUTs; 50
/// rounds took two minutes of a debug build on two shared cores).
const ROUNDS: usize = 10;
/// Rounds of the put-if-match race (8 PUTs each).
const CAS_ROUNDS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c25_put_if_absent_race_has_one_winner_per_key() {
    let s3 = common::start().await;
    let store = Arc::new(common::root_store(&s3, BUCKET));
    let barrier = Arc::new(Barrier::new(THREADS));
    let mut tasks = Vec::new();
    for t in 0..THREADS {
        let (store, barrier) = (store.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let mut wins = vec![0u32; ROUNDS * KEYS];
            let mut other_errors = Vec::new();
            for round in 0..ROUNDS {
                barrier.wait().await;
                for k in 0..KEYS {
                    let path = Path::from(format!("race/{round}/k{k}"));
                    let opts = PutOptions::from(PutMode::Create);
                    let body = PutPayload::from(format!("thread {t}"));
                    match store.put_opts(&path, body, opts).await {
                        Ok(_) => wins[round * KEYS + k] += 1,
                        Err(object_store::Error::AlreadyExists { .. }) => {}
                        Err(e) => other_errors.push(e.to_string()),
                    }
                }
            }
            (wins, other_errors)
        }));
    }
    let mut winners = vec![0u32; ROUNDS * KEYS];
    for task in tasks {
        let (wins, errors) = task.await.unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        for (i, w) in wins.into_iter().enumerate() {
            winners[i] += w;
        }
    }
    let bad: Vec<(usize, u32)> = winners
        .iter()
        .enumerate()
        .filter(|(_, &w)| w != 1)
        .map(|(i, &w)| (i, w))
        .collect();
    assert!(
        bad.is_empty(),
        "keys without exactly one winner (index, winners): {bad:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c25_put_if_match_race_has_one_winner_per_etag() {
    let s3 = common::start().await;
    let store = Arc::new(common::root_store(&s3, BUCKET));
    let path = Path::from("cas/counter");
    let mut etag = store
        .put(&path, PutPayload::from_static(b"0"))
        .await
        .unwrap()
        .e_tag
        .unwrap();
    for round in 0..CAS_ROUNDS {
        let barrier = Arc::new(Barrier::new(8));
        let mut tasks = Vec::new();
        for t in 0..8 {
            let (store, barrier, path, etag) =
                (store.clone(), barrier.clone(), path.clone(), etag.clone());
            tasks.push(tokio::spawn(async move {
                barrier.wait().await;
                let mode = PutMode::Update(UpdateVersion {
                    e_tag: Some(etag),
                    version: None,
                });
                let body = PutPayload::from(format!("{round}-{t}"));
                store.put_opts(&path, body, PutOptions::from(mode)).await
            }));
        }
        let mut won = Vec::new();
        for task in tasks {
            match task.await.unwrap() {
                Ok(result) => won.push(result.e_tag.unwrap()),
                Err(object_store::Error::Precondition { .. }) => {}
                Err(e) => panic!("unexpected error in round {round}: {e}"),
            }
        }
        assert_eq!(won.len(), 1, "round {round}: winners {won:?}");
        etag = won.pop().unwrap();
    }
    // If-Match on a missing key: S3 answers 404 NoSuchKey (not 412); object_store reports
    // any refused conditional update as Precondition.
    let missing = store
        .put_opts(
            &Path::from("cas/missing"),
            PutPayload::from_static(b"x"),
            PutOptions::from(PutMode::Update(UpdateVersion {
                e_tag: Some(etag.clone()),
                version: None,
            })),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(missing, object_store::Error::Precondition { .. })
            && missing.to_string().contains("NoSuchKey"),
        "{missing}"
    );
    let client = reqwest::Client::new();
    let raw = s3_call(
        &client,
        &s3,
        "PUT",
        &format!("/{BUCKET}/cas/missing"),
        &[],
        &[("if-match", &etag)],
        b"x".to_vec(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(raw.status, 404, "{}", raw.body);
    assert_eq!(xml_field(&raw.body, "Code").as_deref(), Some("NoSuchKey"));
    let raw = s3_call(
        &client,
        &s3,
        "PUT",
        &format!("/{BUCKET}/cas/counter"),
        &[],
        &[("if-match", "\"0123\"")],
        b"x".to_vec(),
        root_signer(&s3),
    )
    .await;
    assert_eq!(raw.status, 412, "{}", raw.body);
    assert_eq!(
        xml_field(&raw.body, "Code").as_deref(),
        Some("PreconditionFailed")
    );
}

/// Method, path, query, headers and body of a raw signed request.
type RawRequest = (
    String,
    String,
    Vec<(&'static str, String)>,
    Vec<(String, String)>,
    Vec<u8>,
);

/// Raw signed requests racing on one key: returns the statuses.
async fn race(s3: &Arc<local_s3::LocalS3>, requests: Vec<RawRequest>) -> Vec<u16> {
    let client = reqwest::Client::new();
    let barrier = Arc::new(Barrier::new(requests.len()));
    let (endpoint_key, secret) = (
        s3.root_access_key().to_owned(),
        s3.root_secret_key().to_owned(),
    );
    let mut tasks = Vec::new();
    for (method, path, query, headers, body) in requests {
        let (client, barrier, s3, ak, sk) = (
            client.clone(),
            barrier.clone(),
            s3.clone(),
            endpoint_key.clone(),
            secret.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let q: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let h: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            barrier.wait().await;
            s3_call(&client, &s3, &method, &path, &q, &h, body, (&ak, &sk, None))
                .await
                .status
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    statuses.sort_unstable();
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c25_raw_conditional_put_complete_and_copy_races_have_one_winner() {
    let s3 = Arc::new(common::start().await);
    let client = reqwest::Client::new();
    let none_match = || vec![("if-none-match".to_owned(), "*".to_owned())];
    for k in 0..KEYS {
        let requests = (0..THREADS)
            .map(|t| {
                (
                    "PUT".to_owned(),
                    format!("/{BUCKET}/raw/k{k}"),
                    vec![],
                    none_match(),
                    format!("{t}").into_bytes(),
                )
            })
            .collect();
        let statuses = race(&s3, requests).await;
        assert_eq!(
            statuses.iter().filter(|&&s| s == 200).count(),
            1,
            "key {k}: {statuses:?}"
        );
        assert!(
            statuses.iter().all(|&s| s == 200 || s == 412),
            "{statuses:?}"
        );
    }

    // CompleteMultipartUpload with If-None-Match: * from 8 uploads of one key.
    let mut completes = Vec::new();
    for t in 0..8 {
        let path = format!("/{BUCKET}/mpu/target");
        let created = s3_call(
            &client,
            &s3,
            "POST",
            &path,
            &[("uploads", "")],
            &[],
            Vec::new(),
            root_signer(&s3),
        )
        .await;
        let id = xml_field(&created.body, "UploadId").unwrap();
        let part = s3_call(
            &client,
            &s3,
            "PUT",
            &path,
            &[("partNumber", "1"), ("uploadId", &id)],
            &[],
            format!("upload {t}").into_bytes(),
            root_signer(&s3),
        )
        .await;
        assert_eq!(part.status, 200, "{}", part.body);
        let body = format!("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{}</ETag></Part></CompleteMultipartUpload>", part.etag.unwrap());
        completes.push((
            "POST".to_owned(),
            path,
            vec![("uploadId", id)],
            none_match(),
            body.into_bytes(),
        ));
    }
    let statuses = race(&s3, completes).await;
    assert_eq!(
        statuses.iter().filter(|&&s| s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|&s| s == 200 || s == 412),
        "{statuses:?}"
    );
    // The losers' uploads are still there (as on S3) and can be aborted.
    assert_eq!(s3.incomplete_uploads(None).len(), 7);

    // CopyObject with If-None-Match: * from 8 copies to one key.
    let copies = (0..8)
        .map(|_| {
            let mut headers = none_match();
            headers.push(("x-amz-copy-source".to_owned(), format!("/{BUCKET}/raw/k0")));
            (
                "PUT".to_owned(),
                format!("/{BUCKET}/copy/target"),
                vec![],
                headers,
                Vec::new(),
            )
        })
        .collect();
    let statuses = race(&s3, copies).await;
    assert_eq!(
        statuses.iter().filter(|&&s| s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|&s| s == 200 || s == 412),
        "{statuses:?}"
    );
}
