//! Storage options: the `String -> String` map a catalog vends, its well-known keys, the
//! `expires_at_millis` format, merging, and redaction.
//!
//! Keys follow `object_store`'s configuration names (`aws_access_key_id`, `aws_region`, ...; see
//! `object_store::aws::AmazonS3ConfigKey`), plus [`EXPIRES_AT_MILLIS`]. Each cloud's own keys
//! are named in its folder under the `cloud` module.
//!
//! **Redaction is decided by an allow-list**: `non_secret_keys.txt` beside this file names the
//! keys whose values may be printed; every other value prints as `***` ([`Redacted`],
//! [`printable_value`]), whatever the key is called. The Java binding reads the same file.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use once_cell::sync::Lazy;

use crate::error::{Error, Result};

pub mod client;

/// Storage options as vended by a provider: key -> value.
pub type StorageOptions = HashMap<String, String>;

/// Expiry of the vended credentials: epoch **milliseconds** as a decimal string, e.g.
/// `"1767225600000"`.
pub const EXPIRES_AT_MILLIS: &str = "expires_at_millis";

/// Whether the store may write: `read` or `read_write` (also `read-write`; case ignored);
/// default `read_write`. A store opened `read` refuses puts, multipart uploads, copies,
/// renames and deletes before sending anything (kind `Credentials`), and is a different store,
/// with its own credentials, from a `read_write` store of the same table; a Unity Catalog spec
/// asks for `READ` credentials (see the `access` module). Read for every cloud, at open; a
/// provider's answer cannot change it.
pub const ACCESS_MODE: &str = "access_mode";

/// End-to-end checksums: `true` (default) or `false` (case ignored). On: every write carries a
/// checksum the service verifies (S3 CRC64NVME on each `PUT` and part, Azure `Content-MD5` on
/// each `PUT` signed by a SAS or bearer token, GCS `x-goog-hash` CRC32C on single-request
/// uploads), and a whole-object read (`get`, `getAll`, a stream read to its end) is checked
/// against the checksum the service stores (S3 CRC64NVME or full-object CRC32C, Azure
/// `Content-MD5`, GCS CRC32C); a mismatch is read once more, then fails with kind `Integrity`.
/// Turn it off for an S3-compatible server that refuses checksum headers. Read for every cloud,
/// at open; see docs/integrity.md.
pub const CHECKSUMS: &str = "checksums";

/// Whether `options` turn end-to-end checksums on ([`CHECKSUMS`]; default on).
///
/// # Errors
/// [`Error::InvalidOption`] naming [`CHECKSUMS`] for a value other than `true` or `false`.
pub fn checksums_on(options: &StorageOptions) -> Result<bool> {
    match options
        .get(CHECKSUMS)
        .map(|v| v.trim().to_ascii_lowercase())
    {
        None => Ok(true),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(Error::invalid_option(
            CHECKSUMS,
            format!("'{v}' is not true or false"),
        )),
    }
}

/// Most times `object_store` sends a request again after a 5xx answer, a 429, or (for
/// idempotent requests) a transport error, not counting the first attempt. A whole number;
/// default 10. Read for every cloud (see [`client::retry_config`]).
pub const MAX_RETRIES: &str = "max_retries";
/// Longest time from a request's first attempt after which `object_store` stops retrying it.
/// A duration in `humantime` format, as `object_store`'s `timeout` and `connect_timeout`
/// (`500ms`, `30s`, `3m`); default 3 minutes. Read for every cloud.
pub const RETRY_TIMEOUT: &str = "retry_timeout";
/// First pause between retries (duration, `humantime` format); default 100 ms. The pause grows
/// by a factor of 2 per retry (with jitter) up to [`RETRY_MAX_BACKOFF`]. Read for every cloud.
pub const RETRY_INIT_BACKOFF: &str = "retry_init_backoff";
/// Longest pause between retries (duration, `humantime` format); default 15 s. Read for every
/// cloud.
pub const RETRY_MAX_BACKOFF: &str = "retry_max_backoff";
/// The retry option keys (see [`MAX_RETRIES`], [`RETRY_TIMEOUT`], [`RETRY_INIT_BACKOFF`],
/// [`RETRY_MAX_BACKOFF`]).
pub const RETRY_KEYS: [&str; 4] = [
    MAX_RETRIES,
    RETRY_TIMEOUT,
    RETRY_INIT_BACKOFF,
    RETRY_MAX_BACKOFF,
];

/// Smallest accepted `expires_at_millis`: values below 10^11 ms (March 1973) are almost
/// certainly epoch *seconds* and are rejected rather than read as "already expired".
pub const MIN_PLAUSIBLE_EXPIRES_AT_MILLIS: i64 = 100_000_000_000;
/// Largest accepted `expires_at_millis`: 9999-12-31T23:59:59.999Z. Larger values (such as
/// `i64::MAX`) are rejected rather than read as "never expires".
pub const MAX_EXPIRES_AT_MILLIS: i64 = 253_402_300_799_999;

/// The allow-list of keys whose values are not secret (`non_secret_keys.txt` beside this file,
/// one key per line, `#` comments). The Java binding reads the same file as a resource.
pub const NON_SECRET_KEYS_FILE: &str = include_str!("non_secret_keys.txt");

static NON_SECRET_KEYS: Lazy<HashSet<String>> = Lazy::new(|| {
    NON_SECRET_KEYS_FILE
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|l| !l.is_empty())
        .collect()
});

/// Whether the value of `key` is known not to be secret, so it may be printed in logs, errors
/// and `Debug`: `key` is on the allow-list in `non_secret_keys.txt` (compared
/// case-insensitively).
pub fn is_non_secret_key(key: &str) -> bool {
    // Keys on the list are short ASCII: a long key is never on it (and is not lowercased).
    key.len() <= 64 && NON_SECRET_KEYS.contains(&key.to_ascii_lowercase())
}

/// Whether the value of `key` must never be printed, logged, or put in a cache key as is: every
/// key that is not on the allow-list of non-secret keys (see [`is_non_secret_key`]). Decided by
/// that list, never by secret-looking words, so a misspelled or unknown key is a secret too.
pub fn is_secret_key(key: &str) -> bool {
    !is_non_secret_key(key)
}

/// The credential keys of every cloud: the signer's identity, its secrets and their expiry.
/// Compared case-insensitively by [`is_credential_key`].
pub const CREDENTIAL_KEYS: &[&str] = &[
    // S3 (cloud::aws::keys)
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    // Azure (object_store AzureConfigKey canonical names, as Lance vends them)
    "azure_storage_account_key",
    "azure_storage_sas_key",
    "azure_storage_sas_token",
    "azure_storage_token",
    // Google Cloud Storage (object_store's key, and Lance's vended token key)
    "google_bearer_token",
    "google_storage_token",
    "google_service_account_key",
    // Expiry of all of the above
    EXPIRES_AT_MILLIS,
];

/// Keys of secrets that configure the data rather than the signer: the SSE-C customer
/// encryption key. Compared case-insensitively by [`is_data_secret_key`].
pub const DATA_SECRET_KEYS: &[&str] = &[
    "aws_sse_customer_key_base64",
    "sse_customer_key_base64",
    "azure_storage_encryption_key",
];

/// Whether `key` is a secret that configures the data rather than the signer (an SSE-C customer
/// encryption key such as `aws_sse_customer_key_base64`). It is redacted like any secret, but it
/// is not a credential: it must reach the store (dropping it would write unencrypted data), and
/// it is part of store identity only as a keyed fingerprint.
pub fn is_data_secret_key(key: &str) -> bool {
    DATA_SECRET_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

/// Whether `key` names a credential (secret or identity of the signer, or their expiry) rather
/// than a property of where data lives: one of [`CREDENTIAL_KEYS`], case-insensitively.
/// Credential options are excluded from store identity (the credential source stands in for
/// them) and are replaced as a set on refresh (see [`merge`]).
pub fn is_credential_key(key: &str) -> bool {
    CREDENTIAL_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

/// `value` of `key` as it may be printed: `***` for a secret key (see [`is_secret_key`]);
/// otherwise the value, without user info, query or fragment when it looks like a URL
/// (`scheme://...`).
pub fn printable_value<'a>(key: &str, value: &'a str) -> Cow<'a, str> {
    if is_secret_key(key) {
        Cow::Borrowed("***")
    } else if value.contains("://") {
        Cow::Owned(crate::uri::printable_uri(value))
    } else {
        Cow::Borrowed(value)
    }
}

/// Levenshtein distance between `a` and `b` (in chars), or `None` once it exceeds `max`
/// (cheap for long inputs: strings whose lengths differ by more than `max` are not compared).
pub fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()]).filter(|d| *d <= max)
}

/// The candidate closest to `key` (compared lowercase) within `max` edits, for a
/// "did you mean ...?" hint.
pub fn did_you_mean<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter_map(|c| edit_distance(&lower, c, max).map(|d| (d, c)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `key` as it may be quoted in a message: at most 64 characters, control characters escaped.
pub fn printable_key(key: &str) -> String {
    truncate(key, 64).escape_debug().to_string()
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
/// `1`/`0`, `yes`/`no`, `on`/`off`, `y`/`n`).
///
/// # Errors
/// [`Error::InvalidOption`] for any other value; it quotes the value only when `key` is not
/// secret (see [`is_secret_key`]).
pub fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "y" => Ok(true),
        "false" | "0" | "no" | "off" | "n" => Ok(false),
        _ => Err(Error::invalid_option(
            key,
            format!(
                "expected true or false, got {:?}",
                printable_value(key, &truncate(value, 40))
            ),
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

/// Displays options with the value of every key that is not on the non-secret allow-list
/// replaced by `***` (see [`printable_value`]), keys sorted. Use it for logs, errors and `Debug`.
pub struct Redacted<'a>(pub &'a StorageOptions);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sorted: BTreeMap<_, _> = self.0.iter().collect();
        let mut map = f.debug_map();
        for (k, v) in sorted {
            map.entry(k, &printable_value(k, v));
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
mod tests;
