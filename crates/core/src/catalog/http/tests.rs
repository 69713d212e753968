//! Tests of the catalog HTTP client (scrubbing of header values, bounded quotes) and of
//! [`Json`](super::Json) decoding.

use super::*;

#[test]
fn scrub_removes_header_values_and_their_words() {
    let http = CatalogHttp::new(
        "Test",
        &[("Authorization".into(), "Bearer s3cr3t-token-value".into())],
        Duration::from_secs(1),
    )
    .unwrap();
    assert_eq!(
        http.scrub("bad token s3cr3t-token-value!"),
        "bad token ***!"
    );
    assert_eq!(http.scrub("got 'Bearer s3cr3t-token-value'"), "got '***'");
    assert!(!format!("{http:?}").contains("s3cr3t"));
}

#[test]
fn json_shapes_name_types_never_values() {
    #[derive(serde::Deserialize)]
    struct T {
        #[serde(default)]
        a: Scalar,
        #[serde(default)]
        m: Json<ScalarMap>,
    }
    let t: T = decode_object(
        br#"{"a": 5, "m": {"k": "v", "n": 1.5, "b": true, "z": null}}"#,
        "T",
    )
    .unwrap();
    assert_eq!(t.a.text().as_deref(), Some("5"));
    let m = t.m.string_map("m").unwrap().unwrap();
    assert_eq!(
        (m["k"].as_str(), m["n"].as_str(), m["b"].as_str()),
        ("v", "1.5", "true")
    );
    assert!(!m.contains_key("z"));
    let t: T = decode_object(br#"{"a": "secret-a", "m": "secret-m"}"#, "T").unwrap();
    assert_eq!(t.a.kind(), "string");
    let e = t.m.string_map("m").unwrap_err();
    assert!(
        e.contains("'m' is a JSON string") && !e.contains("secret"),
        "{e}"
    );
    let t: T = decode_object(br#"{"m": {"k": ["secret-k"]}}"#, "T").unwrap();
    let e = t.m.string_map("m").unwrap_err();
    assert!(
        e.contains("'m.k' is a JSON array") && !e.contains("secret"),
        "{e}"
    );
    for (body, needle) in [
        (&b"[1]"[..], "is a JSON array, expected T"),
        (b"  ", "empty"),
        (b"{\"a\": \"secret-x", "not valid JSON"),
        (b"{\"a\": 1, \"a\": 2}", "not a valid T"),
    ] {
        let (kind, m) = decode_object::<T>(body, "T").map(|_| ()).unwrap_err();
        assert_eq!(kind, CatalogErrorKind::MalformedResponse);
        assert!(m.contains(needle) && !m.contains("secret"), "{m}");
    }
    assert!(decode_error_body::<T>(b"[\"x\"]").is_none());
    assert!(decode_error_body::<T>(b"not json").is_none());
}

#[test]
fn bad_headers_are_named_without_their_value() {
    let e = CatalogHttp::new(
        "Test",
        &[("X-Key".into(), "line\nbreak-secret".into())],
        Duration::from_secs(1),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("X-Key") && !text.contains("break-secret"),
        "{text}"
    );
    let e = CatalogHttp::new(
        "Test",
        &[("bad name".into(), "v".into())],
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(e.to_string().contains("\"bad name\""), "{e}");
}
