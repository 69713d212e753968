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
    )
    .unwrap();
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
    )
    .unwrap();
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

fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

#[test]
fn refresh_endpoints_resolve_against_the_catalog_uri_as_a_directory() {
    let key = S3_REFRESH_ENDPOINT;
    for (base, endpoint, want) in [
        (
            "http://h:1/api/catalog",
            "v1/wh/namespaces/db/tables/t/credentials",
            "http://h:1/api/catalog/v1/wh/namespaces/db/tables/t/credentials",
        ),
        // A leading '/' still means "under the catalog URI" (Iceberg's resolveEndpoint).
        (
            "http://h:1/api/catalog/",
            "/v1/wh/namespaces/db/tables/t/credentials",
            "http://h:1/api/catalog/v1/wh/namespaces/db/tables/t/credentials",
        ),
        (
            "http://h:1",
            "/v1/x/credentials",
            "http://h:1/v1/x/credentials",
        ),
        (
            "http://h:1/api",
            "https://other:9/refresh?x=1",
            "https://other:9/refresh?x=1",
        ),
        ("http://h:1/api?q=1", "creds", "http://h:1/api/creds"),
    ] {
        let got = table::resolve_endpoint(Some(&url(base)), key, endpoint).unwrap();
        assert_eq!(got.as_str(), want, "{base} + {endpoint}");
    }
    for bad in ["", "  ", "ftp://h/x", "file:///etc/passwd"] {
        let e = table::resolve_endpoint(Some(&url("http://h:1/api")), key, bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{e}");
    }
}

#[test]
fn the_refresh_endpoint_of_the_locations_cloud_is_called_with_the_plan_id() {
    let config = [
        (S3_REFRESH_ENDPOINT, "v1/wh/s3-refresh"),
        (ADLS_REFRESH_ENDPOINT, "/v1/wh/adls-refresh"),
        (
            GCS_REFRESH_ENDPOINT,
            "https://gcs-refresh.example/v1/t/credentials",
        ),
    ];
    for (location, want) in [
        ("s3://b/t", "http://h:1/api/catalog/v1/wh/s3-refresh"),
        ("s3a://b/t", "http://h:1/api/catalog/v1/wh/s3-refresh"),
        (
            "abfss://c@acct.dfs.core.windows.net/t",
            "http://h:1/api/catalog/v1/wh/adls-refresh",
        ),
        ("gs://b/t", "https://gcs-refresh.example/v1/t/credentials"),
        // No endpoint key for this scheme: the standard loadCredentials path.
        (
            "file:///tmp/t",
            "http://h:1/api/catalog/v1/namespaces/db/tables/t/credentials",
        ),
    ] {
        let p = IcebergRestCredentialsProvider::builder(
            "http://h:1/api/catalog",
            ["db"],
            "t",
            location,
        )
        .load_table_config(config)
        .build()
        .unwrap();
        assert_eq!(p.credentials_url(), want, "{location}");
        let p = IcebergRestCredentialsProvider::builder(
            "http://h:1/api/catalog",
            ["db"],
            "t",
            location,
        )
        .load_table_config(config)
        .plan_id("plan 7/a")
        .build()
        .unwrap();
        assert_eq!(
            p.credentials_url(),
            format!("{want}?planId=plan+7%2Fa"),
            "{location}"
        );
        assert!(
            p.provider_id().ends_with(":plan=plan 7/a"),
            "{}",
            p.provider_id()
        );
    }
    let e = IcebergRestCredentialsProvider::builder("http://h:1/api", ["db"], "t", "s3://b/t")
        .load_table_config([(S3_REFRESH_ENDPOINT, "ftp://x/secret-path")])
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(S3_REFRESH_ENDPOINT) && !e.contains("secret-path"),
        "{e}"
    );
}

fn first(
    b: IcebergRestCredentialsProviderBuilder,
) -> Result<Option<(StorageOptions, Option<i64>)>> {
    let p = b.build()?;
    let first = p.first.lock().unwrap().clone();
    Ok(first)
}

#[test]
fn the_first_answer_comes_from_storage_credentials_else_the_config() {
    let b = || IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", "s3://b/wh/t");
    let (o, exp) = first(
        b().load_table_config([("s3.access-key-id", "FROM-CONFIG")])
            .storage_credential("s3://b/", [("s3.access-key-id", "BUCKET")])
            .storage_credential(
                "s3://b/wh/t",
                [
                    ("s3.access-key-id", "TABLE"),
                    ("s3.session-token-expires-at-ms", "1767225600000"),
                ],
            ),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        (o[AWS_ACCESS_KEY_ID].as_str(), exp),
        ("TABLE", Some(1_767_225_600_000))
    );
    let (o, exp) = first(b().load_table_config([
        ("s3.access-key-id", "FROM-CONFIG"),
        ("s3.endpoint", "http://x"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!((o[AWS_ACCESS_KEY_ID].as_str(), exp), ("FROM-CONFIG", None));
    assert!(first(b().load_table_config([("s3.endpoint", "http://x")]))
        .unwrap()
        .is_none());
    assert!(first(b()).unwrap().is_none());
    // No prefix covers the location: fails closed at build.
    let e = first(b().storage_credential("s3://b/wh/t1", [("s3.access-key-id", "T1")]))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("storage_credentials") && e.contains("s3://b/wh/t1"),
        "{e}"
    );
}

#[test]
fn a_malformed_expiry_names_its_key_never_its_value() {
    let b = |location: &str| {
        IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", location)
    };
    for (location, key) in [
        ("s3://b/t", "s3.session-token-expires-at-ms"),
        ("gs://b/t", "gcs.oauth2.token-expires-at"),
        (
            "abfss://c@acct.dfs.core.windows.net/t",
            "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
        ),
    ] {
        let config = [
            ("s3.access-key-id", "K"),
            ("gcs.oauth2.token", "ya29"),
            ("adls.sas-token.acct.dfs.core.windows.net", "sv=1"),
            (key, "SECRET-LOOKING-2026-01-01"),
        ];
        // In the loadTable config, in a storage credential, and in a refresh answer.
        let e1 = first(b(location).load_table_config(config))
            .unwrap_err()
            .to_string();
        let e2 = first(b(location).storage_credential(location, config))
            .unwrap_err()
            .to_string();
        let answer = json!({"storage-credentials": [{"prefix": location, "config": config
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect::<serde_json::Map<_, _>>()}]});
        let (kind, e3) = select_credentials(decode(&answer), location).unwrap_err();
        assert_eq!(kind, CatalogErrorKind::MalformedResponse);
        for e in [e1, e2, e3] {
            assert!(e.contains(&format!("'{key}'")), "{e}");
            assert!(!e.contains("SECRET-LOOKING"), "{e}");
        }
    }
    // Seconds instead of milliseconds are malformed too.
    let e = first(b("s3://b/t").load_table_config([
        ("s3.access-key-id", "K"),
        ("s3.session-token-expires-at-ms", "1767225600"),
    ]))
    .unwrap_err()
    .to_string();
    assert!(e.contains("s3.session-token-expires-at-ms"), "{e}");
}

#[test]
fn an_expired_first_answer_is_skipped_and_a_staged_table_is_in_the_id() {
    let p = IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", "s3://b/t")
        .storage_credential(
            "s3://b/",
            [
                ("s3.access-key-id", "OLD"),
                ("s3.session-token-expires-at-ms", "1767225600000"),
            ],
        )
        .staged(true)
        .build()
        .unwrap();
    assert!(p.take_first().is_none(), "expired in 2026-01-01");
    assert_eq!(
        p.provider_id(),
        "iceberg-rest:http://h:1::db.t:s3://b/t:auth=none:staged"
    );
    let shown = format!(
        "{p:?} {:?}",
        IcebergRestCredentialsProvider::builder("http://h:1", ["db"], "t", "s3://b/t")
            .storage_credential("s3://b/", [("s3.secret-access-key", "SECRET-V")])
            .load_table_config([("token", "TOKEN-V")])
    );
    assert!(
        !shown.contains("SECRET-V") && !shown.contains("TOKEN-V"),
        "{shown}"
    );
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn static_first_answer(expires_in_millis: i64) -> IcebergRestCredentialsProvider {
    IcebergRestCredentialsProvider::builder_for_location("", "s3://b/t")
        .storage_credential(
            "s3://b/",
            [
                ("s3.access-key-id", "K".to_string()),
                ("s3.secret-access-key", "S".to_string()),
                (
                    "s3.session-token-expires-at-ms",
                    (now_millis() + expires_in_millis).to_string(),
                ),
            ],
        )
        .build()
        .unwrap()
}

#[test]
fn a_first_answer_the_store_would_refuse_is_skipped() {
    let min = crate::refresh::RefreshConfig::default().min_remaining;
    let min = i64::try_from(min.as_millis()).unwrap();
    // Expired, and within the minimum remaining lifetime: not served (the catalog is called).
    for expires_in in [-1_000, 0, min / 2, min] {
        assert!(
            static_first_answer(expires_in).take_first().is_none(),
            "{expires_in}"
        );
    }
    // Comfortably beyond it: served, once.
    let p = static_first_answer(min + 60_000);
    assert_eq!(p.take_first().unwrap()[AWS_ACCESS_KEY_ID], "K");
    assert!(p.take_first().is_none());
}

#[test]
fn a_spec_without_namespace_and_table_names_the_location_and_endpoint() {
    let spec = crate::catalog::CatalogSpec::parse(
        "iceberg-rest",
        [
            ("location", "s3://b/wh/t"),
            (
                "config.client.refresh-credentials-endpoint",
                "http://h:1/v1/namespaces/db/tables/t/credentials",
            ),
        ],
    )
    .unwrap();
    let p = spec.iceberg_provider().unwrap();
    assert_eq!(
        p.credentials_url(),
        "http://h:1/v1/namespaces/db/tables/t/credentials"
    );
    assert_eq!(
        p.provider_id(),
        "iceberg-rest:::endpoint=http://h:1/v1/namespaces/db/tables/t/credentials:s3://b/wh/t:auth=none"
    );
    // Only one of the two is still an error naming the other.
    let e = crate::catalog::CatalogSpec::parse(
        "iceberg-rest",
        [
            ("uri", "http://h:1"),
            ("location", "s3://b/t"),
            ("table", "t"),
        ],
    )
    .unwrap_err();
    assert!(e.to_string().contains("'namespace'"), "{e}");
}
