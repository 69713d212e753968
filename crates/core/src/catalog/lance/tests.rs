//! Tests of the Lance Namespace provider: URLs, request and answer bodies, error bodies.

use super::*;
use serde_json::json;

#[test]
fn builds_the_describe_url_with_the_delimiter() {
    let p = LanceNamespaceProvider::builder("http://127.0.0.1:2333/base/", ["db", "my table"])
        .build()
        .unwrap();
    assert_eq!(
        p.describe_url.as_str(),
        "http://127.0.0.1:2333/base/v1/table/db$my%20table/describe"
    );
    let p = LanceNamespaceProvider::builder("http://h:1", ["a", "b", "c"])
        .delimiter(".")
        .build()
        .unwrap();
    assert_eq!(
        p.describe_url.as_str(),
        "http://h:1/v1/table/a.b.c/describe"
    );
    assert_eq!(
        p.provider_id(),
        "lance-namespace:http://h:1:a.b.c:auth=none"
    );
}

#[test]
fn rejects_bad_configuration() {
    let err = |b: LanceNamespaceProviderBuilder| b.build().unwrap_err().to_string();
    assert!(err(LanceNamespaceProvider::builder("ftp://h", ["t"])).contains("endpoint"));
    assert!(err(LanceNamespaceProvider::builder("not a url", ["t"])).contains("endpoint"));
    assert!(err(LanceNamespaceProvider::builder(
        "http://h",
        Vec::<String>::new()
    ))
    .contains("table_id"));
    assert!(err(LanceNamespaceProvider::builder("http://h", ["a", ""])).contains("empty part"));
    assert!(err(LanceNamespaceProvider::builder("http://h", ["a$b"])).contains("delimiter"));
    assert!(
        err(LanceNamespaceProvider::builder("http://h", ["a"]).delimiter("")).contains("delimiter")
    );
    assert!(
        err(LanceNamespaceProvider::builder("http://h", ["a"]).timeout(Duration::ZERO))
            .contains("timeout")
    );
}

#[test]
fn provider_id_fingerprints_tokens_and_never_shows_them() {
    let a = LanceNamespaceProvider::builder("http://u:pw@h:1", ["db", "t"])
        .bearer_token("tenant-a-token")
        .build()
        .unwrap();
    let a2 = LanceNamespaceProvider::builder("http://h:1", ["db", "t"])
        .bearer_token("tenant-a-token")
        .build()
        .unwrap();
    let b = LanceNamespaceProvider::builder("http://h:1", ["db", "t"])
        .bearer_token("tenant-b-token")
        .build()
        .unwrap();
    assert_eq!(a.provider_id(), a2.provider_id());
    assert_ne!(a.provider_id(), b.provider_id());
    for p in [&a, &b] {
        let shown = format!("{} {:?}", p.provider_id(), p);
        assert!(!shown.contains("token") && !shown.contains("pw"), "{shown}");
        assert!(
            shown.contains("lance-namespace:http://h:1:db$t:auth="),
            "{shown}"
        );
    }
}

fn parse_description(
    body: serde_json::Value,
) -> std::result::Result<TableDescription, (CatalogErrorKind, String)> {
    let answer: DescribeTableResponse =
        super::super::http::decode_object(body.to_string().as_bytes(), RESPONSE)?;
    TableDescription::try_from(answer)
}

#[test]
fn parses_descriptions_and_error_bodies() {
    let d = parse_description(json!({
        "location": "s3://b/t.lance",
        "storage_options": {"aws_access_key_id": "AKIA", "expires_at_millis": "1767225600000", "n": 5, "z": null},
        "properties": {"other": ["ignored"]}
    }))
    .unwrap();
    assert_eq!(d.uri(), Some("s3://b/t.lance"));
    let o = d.storage_options.unwrap();
    assert_eq!(o["n"], "5");
    assert!(!o.contains_key("z"));
    let d = parse_description(json!({"location": "a", "table_uri": "s3://b/t"})).unwrap();
    assert_eq!(d.uri(), Some("s3://b/t"));
    assert!(d.storage_options.is_none());
    let e = parse_description(json!([])).unwrap_err();
    assert_eq!(e.0, CatalogErrorKind::MalformedResponse);
    assert!(e.1.contains("array"), "{}", e.1);
    let e = parse_description(json!({"storage_options": "secret-x"})).unwrap_err();
    assert!(
        e.1.contains("'storage_options' is a JSON string") && !e.1.contains("secret"),
        "{}",
        e.1
    );
    let e = parse_description(json!({"location": 5})).unwrap_err();
    assert_eq!(e.1, "'location' is a JSON number, expected a string");
    let e = parse_description(json!({"storage_options": {"k": {"v": "secret"}}})).unwrap_err();
    assert_eq!(
        e.1,
        "'storage_options.k' is a JSON object, expected a string"
    );
    let body = |v: serde_json::Value| lance_error_body(v.to_string().as_bytes());
    let (m, c) = body(json!({"error": "table id 'db$t'", "code": 4}));
    assert_eq!(
        (m.as_deref(), c.as_deref()),
        (Some("table id 'db$t'"), Some("4 TableNotFound"))
    );
    let (m, c) = body(json!({"error": "", "detail": "d", "code": "4"}));
    assert_eq!((m.as_deref(), c.as_deref()), (Some("d"), None));
    let (m, c) = body(json!({"error": {"nested": 1}, "code": 99}));
    assert_eq!((m.as_deref(), c.as_deref()), (None, Some("99")));
    assert_eq!(body(json!(["error", 4])), (None, None));
}

#[test]
fn the_request_is_the_spec_body() {
    let body = serde_json::to_value(DescribeTableRequest {
        id: vec!["db".into(), "t".into()],
        vend_credentials: true,
        with_table_uri: true,
    })
    .unwrap();
    assert_eq!(
        body,
        json!({"id": ["db", "t"], "vend_credentials": true, "with_table_uri": true})
    );
}
