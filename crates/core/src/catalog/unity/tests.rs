//! Tests of the Unity Catalog provider: URLs and ids, the mapping of each cloud's credential,
//! expiration times, error bodies.

use super::credentials::{azure_account, map_credentials};
use super::wire::{unity_error_body, TemporaryCredentials, TEMPORARY_CREDENTIALS};
use super::*;
use crate::options::EXPIRES_AT_MILLIS;
use serde_json::json;
use std::time::Duration;

fn map(
    v: serde_json::Value,
    location: Option<&str>,
) -> std::result::Result<StorageOptions, (CatalogErrorKind, String)> {
    let answer: TemporaryCredentials =
        super::super::http::decode_object(v.to_string().as_bytes(), TEMPORARY_CREDENTIALS)?;
    map_credentials(answer, location)
}

#[test]
fn builds_api_urls_and_ids() {
    let p = UnityCatalogProvider::table("http://h:8080/", "main.sales.orders")
        .build()
        .unwrap();
    assert_eq!(
        p.endpoint(&["tables", "main.sales.orders"]).as_str(),
        "http://h:8080/api/2.1/unity-catalog/tables/main.sales.orders"
    );
    assert_eq!(
        p.provider_id(),
        "unity-catalog:http://h:8080:table=main.sales.orders:READ:auth=none"
    );
    // A URI that already ends with the API path is not extended.
    let p = UnityCatalogProvider::path("https://ws.example/api/2.1/unity-catalog", "s3://b/p")
        .operation(UnityOperation::ReadWrite)
        .bearer_token("tenant-token-0123456789")
        .build()
        .unwrap();
    assert_eq!(
        p.endpoint(&["temporary-path-credentials"]).as_str(),
        "https://ws.example/api/2.1/unity-catalog/temporary-path-credentials"
    );
    let id = p.provider_id();
    assert!(
        id.starts_with(
            "unity-catalog:https://ws.example/api/2.1/unity-catalog:path=s3://b/p:READ_WRITE:auth="
        ),
        "{id}"
    );
    let shown = format!("{id} {p:?}");
    assert!(!shown.contains("tenant-token"), "{shown}");
}

#[test]
fn bad_configuration_names_the_key() {
    let key = |b: UnityCatalogProviderBuilder| match b.build().unwrap_err() {
        Error::InvalidOption { key, .. } => key,
        other => panic!("{other:?}"),
    };
    assert_eq!(key(UnityCatalogProvider::table("ftp://h", "a.b.c")), "uri");
    assert_eq!(key(UnityCatalogProvider::table("http://h", "a.b")), "table");
    assert_eq!(
        key(UnityCatalogProvider::table("http://h", "a..c")),
        "table"
    );
    assert_eq!(key(UnityCatalogProvider::path("http://h", " ")), "path");
    assert_eq!(
        key(UnityCatalogProvider::builder(
            "http://h",
            UnityTarget::TableId(String::new())
        )),
        "table_id"
    );
    assert_eq!(
        key(UnityCatalogProvider::table("http://h", "a.b.c").timeout(Duration::ZERO)),
        "timeout"
    );
}

#[tokio::test]
async fn a_table_id_needs_no_lookup_and_a_path_has_no_table() {
    let p = UnityCatalogProvider::builder("http://h", UnityTarget::TableId("id-1".into()))
        .location("s3://b/t")
        .build()
        .unwrap();
    let t = p.table_info().await.unwrap();
    assert_eq!(
        (t.table_id.as_str(), t.storage_location.as_deref()),
        ("id-1", Some("s3://b/t"))
    );
    assert_eq!(p.storage_location().await.unwrap(), "s3://b/t");
    assert_eq!(p.table_calls(), 0);
    let p = UnityCatalogProvider::builder("http://h", UnityTarget::TableId("id-1".into()))
        .build()
        .unwrap();
    assert!(
        matches!(p.storage_location().await, Err(Error::InvalidOption { key, .. }) if key == "location")
    );
    let p = UnityCatalogProvider::path("http://h", "gs://b/p")
        .build()
        .unwrap();
    assert_eq!(p.storage_location().await.unwrap(), "gs://b/p");
    assert!(
        matches!(p.table_info().await, Err(Error::InvalidOption { key, .. }) if key == "table")
    );
}

#[test]
fn each_clouds_credential_is_mapped() {
    let o = map(
        json!({"aws_temp_credentials": {"access_key_id": "AK", "secret_access_key": "SK", "session_token": "ST"},
               "expiration_time": 1767225600000i64, "url": "s3://b/t"}),
        None,
    )
    .unwrap();
    assert_eq!(o["aws_access_key_id"], "AK");
    assert_eq!(o["aws_secret_access_key"], "SK");
    assert_eq!(o["aws_session_token"], "ST");
    assert_eq!(o[EXPIRES_AT_MILLIS], "1767225600000");
    assert_eq!(o.len(), 4);

    // Azure: the account from the answer's url, else the location; a leading '?' dropped.
    let o = map(
        json!({"azure_user_delegation_sas": {"sas_token": "?sv=2023&sig=x"}, "expiration_time": "1767225600000",
               "url": "abfss://c@acct.dfs.core.windows.net/t"}),
        Some("abfss://c@other.dfs.core.windows.net/t"),
    )
    .unwrap();
    assert_eq!(o["azure_storage_sas_token"], "sv=2023&sig=x");
    assert_eq!(o["azure_storage_account_name"], "acct");
    assert_eq!(o[EXPIRES_AT_MILLIS], "1767225600000");
    let o = map(
        json!({"azure_user_delegation_sas": {"sas_token": "sv=1"}}),
        Some("az://c/t"),
    )
    .unwrap();
    assert!(!o.contains_key("azure_storage_account_name") && !o.contains_key(EXPIRES_AT_MILLIS));

    let o = map(
        json!({"gcp_oauth_token": {"oauth_token": "ya29"}, "expiration_time": 5}),
        None,
    )
    .unwrap();
    assert_eq!(o["google_bearer_token"], "ya29");
    assert_eq!(o[EXPIRES_AT_MILLIS], "5");
    let o = map(
        json!({"azure_aad": {"aad_token": "eyJ"}, "url": "abfss://c@a1.dfs.core.windows.net/"}),
        None,
    )
    .unwrap();
    assert_eq!(
        (
            o["azure_storage_token"].as_str(),
            o["azure_storage_account_name"].as_str()
        ),
        ("eyJ", "a1")
    );
}

#[test]
fn bad_answers_name_the_field_never_the_value() {
    let cases = [
        (
            json!({"expiration_time": 1}),
            CatalogErrorKind::MissingField,
            "no credential",
        ),
        (
            json!({"aws_temp_credentials": {"secret_access_key": "SECRET-X"}}),
            CatalogErrorKind::MissingField,
            "'aws_temp_credentials' has no 'access_key_id'",
        ),
        (
            json!({"gcp_oauth_token": "SECRET-X"}),
            CatalogErrorKind::MalformedResponse,
            "'gcp_oauth_token' is a JSON string",
        ),
        (
            json!({"gcp_oauth_token": {"oauth_token": "SECRET-X"}, "expiration_time": "SECRET-X"}),
            CatalogErrorKind::MalformedResponse,
            "'expiration_time' is a string that is not a whole number",
        ),
        (
            json!({"gcp_oauth_token": {"oauth_token": "t"}, "expiration_time": -5}),
            CatalogErrorKind::MalformedResponse,
            "'expiration_time' is negative",
        ),
        (
            json!({"gcp_oauth_token": {"oauth_token": "t"}, "expiration_time": 1.5}),
            CatalogErrorKind::MalformedResponse,
            "'expiration_time' is not a whole number",
        ),
    ];
    for (body, kind, text) in cases {
        let e = map(body.clone(), None).unwrap_err();
        assert_eq!(e.0, kind, "{body}");
        assert!(e.1.contains(text), "{body}: {}", e.1);
        assert!(!e.1.contains("SECRET-X"), "{}", e.1);
    }
}

#[test]
fn azure_accounts_come_from_urls_that_name_them() {
    assert_eq!(
        azure_account("abfss://c@acct.dfs.core.windows.net/p").as_deref(),
        Some("acct")
    );
    assert_eq!(
        azure_account("wasbs://c@acct.blob.core.windows.net/p").as_deref(),
        Some("acct")
    );
    assert_eq!(
        azure_account("https://acct.blob.core.windows.net/c/p").as_deref(),
        Some("acct")
    );
    assert_eq!(azure_account("abfss://acct.dfs.core.windows.net/p"), None);
    assert_eq!(azure_account("az://c/p"), None);
    assert_eq!(azure_account("s3://b/p"), None);
}

#[test]
fn error_bodies_give_message_and_code() {
    let body = |v: serde_json::Value| unity_error_body(v.to_string().as_bytes());
    assert_eq!(
        body(
            json!({"error_code": "TABLE_NOT_FOUND", "message": "Table not found: a.b.c", "details": []})
        ),
        (
            Some("Table not found: a.b.c".into()),
            Some("TABLE_NOT_FOUND".into())
        )
    );
    assert_eq!(
        body(json!({"code": 5, "message": "not found"})),
        (Some("not found".into()), Some("5".into()))
    );
    assert_eq!(body(json!(["x"])), (None, None));
    assert_eq!(unity_error_body(b"not json"), (None, None));
}

#[test]
fn operations_parse_and_spell() {
    assert_eq!(
        UnityOperation::parse("read_write"),
        Some(UnityOperation::ReadWrite)
    );
    assert_eq!(UnityOperation::parse("READ"), Some(UnityOperation::Read));
    assert_eq!(UnityOperation::parse("WRITE"), None);
    assert_eq!(
        UnityOperation::ReadWrite.path_operation(),
        "PATH_READ_WRITE"
    );
    assert_eq!(UnityOperation::Read.table_operation(), "READ");
}

#[test]
fn a_spec_builds_the_provider_and_hides_secrets() {
    use crate::catalog::spec::{CatalogSpec, UNITY_CATALOG};
    use std::collections::BTreeMap;
    let spec = |pairs: &[(&str, &str)]| {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CatalogSpec::parse(UNITY_CATALOG, &m)
    };
    let s = spec(&[
        ("uri", "http://h:8080"),
        ("table", "main.sales.orders"),
        ("operation", "READ_WRITE"),
        ("bearer_token", "uc-secret-token-0123"),
    ])
    .unwrap();
    assert_eq!(s.kind(), UNITY_CATALOG);
    let id = s.provider_id().unwrap();
    assert!(
        id.starts_with("unity-catalog:http://h:8080:table=main.sales.orders:READ_WRITE:auth="),
        "{id}"
    );
    assert!(!format!("{id} {s:?}").contains("uc-secret-token"));
    let p = s.unity_provider().unwrap();
    assert_eq!(p.operation(), UnityOperation::ReadWrite);
    let s = spec(&[
        ("uri", "http://h"),
        ("table_id", "u-1"),
        ("location", "s3://b/t"),
    ])
    .unwrap();
    assert_eq!(
        s.unity_provider().unwrap().target(),
        &UnityTarget::TableId("u-1".into())
    );
    assert!(s.lance_provider().is_err());
    let key = |r: Result<CatalogSpec>| match r.unwrap_err() {
        Error::InvalidOption { key, message } => {
            assert!(!message.contains("uc-secret"), "{message}");
            key
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(key(spec(&[("uri", "http://h")])), "table");
    assert_eq!(
        key(spec(&[
            ("uri", "http://h"),
            ("table", "a.b.c"),
            ("path", "s3://b/")
        ])),
        "path"
    );
    let s = spec(&[("uri", "http://h"), ("table", "a.b.c"), ("table_id", "u-2")]).unwrap();
    let p = s.unity_provider().unwrap();
    assert_eq!(p.target(), &UnityTarget::TableId("u-2".into()));
    assert_eq!(p.target_text(), "table 'a.b.c' (id u-2)");
    assert_eq!(
        key(spec(&[
            ("uri", "http://h"),
            ("path", "s3://b/"),
            ("operation", "uc-secret")
        ])),
        "operation"
    );
    assert_eq!(
        key(spec(&[
            ("uri", "http://h"),
            ("path", "s3://b/"),
            ("namespace", "x")
        ])),
        "namespace"
    );
    assert_eq!(key(spec(&[("table", "a.b.c")])), "uri");
}
