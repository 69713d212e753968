//! Storage options: the `String -> String` map a catalog vends, its well-known keys, the
//! `expires_at_millis` format, merging, and redaction.
//!
//! Keys follow `object_store`'s configuration names (`aws_access_key_id`, `aws_region`, ...; see
//! `object_store::aws::AmazonS3ConfigKey`), plus [`EXPIRES_AT_MILLIS`]. Each cloud's own keys
//! are named in its folder under the `cloud` module.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::error::{Error, Result};

/// Storage options as vended by a provider: key -> value.
pub type StorageOptions = HashMap<String, String>;

/// Expiry of the vended credentials: epoch **milliseconds** as a decimal string, e.g.
/// `"1767225600000"`.
pub const EXPIRES_AT_MILLIS: &str = "expires_at_millis";
/// Smallest accepted `expires_at_millis`: values below 10^11 ms (March 1973) are almost
/// certainly epoch *seconds* and are rejected rather than read as "already expired".
pub const MIN_PLAUSIBLE_EXPIRES_AT_MILLIS: i64 = 100_000_000_000;
/// Largest accepted `expires_at_millis`: 9999-12-31T23:59:59.999Z. Larger values (such as
/// `i64::MAX`) are rejected rather than read as "never expires".
pub const MAX_EXPIRES_AT_MILLIS: i64 = 253_402_300_799_999;

/// Whether the value of `key` is a secret that must never be printed, logged, or put in a
/// cache key. Conservative: anything that looks like a secret, token, password, SAS or
/// account key counts.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    if k.ends_with("access_key_id") {
        return false;
    }
    [
        "secret",
        "token",
        "password",
        "sas",
        "account_key",
        "access_key",
        "private_key",
        "credential",
        "master_key",
        "customer_key",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// Whether `key` is a secret that configures the data rather than the signer: the SSE-C
/// customer encryption key (`aws_sse_customer_key_base64`). It is redacted like any secret, but
/// it is not a credential: it must reach the store (dropping it would write unencrypted data),
/// and it is part of store identity only as a keyed fingerprint.
pub fn is_data_secret_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("customer_key")
}

/// Whether `key` names a credential (secret or identity of the signer) rather than a property of
/// where data lives. Credential options are excluded from store identity; the credential source
/// stands in for them.
pub fn is_credential_key(key: &str) -> bool {
    key.ends_with("access_key_id")
        || key == EXPIRES_AT_MILLIS
        || (is_secret_key(key) && !is_data_secret_key(key))
}

/// Parses `expires_at_millis` (epoch milliseconds, decimal digits only).
///
/// # Errors
/// [`Error::InvalidOption`] naming the key and the value when the value is not a plain decimal
/// integer, is negative, overflows `i64`, looks like epoch seconds (below
/// [`MIN_PLAUSIBLE_EXPIRES_AT_MILLIS`]), or is past [`MAX_EXPIRES_AT_MILLIS`].
pub fn parse_expires_at_millis(value: &str) -> Result<i64> {
    let bad = |why: &str| {
        Error::invalid_option(
            EXPIRES_AT_MILLIS,
            format!("{why}; got {:?}, expected epoch milliseconds as a decimal string such as \"1767225600000\"", truncate(value, 40)),
        )
    };
    let v = value.trim();
    if v.is_empty() {
        return Err(bad("empty value"));
    }
    if v.starts_with('-') {
        return Err(bad("negative value"));
    }
    if !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("not a decimal integer"));
    }
    let n: i64 = v.parse().map_err(|_| bad("value out of range"))?;
    if n < MIN_PLAUSIBLE_EXPIRES_AT_MILLIS {
        return Err(bad(
            "value looks like epoch seconds or is implausibly early (below 10^11 ms)",
        ));
    }
    if n > MAX_EXPIRES_AT_MILLIS {
        return Err(bad("value is past year 9999"));
    }
    Ok(n)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(max).collect::<String>())
    }
}

/// Parses a boolean option the way `object_store` does (`true`/`false`, case-insensitive, also
/// `1`/`0`, `yes`/`no`, `on`/`off`).
///
/// # Errors
/// [`Error::InvalidOption`] for any other value.
pub fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        other => Err(Error::invalid_option(
            key,
            format!("expected true or false, got {other:?}"),
        )),
    }
}

/// Whether `options` carries any credential key (see [`is_credential_key`]).
pub fn has_credentials(options: &StorageOptions) -> bool {
    options.keys().any(|k| is_credential_key(k))
}

/// Merges a provider's answer over the current options.
///
/// Credential keys (access key id, secret, session token, `expires_at_millis`) are replaced as a
/// set when the answer carries any of them, so a new key id is never paired with an old secret,
/// token or expiry. Other keys the answer omits (endpoint, region, allow-http...) keep their
/// current values; keys it returns replace them.
pub fn merge(current: &StorageOptions, fresh: &StorageOptions) -> StorageOptions {
    let mut merged = current.clone();
    if has_credentials(fresh) {
        merged.retain(|k, _| !is_credential_key(k));
    }
    for (k, v) in fresh {
        merged.insert(k.clone(), v.clone());
    }
    merged
}

/// Displays options with secret values replaced by `***`, keys sorted. Use it for logs, errors
/// and `Debug`.
pub struct Redacted<'a>(pub &'a StorageOptions);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sorted: BTreeMap<_, _> = self.0.iter().collect();
        let mut map = f.debug_map();
        for (k, v) in sorted {
            if is_secret_key(k) {
                map.entry(k, &"***");
            } else {
                map.entry(k, v);
            }
        }
        map.finish()
    }
}

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
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
    }
}
