//! The S3 storage option keys this library reads itself. Every other `aws_` key is passed to
//! `object_store`'s `AmazonS3Builder` by its `AmazonS3ConfigKey` name.

/// AWS access key id.
pub const AWS_ACCESS_KEY_ID: &str = "aws_access_key_id";
/// AWS secret access key (secret).
pub const AWS_SECRET_ACCESS_KEY: &str = "aws_secret_access_key";
/// AWS session token (secret).
pub const AWS_SESSION_TOKEN: &str = "aws_session_token";
/// AWS region, e.g. `us-east-1`.
pub const AWS_REGION: &str = "aws_region";
/// S3 endpoint URL, e.g. `http://127.0.0.1:9000`.
pub const AWS_ENDPOINT: &str = "aws_endpoint";
/// `"true"` to allow plain HTTP endpoints.
pub const AWS_ALLOW_HTTP: &str = "aws_allow_http";

/// `"true"` to send unsigned requests (public buckets).
pub const AWS_SKIP_SIGNATURE: &str = "aws_skip_signature";

use object_store::aws::AmazonS3ConfigKey;
use object_store::ClientConfigKey;

use crate::error::{Error, Result};
use crate::options::{
    did_you_mean, edit_distance, parse_bool, parse_expires_at_millis, printable_key,
    printable_value, StorageOptions, EXPIRES_AT_MILLIS,
};

/// The canonical names of the `aws_` keys `object_store` 0.14 knows
/// (`AmazonS3ConfigKey::as_ref`, plus the client options with an `aws_` prefix): the candidates
/// of a "did you mean" hint. Acceptance is decided by `AmazonS3ConfigKey`'s own parser.
pub const KNOWN_AWS_KEYS: &[&str] = &[
    AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
    AWS_REGION,
    AWS_ENDPOINT,
    AWS_ALLOW_HTTP,
    AWS_SKIP_SIGNATURE,
    "aws_bucket",
    "aws_default_region",
    "aws_virtual_hosted_style_request",
    "aws_unsigned_payload",
    "aws_checksum_algorithm",
    "aws_copy_if_not_exists",
    "aws_conditional_put",
    "aws_disable_tagging",
    "aws_disable_bulk_delete",
    "aws_request_payer",
    "aws_server_side_encryption",
    "aws_sse_kms_key_id",
    "aws_sse_bucket_key_enabled",
    "aws_sse_customer_key_base64",
    "aws_connect_timeout",
    "aws_timeout",
    "aws_read_timeout",
    "aws_user_agent",
    "aws_proxy_url",
];

/// Validates S3 storage options without any request. The same rules apply to the options a
/// store is opened with (`S3Adapter::validate`) and to every answer of a provider (through
/// [`super::aws_credential_from_options`], which builds each credential generation).
///
/// Rules:
/// - **Keys**: every key that starts with `aws_` (in any case, with `-` or `.` for `_`) must be
///   a key `object_store::aws::AmazonS3ConfigKey` parses, spelled exactly (keys are
///   case-sensitive: `AWS_SECRET_ACCESS_KEY` is rejected with "did you mean
///   'aws_secret_access_key'?", never silently ignored or half-used). A key within 3 edits of a
///   known key gets a "did you mean" hint. Aliases of the credential keys (`aws_token`,
///   `token`, `session_token`, `secret_access_key`, `access_key_id`) are rejected: only the
///   canonical names are read. Other keys (a catalog's, a layer's) are left alone, except a
///   near-miss of `expires_at_millis` (within 2 edits, or another case).
/// - **Credentials** (`aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`): after
///   trimming, visible ASCII only (0x21..=0x7E), as HTTP headers need.
/// - **Endpoint** (`aws_endpoint` and its aliases): an `http` or `https` URL with a host and a
///   valid port, without user info, query or fragment.
/// - **Region**: 1 to 64 characters of `A-Z a-z 0-9 - _ .`.
/// - **Booleans** (`aws_allow_http`, `aws_skip_signature`, ...): as `object_store` parses them.
/// - **`expires_at_millis`**: epoch milliseconds (see
///   [`crate::options::parse_expires_at_millis`]).
///
/// # Errors
/// [`Error::InvalidOption`] naming the first bad key (never quoting a secret value).
pub fn validate_s3_options(options: &StorageOptions) -> Result<()> {
    crate::options::client::validate_client_options(options)?;
    let mut keys: Vec<&String> = options.keys().collect();
    keys.sort();
    for key in keys {
        validate_s3_option(key, &options[key])?;
    }
    Ok(())
}

fn validate_s3_option(key: &str, value: &str) -> Result<()> {
    let bad = |message: String| Error::invalid_option(printable_key(key), message);
    if key == EXPIRES_AT_MILLIS {
        return parse_expires_at_millis(value).map(|_| ());
    }
    let parsed = match key.parse::<AmazonS3ConfigKey>() {
        Ok(k) => k,
        Err(_) => return check_unknown_key(key),
    };
    match parsed {
        AmazonS3ConfigKey::AccessKeyId
        | AmazonS3ConfigKey::SecretAccessKey
        | AmazonS3ConfigKey::Token => {
            let canonical = parsed.as_ref();
            if key != canonical {
                return Err(bad(format!(
                    "an alias this library does not read; did you mean '{canonical}'?"
                )));
            }
            check_header_safe(key, value)
        }
        AmazonS3ConfigKey::Endpoint => check_endpoint(key, value),
        AmazonS3ConfigKey::Region | AmazonS3ConfigKey::DefaultRegion => check_region(key, value),
        AmazonS3ConfigKey::VirtualHostedStyleRequest
        | AmazonS3ConfigKey::UnsignedPayload
        | AmazonS3ConfigKey::SkipSignature
        | AmazonS3ConfigKey::DisableTagging
        | AmazonS3ConfigKey::DisableBulkDelete
        | AmazonS3ConfigKey::RequestPayer
        | AmazonS3ConfigKey::Client(
            ClientConfigKey::AllowHttp
            | ClientConfigKey::AllowInvalidCertificates
            | ClientConfigKey::Http1Only
            | ClientConfigKey::Http2Only
            | ClientConfigKey::Http2KeepAliveWhileIdle,
        ) => parse_bool(key, value).map(|_| ()),
        _ => Ok(()),
    }
}

/// A key `AmazonS3ConfigKey` does not parse: an error when it is meant for S3 (an `aws_`
/// prefix in any spelling) or is a near-miss of `expires_at_millis`; fine otherwise.
fn check_unknown_key(key: &str) -> Result<()> {
    let normalized: String = key
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if normalized.starts_with("aws_") {
        let hint = if normalized != key && normalized.parse::<AmazonS3ConfigKey>().is_ok() {
            format!("; keys are lowercase with '_': did you mean '{normalized}'?")
        } else {
            did_you_mean(&normalized, KNOWN_AWS_KEYS.iter().copied(), 3)
                .map(|k| format!("; did you mean '{k}'?"))
                .unwrap_or_default()
        };
        return Err(Error::invalid_option(
            printable_key(key),
            format!("unknown S3 storage option{hint}"),
        ));
    }
    if edit_distance(&normalized, EXPIRES_AT_MILLIS, 2).is_some() {
        return Err(Error::invalid_option(
            printable_key(key),
            format!("unknown storage option; did you mean '{EXPIRES_AT_MILLIS}'?"),
        ));
    }
    Ok(())
}

/// Credentials travel in HTTP headers: visible ASCII only (after trimming, as the credential
/// mapper trims). Never quotes the value.
fn check_header_safe(key: &str, value: &str) -> Result<()> {
    match value
        .trim()
        .bytes()
        .position(|b| !(0x21..=0x7e).contains(&b))
    {
        None => Ok(()),
        Some(at) => Err(Error::invalid_option(
            key,
            format!(
                "contains a control character, a space or a non-ASCII byte at byte {at}; \
                 credentials must be visible ASCII (they are sent in HTTP headers)"
            ),
        )),
    }
}

fn check_endpoint(key: &str, value: &str) -> Result<()> {
    let shown = printable_value(key, value);
    let bad = |why: String| {
        Error::invalid_option(
            key,
            format!(
                "{why}; got {:?}, expected an http or https URL such as \"https://s3.us-east-1.amazonaws.com\" or \"http://127.0.0.1:9000\"",
                shown.chars().take(100).collect::<String>()
            ),
        )
    };
    let url = url::Url::parse(value.trim()).map_err(|e| bad(format!("not a valid URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!("unsupported URL scheme '{}'", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("the URL has no host".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "the URL carries user info; credentials belong in aws_access_key_id and aws_secret_access_key".into(),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("the URL carries a query or fragment".into()));
    }
    Ok(())
}

fn check_region(key: &str, value: &str) -> Result<()> {
    let ok = (1..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_option(
            key,
            format!(
                "got {:?}, expected a region name of 1 to 64 letters, digits, '-', '_' or '.' such as \"us-east-1\"",
                value.chars().take(64).collect::<String>()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pairs: &[(&str, &str)]) -> Result<()> {
        validate_s3_options(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn every_hint_candidate_is_a_key_object_store_parses() {
        for k in KNOWN_AWS_KEYS {
            assert!(k.parse::<AmazonS3ConfigKey>().is_ok(), "{k}");
        }
    }

    #[test]
    fn c19_misspelled_and_uppercase_keys_are_rejected_with_a_hint() {
        for (key, hint) in [
            ("aws_session_tokn", "did you mean 'aws_session_token'?"),
            (
                "aws_secret_access_keyy",
                "did you mean 'aws_secret_access_key'?",
            ),
            (
                "AWS_SECRET_ACCESS_KEY",
                "did you mean 'aws_secret_access_key'?",
            ),
            ("aws-region", "did you mean 'aws_region'?"),
            ("aws_token", "did you mean 'aws_session_token'?"),
            ("token", "did you mean 'aws_session_token'?"),
            ("secret_access_key", "did you mean 'aws_secret_access_key'?"),
            ("expires_at_milis", "did you mean 'expires_at_millis'?"),
            ("EXPIRES_AT_MILLIS", "did you mean 'expires_at_millis'?"),
            ("aws_zzz", "unknown S3 storage option"),
        ] {
            let e = check(&[(key, "hunter2")]).expect_err(key).to_string();
            assert!(e.contains(&format!("'{key}'")) && e.contains(hint), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
        // Keys of other layers and object_store's non-credential aliases pass.
        check(&[
            ("layer_opt", "x"),
            ("region", "eu-west-1"),
            ("timeout", "5s"),
        ])
        .unwrap();
    }

    #[test]
    fn c20_bad_values_are_rejected_by_key() {
        for (key, value) in [
            (AWS_ENDPOINT, "http://127.0.0.1:notaport"),
            (AWS_ENDPOINT, "127.0.0.1:9000"),
            (AWS_ENDPOINT, "ftp://host"),
            (AWS_ENDPOINT, "http://u:SECRET@host"),
            (AWS_ENDPOINT, "http://host/?X-Amz-Security-Token=SECRET"),
            ("endpoint", "http://"),
            (AWS_SESSION_TOKEN, "SECRET\nx"),
            (AWS_SESSION_TOKEN, "SECRET\0x"),
            (AWS_SECRET_ACCESS_KEY, "SECRET é"),
            (AWS_ACCESS_KEY_ID, "AK ID"),
            (AWS_REGION, "us east 1"),
            (AWS_REGION, ""),
            (AWS_ALLOW_HTTP, "maybe"),
        ] {
            let e = check(&[(key, value)]).expect_err(value).to_string();
            assert!(e.contains(&format!("'{key}'")), "{e}");
            assert!(!e.contains("SECRET"), "{e}");
        }
        check(&[
            (AWS_ENDPOINT, "http://127.0.0.1:9000"),
            (AWS_REGION, "us-east-1"),
            (AWS_SESSION_TOKEN, " tok+/= \n"),
            (AWS_ALLOW_HTTP, "true"),
        ])
        .unwrap();
    }
}
