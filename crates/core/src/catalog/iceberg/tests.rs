//! Tests of the Iceberg REST provider: URLs, the choice and mapping of the storage credential,
//! error bodies.

use super::credentials::map_config;
use super::*;
use crate::catalog::CatalogErrorKind;
use crate::options::EXPIRES_AT_MILLIS;
use serde_json::json;

fn decode(v: &serde_json::Value) -> LoadCredentialsResponse {
    super::super::http::decode_object(v.to_string().as_bytes(), RESPONSE).unwrap()
}

#[test]
fn a_bad_config_of_an_entry_that_is_not_chosen_is_ignored() {
    let answer = json!({"storage-credentials": [
        {"prefix": "s3://other/", "config": "not-an-object"},
        {"prefix": "s3://b/", "config": {"s3.access-key-id": "K"}}
    ]});
    let o = select_credentials(decode(&answer), "s3://b/t").unwrap();
    assert_eq!(o[AWS_ACCESS_KEY_ID], "K");
}

#[test]
fn builds_the_credentials_url() {
    let p = IcebergRestCredentialsProvider::builder(
        "http://h:1/api/catalog/",
        ["a", "b c"],
        "t",
        "s3://b/t",
    )
    .prefix("wh/main")
    .build()
    .unwrap();
    assert_eq!(
        p.credentials_url(),
        "http://h:1/api/catalog/v1/wh/main/namespaces/a%1Fb%20c/tables/t/credentials"
    );
    let p = IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", "s3://b/t")
        .build()
        .unwrap();
    assert_eq!(
        p.credentials_url(),
        "http://h:1/v1/namespaces/db/tables/t/credentials"
    );
    assert_eq!(
        p.provider_id(),
        "iceberg-rest:http://h:1::db.t:s3://b/t:auth=none"
    );
}

#[test]
fn longest_matching_prefix_wins_and_keys_are_mapped() {
    let answer = json!({"storage-credentials": [
        {"prefix": "s3://b/", "config": {"s3.access-key-id": "short"}},
        {"prefix": "s3://b/wh/db/orders", "config": {
            "s3.access-key-id": "long", "s3.secret-access-key": "s", "s3.session-token": "tok",
            "s3.session-token-expires-at-ms": "1767225600000", "s3.endpoint": "http://ignored"}},
        {"prefix": "s3://b/wh/db/orders_v2", "config": {"s3.access-key-id": "other-table"}},
        {"prefix": "s3://b/wh", "config": {"s3.access-key-id": "mid"}}
    ]});
    let o = select_credentials(decode(&answer), "s3a://b/wh/db/orders").unwrap();
    assert_eq!(o[AWS_ACCESS_KEY_ID], "long");
    assert_eq!(o[AWS_SESSION_TOKEN], "tok");
    assert_eq!(o[EXPIRES_AT_MILLIS], "1767225600000");
    assert!(!o.contains_key("aws_endpoint") && !o.contains_key("s3.endpoint"));
    let e = select_credentials(decode(&answer), "s3://other/x").unwrap_err();
    assert_eq!(e.0, CatalogErrorKind::MissingField);
    assert!(
        e.1.contains("s3://b/wh") && e.1.contains("s3://other/x"),
        "{}",
        e.1
    );
}

#[test]
fn a_prefix_covers_whole_path_segments_only() {
    let answer = json!({"storage-credentials": [
        {"prefix": "s3://b/wh/t1", "config": {"s3.access-key-id": "t1"}},
        {"prefix": "s3://b/wh/", "config": {"s3.access-key-id": "warehouse"}}
    ]});
    for (location, key) in [
        ("s3://b/wh/t1", "t1"),
        ("s3://b/wh/t1/", "t1"),
        ("s3n://b/wh/t1/data/x.parquet", "t1"),
        ("s3://b/wh/t10", "warehouse"),
        ("s3://b/wh/t1_v2/data", "warehouse"),
    ] {
        let o = select_credentials(decode(&answer), location).unwrap();
        assert_eq!(o[AWS_ACCESS_KEY_ID], key, "{location}");
    }
    let only_t1 = json!({"storage-credentials": [
        {"prefix": "s3://b/wh/t1", "config": {"s3.access-key-id": "t1"}}
    ]});
    let e = select_credentials(decode(&only_t1), "s3://b/wh/t10").unwrap_err();
    assert_eq!(e.0, CatalogErrorKind::MissingField, "fails closed: {}", e.1);
}

#[test]
fn gcs_and_adls_keys_are_mapped() {
    let gcs = map_config(
        &[
            ("gcs.oauth2.token", "ya29"),
            ("gcs.oauth2.token-expires-at", "1767225600000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        "gs://b/t",
    );
    assert_eq!(gcs[GOOGLE_BEARER_TOKEN], "ya29");
    assert_eq!(gcs[EXPIRES_AT_MILLIS], "1767225600000");
    let adls = map_config(
        &[
            ("adls.sas-token.aaa.dfs.core.windows.net", "sv=a"),
            ("adls.sas-token.acct.dfs.core.windows.net", "sv=b"),
            (
                "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
                "1767225600000",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        "abfss://c@acct.dfs.core.windows.net/t",
    );
    assert_eq!(adls[AZURE_STORAGE_SAS_TOKEN], "sv=b");
    assert_eq!(adls[AZURE_STORAGE_ACCOUNT_NAME], "acct");
    assert_eq!(adls[EXPIRES_AT_MILLIS], "1767225600000");
}

#[test]
fn malformed_answers_are_named() {
    let malformed = CatalogErrorKind::MalformedResponse;
    let missing = CatalogErrorKind::MissingField;
    for (answer, needle, kind) in [
        (json!([]), "array", malformed),
        (json!({}), "no storage-credentials", missing),
        (
            json!({"storage-credentials": null}),
            "no storage-credentials",
            missing,
        ),
        (json!({"storage-credentials": []}), "empty", missing),
        (
            json!({"storage-credentials": {}}),
            "expected an array",
            malformed,
        ),
        (
            json!({"storage-credentials": [{"config": {}}]}),
            "prefix",
            malformed,
        ),
        (
            json!({"storage-credentials": ["secret-entry"]}),
            "[0] has no string 'prefix'",
            malformed,
        ),
        (
            json!({"storage-credentials": [{"prefix": "s3://b"}]}),
            "config",
            malformed,
        ),
        (
            json!({"storage-credentials": [{"prefix": "s3://b", "config": []}]}),
            "'config' is a JSON array",
            malformed,
        ),
        (
            json!({"storage-credentials": [{"prefix": "s3://b", "config": null}]}),
            "'config' is a JSON null",
            malformed,
        ),
        (
            json!({"storage-credentials": [{"prefix": "s3://b", "config": {"s3.secret-access-key": ["secret-v"]}}]}),
            "'config.s3.secret-access-key' is a JSON array",
            malformed,
        ),
    ] {
        let e = super::super::http::decode_object::<LoadCredentialsResponse>(
            answer.to_string().as_bytes(),
            RESPONSE,
        )
        .and_then(|a| select_credentials(a, "s3://b/t"))
        .unwrap_err();
        assert!(e.1.contains(needle), "{answer}: {}", e.1);
        assert_eq!(e.0, kind, "{answer}");
    }
    let body = |v: serde_json::Value| iceberg_error_body(v.to_string().as_bytes());
    assert_eq!(
        body(json!({"error": "plain text"})),
        (Some("plain text".into()), None)
    );
    assert_eq!(
        body(json!({"error": 5, "message": "top"})),
        (Some("top".into()), None)
    );
    assert_eq!(body(json!(["x"])), (None, None));
    let (m, t) = body(
        json!({"error": {"message": "Table does not exist: db.t", "type": "NoSuchTableException", "code": 404}}),
    );
    assert_eq!(
        (m.as_deref(), t.as_deref()),
        (
            Some("Table does not exist: db.t"),
            Some("NoSuchTableException")
        )
    );
}
