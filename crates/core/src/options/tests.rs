//! Tests of the storage option helpers.

use super::*;

const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
const AWS_SESSION_TOKEN: &str = "aws_session_token";
const AWS_REGION: &str = "aws_region";
const AWS_ENDPOINT: &str = "aws_endpoint";

fn err_text(v: &str) -> String {
    parse_expires_at_millis(v).unwrap_err().to_string()
}

#[test]
fn c07_bad_expires_at_millis_values_are_clear_errors() {
    for v in [
        "1767225600",
        "2026-01-01T00:00:00Z",
        "abc",
        "-1",
        "9223372036854775807",
        "",
        "99999999999999999999",
        "1.5e12",
    ] {
        let text = err_text(v);
        assert!(text.contains("expires_at_millis"), "{text}");
    }
    assert!(err_text("1767225600").contains("seconds"));
    assert!(err_text("-1").contains("negative"));
    assert!(err_text("abc").contains("\"abc\""));
    assert!(err_text("9223372036854775807").contains("9999"));
    assert!(err_text("99999999999999999999").contains("out of range"));
    assert_eq!(
        parse_expires_at_millis("1767225600000").unwrap(),
        1_767_225_600_000
    );
    assert_eq!(
        parse_expires_at_millis(" 1767225600000 ").unwrap(),
        1_767_225_600_000
    );
}

#[test]
fn secret_keys_are_recognised() {
    assert!(is_secret_key(AWS_SECRET_ACCESS_KEY));
    assert!(is_secret_key(AWS_SESSION_TOKEN));
    assert!(is_secret_key("azure_storage_sas_key"));
    assert!(is_secret_key("google_service_account_key"));
    assert!(!is_secret_key(AWS_ACCESS_KEY_ID));
    assert!(!is_secret_key(AWS_REGION));
    assert!(!is_secret_key(AWS_ENDPOINT));
    assert!(!is_secret_key("AWS_REGION"), "case-insensitive");
}

#[test]
fn c19_unknown_and_misspelled_keys_are_secret() {
    for k in [
        "aws_session_tokn",
        "aws_secret_access_keyy",
        "AWS_SECRET_ACCESS_KEY",
        "layer_opt",
        "x-api-key",
        "aws_sse_customer_key_base64",
        "",
        &"a".repeat(10_000),
    ] {
        assert!(is_secret_key(k), "{k}");
    }
}

#[test]
fn the_allow_list_file_is_well_formed() {
    let keys: Vec<&str> = NON_SECRET_KEYS_FILE
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(keys.len() > 50, "{}", keys.len());
    for k in &keys {
        assert!(
            k.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "one lowercase key per line: {k:?}"
        );
        assert!(
            !is_credential_key(k) || *k == AWS_ACCESS_KEY_ID || *k == EXPIRES_AT_MILLIS,
            "{k}"
        );
        assert!(!is_data_secret_key(k), "{k}");
    }
    let unique: HashSet<&&str> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len(), "no duplicates");
}

#[test]
fn credential_and_data_secret_keys() {
    for k in [
        AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN,
        EXPIRES_AT_MILLIS,
        "azure_storage_sas_token",
        "google_storage_token",
    ] {
        assert!(is_credential_key(k), "{k}");
    }
    for k in [
        AWS_REGION,
        AWS_ENDPOINT,
        "aws_sse_customer_key_base64",
        "layer_opt",
    ] {
        assert!(!is_credential_key(k), "{k}");
    }
    assert!(is_data_secret_key("aws_sse_customer_key_base64"));
    assert!(!is_data_secret_key(AWS_SECRET_ACCESS_KEY));
}

#[test]
fn edit_distance_and_hints() {
    assert_eq!(
        edit_distance("aws_session_tokn", "aws_session_token", 3),
        Some(1)
    );
    assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
    assert_eq!(edit_distance("kitten", "sitting", 2), None);
    assert_eq!(edit_distance("", "abc", 3), Some(3));
    assert_eq!(edit_distance(&"a".repeat(100_000), "abc", 3), None);
    assert_eq!(
        did_you_mean("AWS_REGON", ["aws_region", "aws_endpoint"], 2),
        Some("aws_region")
    );
    assert_eq!(did_you_mean("zzz", ["aws_region"], 2), None);
}

#[test]
fn printable_values_hide_secrets_and_url_credentials() {
    assert_eq!(printable_value("aws_session_tokn", "SECRET"), "***");
    assert_eq!(printable_value("aws_region", "eu-west-1"), "eu-west-1");
    let p = printable_value("proxy_url", "http://user:SECRET@proxy:3128");
    assert!(!p.contains("SECRET") && p.contains("proxy:3128"), "{p}");
    let p = printable_value("aws_endpoint", "http://h/?X-Amz-Security-Token=SECRET");
    assert!(!p.contains("SECRET"), "{p}");
    let e = parse_bool("aws_session_tokn", "SECRET")
        .unwrap_err()
        .to_string();
    assert!(
        !e.contains("SECRET") && e.contains("aws_session_tokn"),
        "{e}"
    );
    assert!(parse_bool("aws_allow_http", "y").unwrap());
}

#[test]
fn c10_merge_keeps_options_the_provider_omits() {
    let current: StorageOptions = [
        (AWS_ENDPOINT, "http://127.0.0.1:9"),
        (AWS_REGION, "eu-west-1"),
        (AWS_ACCESS_KEY_ID, "gen1"),
        (AWS_SECRET_ACCESS_KEY, "s1"),
        (AWS_SESSION_TOKEN, "t1"),
        (EXPIRES_AT_MILLIS, "1767225600000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let fresh: StorageOptions = [
        (AWS_ACCESS_KEY_ID, "gen2"),
        (AWS_SECRET_ACCESS_KEY, "s2"),
        (AWS_REGION, "us-east-1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let merged = merge(&current, &fresh);
    assert_eq!(merged[AWS_ENDPOINT], "http://127.0.0.1:9");
    assert_eq!(
        merged[AWS_REGION], "us-east-1",
        "returned keys replace current ones"
    );
    assert_eq!(merged[AWS_ACCESS_KEY_ID], "gen2");
    assert!(
        !merged.contains_key(AWS_SESSION_TOKEN),
        "old token must not pair with new key"
    );
    assert!(
        !merged.contains_key(EXPIRES_AT_MILLIS),
        "expiry is never inherited"
    );
    let secretless: StorageOptions = [(AWS_ACCESS_KEY_ID, "gen3")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let merged = merge(&current, &secretless);
    assert!(
        !merged.contains_key(AWS_SECRET_ACCESS_KEY),
        "old secret must not pair with new key"
    );
    let empty = StorageOptions::new();
    assert_eq!(merge(&current, &empty), current);
}

#[test]
fn redacted_hides_secrets() {
    let o: StorageOptions = [(AWS_SECRET_ACCESS_KEY, "hunter2"), (AWS_REGION, "r")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let s = format!("{} {:?}", Redacted(&o), Redacted(&o));
    assert!(!s.contains("hunter2"));
    assert!(s.contains("***") && s.contains("\"r\""));
    let o: StorageOptions = [
        ("aws_session_tokn", "hunter3"),
        ("AWS_SECRET_ACCESS_KEY", "hunter4"),
        ("aws_endpoint", "http://u:hunter5@h:9"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let s = format!("{} {:?}", Redacted(&o), Redacted(&o));
    assert!(!s.contains("hunter"), "{s}");
    assert!(s.contains("h:9"), "{s}");
}
