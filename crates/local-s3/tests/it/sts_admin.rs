//! STS AssumeRole and the admin JSON API over plain HTTP.

use crate::common;

use std::time::Duration;

use common::{error_text, http, start, store_for, sts_post, xml_field, BUCKET};
use local_s3::{KeyStats, TemporaryCredentials};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};
use reqwest::Method;
use serde_json::Value;

fn parse_assume_role(xml: &str) -> (TemporaryCredentials, String) {
    assert!(
        xml.starts_with("<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"),
        "{xml}"
    );
    let expiration = xml_field(xml, "Expiration").expect("Expiration");
    let parsed = chrono::DateTime::parse_from_rfc3339(&expiration).expect("ISO-8601 expiration");
    let creds = TemporaryCredentials {
        access_key_id: xml_field(xml, "AccessKeyId").unwrap(),
        secret_access_key: xml_field(xml, "SecretAccessKey").unwrap(),
        session_token: xml_field(xml, "SessionToken").unwrap(),
        expires_at_millis: parsed.timestamp_millis(),
    };
    (creds, expiration)
}

const ASSUME_ROLE: &str = "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo&RoleSessionName=test";

#[tokio::test]
async fn unsigned_assume_role_returns_working_credentials() {
    let s3 = start().await;
    let before = chrono::Utc::now().timestamp_millis();
    let (status, xml) = sts_post(&s3, &format!("{ASSUME_ROLE}&DurationSeconds=1"), None).await;
    assert_eq!(status, 200, "{xml}");
    let (creds, expiration) = parse_assume_role(&xml);
    // ISO-8601 UTC with milliseconds, e.g. 2025-01-02T03:04:05.678Z.
    assert_eq!(expiration.len(), 24, "{expiration}");
    assert!(
        expiration.ends_with('Z') && expiration.as_bytes()[19] == b'.',
        "{expiration}"
    );
    assert!(creds.expires_at_millis >= before + 1000 && creds.expires_at_millis <= before + 3000);
    assert!(
        xml.contains("<Arn>arn:aws:sts::000000000000:assumed-role/demo/test</Arn>"),
        "{xml}"
    );

    let store = store_for(&s3, BUCKET, &creds);
    store
        .put(&Path::from("sts.txt"), PutPayload::from_static(b"ok"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let err = store.get(&Path::from("sts.txt")).await.unwrap_err();
    assert!(
        error_text(&err).contains("ExpiredToken"),
        "{}",
        error_text(&err)
    );
    assert_eq!(
        s3.key_stats(&creds.access_key_id),
        KeyStats {
            accepted: 1,
            rejected: 1,
            expired: 1,
            ..KeyStats::default()
        }
    );
    // The unsigned STS call itself counts under the empty key.
    assert_eq!(s3.key_stats("").accepted, 1);
}

#[tokio::test]
async fn signed_assume_role_needs_the_root_key() {
    let s3 = start().await;
    let root = (
        s3.root_access_key().to_owned(),
        s3.root_secret_key().to_owned(),
    );
    let body = format!("{ASSUME_ROLE}&DurationSeconds=900&Scope=data%2Fsigned%2F");
    let (status, xml) = sts_post(&s3, &body, Some((&root.0, &root.1, None))).await;
    assert_eq!(status, 200, "{xml}");
    let (creds, _) = parse_assume_role(&xml);
    let store = store_for(&s3, BUCKET, &creds);
    store
        .put(&Path::from("signed/a"), PutPayload::from_static(b"1"))
        .await
        .unwrap();
    let err = store
        .put(&Path::from("elsewhere/a"), PutPayload::from_static(b"1"))
        .await
        .unwrap_err();
    assert!(error_text(&err).contains("AccessDenied"));
    assert_eq!(s3.key_stats(&root.0).accepted, 1);

    // Wrong root secret: signature check fails.
    let (status, xml) = sts_post(&s3, &body, Some((&root.0, "wrong", None))).await;
    assert_eq!(status, 403, "{xml}");
    assert!(xml.contains("SignatureDoesNotMatch"), "{xml}");
    // A temporary key may not assume roles.
    let (status, xml) = sts_post(
        &s3,
        &body,
        Some((
            &creds.access_key_id,
            &creds.secret_access_key,
            Some(&creds.session_token),
        )),
    )
    .await;
    assert_eq!(status, 403, "{xml}");
    assert!(xml.contains("AccessDenied"), "{xml}");
    assert_eq!(
        s3.key_stats(&root.0),
        KeyStats {
            accepted: 1,
            rejected: 1,
            ..KeyStats::default()
        }
    );
}

#[tokio::test]
async fn assume_role_rejects_bad_input() {
    let s3 = start().await;
    for (body, code) in [
        (
            "Action=GetCallerIdentity&Version=2011-06-15",
            "InvalidAction",
        ),
        (
            &*format!("{ASSUME_ROLE}&DurationSeconds=0"),
            "ValidationError",
        ),
        (
            &*format!("{ASSUME_ROLE}&DurationSeconds=abc"),
            "ValidationError",
        ),
        (
            &*format!("{ASSUME_ROLE}&Scope=NoSuch_Bucket%2Fx"),
            "ValidationError",
        ),
    ] {
        let (status, xml) = sts_post(&s3, body, None).await;
        assert_eq!(status, 400, "{body}: {xml}");
        assert_eq!(xml_field(&xml, "Code").as_deref(), Some(code), "{xml}");
    }
}

async fn admin(s3: &local_s3::LocalS3, method: Method, path: &str) -> (u16, Value) {
    let (status, body) = http(method, &format!("{}/_admin/{path}", s3.endpoint())).await;
    let value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&body).unwrap_or(Value::String(body))
    };
    (status, value)
}

#[tokio::test]
async fn admin_api_drives_the_endpoint() {
    let s3 = start().await;
    assert_eq!(
        admin(&s3, Method::GET, "health").await,
        (200, serde_json::json!({"status": "ok"}))
    );
    assert_eq!(
        admin(&s3, Method::POST, "buckets/made-by-admin").await.0,
        200
    );
    assert!(s3.data_dir().join("made-by-admin").is_dir());

    let before = chrono::Utc::now().timestamp_millis();
    let (status, json) = admin(
        &s3,
        Method::POST,
        "credentials?ttl_ms=3000&scope=made-by-admin/p/",
    )
    .await;
    assert_eq!(status, 200, "{json}");
    let expires = json["expires_at_millis"].as_i64().expect("number");
    assert!(
        expires >= before + 3000 && expires <= before + 5000,
        "{json}"
    );
    let creds = TemporaryCredentials {
        access_key_id: json["access_key_id"].as_str().unwrap().to_owned(),
        secret_access_key: json["secret_access_key"].as_str().unwrap().to_owned(),
        session_token: json["session_token"].as_str().unwrap().to_owned(),
        expires_at_millis: expires,
    };
    let store = store_for(&s3, "made-by-admin", &creds);
    store
        .put(&Path::from("p/x"), PutPayload::from_static(b"1"))
        .await
        .unwrap();
    assert!(store
        .put(&Path::from("q/x"), PutPayload::from_static(b"1"))
        .await
        .is_err());

    let (status, _) = admin(
        &s3,
        Method::POST,
        &format!("revoke?access_key_id={}", creds.access_key_id),
    )
    .await;
    assert_eq!(status, 204);
    assert!(store.get(&Path::from("p/x")).await.is_err());

    let (status, stats) = admin(&s3, Method::GET, "stats").await;
    assert_eq!(status, 200);
    assert_eq!(
        stats[&creds.access_key_id],
        serde_json::json!({"accepted": 1, "rejected": 2, "expired": 0, "invalid_key": 1, "bad_token": 0, "denied": 1})
    );
    let (status, requests) = admin(&s3, Method::GET, "requests").await;
    assert_eq!(status, 200);
    let requests = requests.as_array().unwrap();
    assert_eq!(
        requests.len(),
        3,
        "admin calls are not logged: {requests:?}"
    );
    // The user agent is whatever the test's client sends: present as a field, not compared.
    let mut last = requests[2].clone();
    assert!(last.as_object_mut().unwrap().remove("user_agent").is_some());
    assert_eq!(
        last,
        serde_json::json!({
            "access_key_id": creds.access_key_id, "method": "GET", "bucket": "made-by-admin", "key": "p/x",
            "accepted": false, "reason": "InvalidAccessKeyId", "status": 403
        })
    );
}

#[tokio::test]
async fn admin_api_rejects_bad_input() {
    let s3 = start().await;
    for (method, path, status) in [
        (Method::POST, "credentials?ttl_ms=abc", 400),
        (Method::POST, "credentials?ttl_ms=-5", 400),
        (
            Method::POST,
            "credentials?ttl_ms=99999999999999999999999",
            400,
        ),
        (Method::POST, "credentials?scope=%2Fx", 400),
        (Method::POST, "buckets/Bad_Name", 400),
        (Method::POST, "buckets/a..b", 400),
        (Method::POST, "revoke", 400),
        (
            Method::POST,
            &format!("revoke?access_key_id={}", s3.root_access_key()),
            400,
        ),
        (Method::GET, "credentials", 405),
        (Method::GET, "nope", 404),
        (Method::GET, "stats/extra", 404),
    ] {
        let (got, json) = admin(&s3, method, path).await;
        assert_eq!(got, status, "{path}: {json}");
        assert!(json["error"].is_string(), "{path}: {json}");
    }
    // Revoking an unknown key is accepted and harmless; ttl_ms=0 yields expired credentials.
    assert_eq!(
        admin(&s3, Method::POST, "revoke?access_key_id=ASIAUNKNOWN")
            .await
            .0,
        204
    );
    let (status, json) = admin(&s3, Method::POST, "credentials?ttl_ms=0").await;
    assert_eq!(status, 200);
    assert!(json["expires_at_millis"].as_i64().unwrap() <= chrono::Utc::now().timestamp_millis());
}

#[test]
fn serves_without_a_caller_runtime() {
    use std::io::{Read, Write};
    let s3 = local_s3::LocalS3::start_blocking(local_s3::LocalS3Config::default()).unwrap();
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", s3.port())).unwrap();
    conn.write_all(b"GET /_admin/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with(r#"{"status":"ok"}"#), "{response}");
    let dir = s3.data_dir().to_owned();
    assert!(dir.is_dir());
    drop(s3);
    assert!(!dir.exists(), "temporary data dir removed on drop");
}
