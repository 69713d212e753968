//! Tests of catalog specs: parsing, errors that never quote a secret, provider building.

use super::*;
use crate::catalog::DEFAULT_CATALOG_TIMEOUT;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};

const TOKEN: &str = "spec-secret-token-0123";
const API_KEY: &str = "spec-secret-api-key-4567";

fn lance(extra: &[(&str, &str)]) -> Result<CatalogSpec> {
    let mut map: HashMap<String, String> = HashMap::from([
        ("endpoint".into(), "http://127.0.0.1:2333".into()),
        ("table_id".into(), "db$orders".into()),
    ]);
    for (k, v) in extra {
        map.insert(k.to_string(), v.to_string());
    }
    CatalogSpec::parse(LANCE_NAMESPACE, &map)
}

fn iceberg(extra: &[(&str, &str)]) -> Result<CatalogSpec> {
    let mut map: BTreeMap<String, String> = BTreeMap::from([
        ("uri".into(), "http://127.0.0.1:8181/api/catalog".into()),
        ("namespace".into(), "db".into()),
        ("table".into(), "orders".into()),
        ("location".into(), "s3://wh/db/orders".into()),
    ]);
    for (k, v) in extra {
        map.insert(k.to_string(), v.to_string());
    }
    CatalogSpec::parse(ICEBERG_REST, &map)
}

/// The error text, checked to contain no secret, neither in Display nor in Debug.
fn err(r: Result<CatalogSpec>) -> String {
    let e = r.unwrap_err();
    let text = format!("{e} {e:?}");
    for secret in [TOKEN, API_KEY] {
        assert!(!text.contains(secret), "leaked: {text}");
    }
    assert!(matches!(e, Error::InvalidOption { .. }), "{e:?}");
    e.to_string()
}

#[test]
fn lance_spec_with_defaults() {
    let spec = lance(&[]).unwrap();
    assert_eq!(
        spec,
        CatalogSpec::Lance {
            endpoint: "http://127.0.0.1:2333".into(),
            table_id: vec!["db".into(), "orders".into()],
            delimiter: "$".into(),
            headers: vec![],
            timeout: DEFAULT_CATALOG_TIMEOUT,
        }
    );
    assert_eq!(spec.kind(), LANCE_NAMESPACE);
    assert_eq!(
        spec.provider_id().unwrap(),
        "lance-namespace:http://127.0.0.1:2333:db$orders:auth=none"
    );
    assert_eq!(
        spec.provider_id().unwrap(),
        spec.provider().unwrap().provider_id()
    );
}

#[test]
fn lance_spec_with_every_key() {
    let spec = lance(&[
        ("table_id", "a.b.c"),
        ("delimiter", "."),
        ("timeout_millis", "1500"),
        ("bearer_token", TOKEN),
        ("header.x-api-key", API_KEY),
    ])
    .unwrap();
    let CatalogSpec::Lance {
        table_id,
        delimiter,
        headers,
        timeout,
        ..
    } = &spec
    else {
        panic!("{spec:?}")
    };
    assert_eq!(table_id, &["a", "b", "c"]);
    assert_eq!(delimiter, ".");
    assert_eq!(*timeout, Duration::from_millis(1500));
    assert!(headers.contains(&("x-api-key".into(), API_KEY.into())));
    assert!(headers.contains(&("Authorization".into(), format!("Bearer {TOKEN}"))));
    let p = spec.lance_provider().unwrap();
    assert_eq!(p.table_id(), ["a", "b", "c"]);
    let id = spec.provider_id().unwrap();
    assert!(id.starts_with("lance-namespace:http://127.0.0.1:2333:a.b.c:auth="));
    assert!(!id.ends_with("auth=none"));
    // Equal specs, equal ids; another token, another id.
    assert_eq!(
        id,
        lance(&[
            ("table_id", "a.b.c"),
            ("delimiter", "."),
            ("timeout_millis", "1500"),
            ("bearer_token", TOKEN),
            ("header.x-api-key", API_KEY)
        ])
        .unwrap()
        .provider_id()
        .unwrap()
    );
    assert_ne!(
        id,
        lance(&[
            ("table_id", "a.b.c"),
            ("delimiter", "."),
            ("bearer_token", "other")
        ])
        .unwrap()
        .provider_id()
        .unwrap()
    );
    let shown = format!("{spec:?} {id} {p:?}");
    for secret in [TOKEN, API_KEY] {
        assert!(!shown.contains(secret), "leaked: {shown}");
    }
    assert!(
        shown.contains("x-api-key") && shown.contains("Authorization"),
        "{shown}"
    );
}

#[test]
fn iceberg_spec_with_defaults_and_every_key() {
    let spec = iceberg(&[]).unwrap();
    assert_eq!(
        spec,
        CatalogSpec::Iceberg {
            uri: "http://127.0.0.1:8181/api/catalog".into(),
            prefix: None,
            namespace: vec!["db".into()],
            table: "orders".into(),
            location: "s3://wh/db/orders".into(),
            separator: "\u{1f}".into(),
            headers: vec![],
            timeout: DEFAULT_CATALOG_TIMEOUT,
            vended: Default::default(),
        }
    );
    assert_eq!(spec.kind(), ICEBERG_REST);
    assert_eq!(
        spec.provider_id().unwrap(),
        "iceberg-rest:http://127.0.0.1:8181/api/catalog::db.orders:s3://wh/db/orders:auth=none"
    );
    let spec = iceberg(&[
        ("namespace", "a\u{1f}b"),
        ("prefix", "wh/main"),
        ("timeout_millis", "250"),
        ("bearer_token", TOKEN),
        ("header.X-Iceberg-Access-Delegation", "vended-credentials"),
    ])
    .unwrap();
    let p = spec.iceberg_provider().unwrap();
    assert_eq!(
        p.credentials_url(),
        "http://127.0.0.1:8181/api/catalog/v1/wh/main/namespaces/a%1Fb/tables/orders/credentials"
    );
    let spec = iceberg(&[("namespace", "a.b"), ("namespace_separator", ".")]).unwrap();
    let CatalogSpec::Iceberg {
        namespace,
        separator,
        ..
    } = &spec
    else {
        panic!("{spec:?}")
    };
    assert_eq!(
        (namespace.as_slice(), separator.as_str()),
        (&["a".to_string(), "b".to_string()][..], ".")
    );
    assert_eq!(
        spec.iceberg_provider().unwrap().credentials_url(),
        "http://127.0.0.1:8181/api/catalog/v1/namespaces/a.b/tables/orders/credentials"
    );
    // An empty prefix is none.
    let spec = iceberg(&[("prefix", "")]).unwrap();
    assert!(matches!(spec, CatalogSpec::Iceberg { prefix: None, .. }));
}

#[test]
fn unknown_kinds_and_keys_are_named_without_values() {
    let e = err(CatalogSpec::parse("unity", [("endpoint", "x")]));
    assert!(e.contains("'kind'") && e.contains("unity"), "{e}");
    let e = err(lance(&[("bearer-token", TOKEN)]));
    assert!(e.contains("unknown key 'bearer-token'"), "{e}");
    // A key of the other kind is unknown too.
    let e = err(lance(&[("uri", TOKEN)]));
    assert!(e.contains("unknown key 'uri'"), "{e}");
    let e = err(iceberg(&[("delimiter", API_KEY)]));
    assert!(e.contains("unknown key 'delimiter'"), "{e}");
    let e = err(CatalogSpec::parse(
        LANCE_NAMESPACE,
        [
            ("endpoint", "http://h"),
            ("table_id", "t"),
            ("table_id", "u"),
        ],
    ));
    assert!(
        e.contains("'table_id'") && e.contains("more than once"),
        "{e}"
    );
}

#[test]
fn required_keys_are_named() {
    for missing in ["endpoint", "table_id"] {
        let map: BTreeMap<&str, &str> = [("endpoint", "http://h"), ("table_id", "t")]
            .into_iter()
            .filter(|(k, _)| *k != missing)
            .collect();
        let e = err(CatalogSpec::parse(LANCE_NAMESPACE, map));
        assert!(e.contains(&format!("needs '{missing}'")), "{e}");
    }
    for missing in ["uri", "namespace", "table", "location"] {
        let map: BTreeMap<&str, &str> = [
            ("uri", "http://h"),
            ("namespace", "db"),
            ("table", "t"),
            ("location", "s3://b/t"),
        ]
        .into_iter()
        .filter(|(k, _)| *k != missing)
        .collect();
        let e = err(CatalogSpec::parse(ICEBERG_REST, map));
        assert!(e.contains(&format!("needs '{missing}'")), "{e}");
    }
}

#[test]
fn bad_values_are_named_without_secrets() {
    for bad in ["0", "-5", "1.5", "soon", TOKEN] {
        let e = err(lance(&[("timeout_millis", bad), ("bearer_token", TOKEN)]));
        assert!(
            e.contains("timeout_millis") && e.contains("positive"),
            "{e}"
        );
    }
    let e = err(lance(&[("delimiter", "")]));
    assert!(e.contains("'delimiter'"), "{e}");
    let e = err(iceberg(&[("namespace_separator", "")]));
    assert!(e.contains("'namespace_separator'"), "{e}");
    let e = err(lance(&[("header.", API_KEY)]));
    assert!(e.contains("'header.'") && e.contains("name"), "{e}");
    let e = err(lance(&[
        ("header.X-Key", API_KEY),
        ("header.x-key", API_KEY),
    ]));
    assert!(e.contains("more than once"), "{e}");
    let e = err(lance(&[
        ("bearer_token", TOKEN),
        ("header.authorization", &format!("Bearer {API_KEY}")),
    ]));
    assert!(e.contains("bearer_token") && e.contains("not both"), "{e}");
    let e = err(lance(&[("bearer_token", " ")]));
    assert!(e.contains("bearer_token"), "{e}");
}

#[test]
fn builder_errors_surface_from_provider_without_secrets() {
    // parse checks keys; the builder checks values.
    let spec = lance(&[("endpoint", "ftp://h"), ("bearer_token", TOKEN)]).unwrap();
    let e = spec.provider().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("endpoint") && !e.contains(TOKEN), "{e}");
    let spec = lance(&[("table_id", "db$$t")]).unwrap();
    let e = spec.provider_id().unwrap_err().to_string();
    assert!(e.contains("empty part"), "{e}");
    let spec = lance(&[("header.X-Key", &format!("line\n{API_KEY}"))]).unwrap();
    let e = spec.provider().map(|_| ()).unwrap_err();
    let text = format!("{e} {e:?}");
    assert!(text.contains("X-Key") && !text.contains(API_KEY), "{text}");
    let spec = iceberg(&[("location", " ")]).unwrap();
    assert!(spec
        .provider_id()
        .unwrap_err()
        .to_string()
        .contains("location"));
    // The wrong kind for a kind-specific builder.
    let e = iceberg(&[])
        .unwrap()
        .lance_provider()
        .unwrap_err()
        .to_string();
    assert!(e.contains("'kind'") && e.contains(LANCE_NAMESPACE), "{e}");
    let e = lance(&[])
        .unwrap()
        .iceberg_provider()
        .unwrap_err()
        .to_string();
    assert!(e.contains("'kind'") && e.contains(ICEBERG_REST), "{e}");
}

#[test]
fn iceberg_spec_carries_the_load_table_answer_plan_id_and_staged_flag() {
    let spec = iceberg(&[
        (
            "config.client.refresh-credentials-endpoint",
            "v1/wh/refresh",
        ),
        ("config.s3.access-key-id", "FROM-CONFIG"),
        ("storage_credential.1.prefix", "s3://wh/db/orders"),
        ("storage_credential.1.config.s3.access-key-id", "TABLE"),
        ("storage_credential.1.config.s3.secret-access-key", TOKEN),
        ("storage_credential.0.prefix", "s3://wh/"),
        ("storage_credential.0.config.s3.access-key-id", "WAREHOUSE"),
        ("plan_id", "p1"),
        ("staged", "true"),
    ])
    .unwrap();
    let CatalogSpec::Iceberg { vended, .. } = &spec else {
        panic!("{spec:?}")
    };
    assert_eq!(
        vended.config["client.refresh-credentials-endpoint"],
        "v1/wh/refresh"
    );
    let prefixes: Vec<&str> = vended
        .storage_credentials
        .iter()
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(prefixes, ["s3://wh/", "s3://wh/db/orders"]);
    assert_eq!(vended.storage_credentials[1].1["s3.access-key-id"], "TABLE");
    assert_eq!(
        (vended.plan_id.as_deref(), vended.staged),
        (Some("p1"), true)
    );
    assert!(!format!("{spec:?}").contains(TOKEN));
    let p = spec.iceberg_provider().unwrap();
    assert_eq!(
        p.credentials_url(),
        "http://127.0.0.1:8181/api/catalog/v1/wh/refresh?planId=p1"
    );
    assert!(spec.provider_id().unwrap().ends_with(":plan=p1:staged"));
    for (key, value, needle) in [
        (
            "storage_credential.0.config.k",
            "v",
            "storage_credential.0.prefix",
        ),
        (
            "storage_credential.x.prefix",
            "s3://a",
            "storage_credential.x.prefix",
        ),
        (
            "storage_credential.0.secret",
            TOKEN,
            "storage_credential.0.secret",
        ),
        ("config.", TOKEN, "'config.'"),
        ("staged", "yes", "staged"),
    ] {
        let e = err(iceberg(&[(key, value)]));
        assert!(e.contains(needle), "{key}: {e}");
    }
}

#[test]
fn access_mode_sets_the_unity_operation_and_must_agree_with_an_explicit_one() {
    let unity = |extra: &[(&str, &str)]| {
        let mut map = BTreeMap::from([
            ("uri".to_string(), "http://127.0.0.1:8080".to_string()),
            ("table".to_string(), "main.sales.orders".to_string()),
        ]);
        for (k, v) in extra {
            map.insert(k.to_string(), v.to_string());
        }
        CatalogSpec::parse(UNITY_CATALOG, &map)
    };
    let operation = |spec: CatalogSpec| match spec {
        CatalogSpec::Unity { operation, .. } => operation,
        other => panic!("not a Unity spec: {other:?}"),
    };
    assert_eq!(operation(unity(&[]).unwrap()), UnityOperation::Read);
    assert_eq!(
        operation(unity(&[("access_mode", "read")]).unwrap()),
        UnityOperation::Read
    );
    assert_eq!(
        operation(unity(&[("access_mode", "read_write")]).unwrap()),
        UnityOperation::ReadWrite
    );
    assert_eq!(
        operation(unity(&[("access_mode", "READ-WRITE"), ("operation", "READ_WRITE")]).unwrap()),
        UnityOperation::ReadWrite
    );
    let read = unity(&[("access_mode", "read")]).unwrap();
    let rw = unity(&[("access_mode", "read_write")]).unwrap();
    assert_ne!(
        read.provider_id().unwrap(),
        rw.provider_id().unwrap(),
        "the two modes are two credential sources"
    );
    let e = unity(&[("access_mode", "read"), ("operation", "READ_WRITE")]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "operation"),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains("operation READ_WRITE does not agree with access_mode read"),
        "{text}"
    );
    let e = unity(&[("access_mode", "write")]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidOption { key, .. } if key == "access_mode"),
        "{e:?}"
    );
    // The other kinds check the value and have no parameter to pass it to.
    assert_eq!(
        lance(&[("access_mode", "read")]).unwrap(),
        lance(&[]).unwrap()
    );
    assert_eq!(
        iceberg(&[("access_mode", "read_write")]).unwrap(),
        iceberg(&[]).unwrap()
    );
    assert!(lance(&[("access_mode", "rw")]).is_err());
}
