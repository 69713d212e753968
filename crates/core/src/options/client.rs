//! The HTTP client and retry settings as storage options, the same keys for every cloud:
//! `object_store`'s client keys for timeouts (`timeout`, `connect_timeout`, `read_timeout`,
//! `pool_idle_timeout`, `http2_keep_alive_interval`, `http2_keep_alive_timeout`, also with the
//! cloud's prefix such as `aws_timeout`), passed to the cloud's builder as they are, and the retry
//! keys [`MAX_RETRIES`], [`RETRY_TIMEOUT`], [`RETRY_INIT_BACKOFF`], [`RETRY_MAX_BACKOFF`], read
//! here into `object_store`'s [`RetryConfig`]. Both are checked when a store is opened, with
//! errors naming the key.

use std::time::Duration;

use object_store::{BackoffConfig, RetryConfig};

use super::{
    StorageOptions, MAX_RETRIES, RETRY_INIT_BACKOFF, RETRY_KEYS, RETRY_MAX_BACKOFF, RETRY_TIMEOUT,
};
use crate::error::{Error, Result};

/// The client keys (without a cloud prefix) whose values are durations.
const DURATION_KEYS: [&str; 6] = [
    "timeout",
    "connect_timeout",
    "read_timeout",
    "pool_idle_timeout",
    "http2_keep_alive_interval",
    "http2_keep_alive_timeout",
];

/// The cloud prefixes `object_store` strips from client keys.
const PREFIXES: [&str; 3] = ["aws_", "azure_", "google_"];

/// Whether `key` is one of the retry keys (see [`RETRY_KEYS`]).
pub fn is_retry_key(key: &str) -> bool {
    RETRY_KEYS.contains(&key)
}

fn duration(key: &str, value: &str) -> Result<Duration> {
    humantime::parse_duration(value.trim()).map_err(|e| {
        Error::invalid_option(
            key,
            format!("'{value}' is not a duration such as 500ms, 30s or 3m: {e}"),
        )
    })
}

/// Checks the client timeout keys and the retry keys of `options`.
///
/// # Errors
/// [`Error::InvalidOption`] naming the key for a timeout that is not a `humantime` duration
/// (`500ms`, `30s`, `3m`), a `timeout` or `connect_timeout` of zero, or a bad retry setting
/// (see [`retry_config`]).
pub fn validate_client_options(options: &StorageOptions) -> Result<()> {
    let mut keys: Vec<&String> = options.keys().collect();
    keys.sort();
    for key in keys {
        let bare = PREFIXES
            .iter()
            .find_map(|p| key.strip_prefix(p))
            .unwrap_or(key);
        if DURATION_KEYS.contains(&bare) {
            let d = duration(key, &options[key])?;
            if d.is_zero() && matches!(bare, "timeout" | "connect_timeout") {
                return Err(Error::invalid_option(
                    key.as_str(),
                    "must be longer than zero (every request would time out)",
                ));
            }
        }
    }
    retry_config(options).map(|_| ())
}

/// `object_store`'s retry settings from the retry keys of `options` (the others keep
/// `object_store`'s defaults: 10 retries, 3 min, backoff 100 ms doubling to 15 s).
///
/// # Errors
/// [`Error::InvalidOption`] naming the key for a value that is not a whole number
/// ([`MAX_RETRIES`]) or a `humantime` duration (the others), or a [`RETRY_MAX_BACKOFF`]
/// shorter than [`RETRY_INIT_BACKOFF`].
pub fn retry_config(options: &StorageOptions) -> Result<RetryConfig> {
    let mut retry = RetryConfig::default();
    let get = |key: &str| options.get(key).map(|v| duration(key, v)).transpose();
    if let Some(v) = options.get(MAX_RETRIES) {
        retry.max_retries = v.trim().parse().map_err(|_| {
            Error::invalid_option(MAX_RETRIES, format!("'{v}' is not a whole number"))
        })?;
    }
    if let Some(d) = get(RETRY_TIMEOUT)? {
        retry.retry_timeout = d;
    }
    let mut backoff = BackoffConfig::default();
    if let Some(d) = get(RETRY_INIT_BACKOFF)? {
        backoff.init_backoff = d;
    }
    if let Some(d) = get(RETRY_MAX_BACKOFF)? {
        backoff.max_backoff = d;
    }
    if backoff.max_backoff < backoff.init_backoff {
        return Err(Error::invalid_option(
            RETRY_MAX_BACKOFF,
            "must not be shorter than retry_init_backoff",
        ));
    }
    retry.backoff = backoff;
    Ok(retry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn retry_options_reach_the_retry_config_and_bad_values_name_the_key() {
        let r = retry_config(&opts(&[
            (MAX_RETRIES, "2"),
            (RETRY_TIMEOUT, "1500ms"),
            (RETRY_INIT_BACKOFF, "10ms"),
            (RETRY_MAX_BACKOFF, "1s"),
        ]))
        .unwrap();
        assert_eq!(r.max_retries, 2);
        assert_eq!(r.retry_timeout, Duration::from_millis(1500));
        assert_eq!(r.backoff.init_backoff, Duration::from_millis(10));
        assert_eq!(r.backoff.max_backoff, Duration::from_secs(1));
        for (k, v) in [
            (MAX_RETRIES, "-1"),
            (MAX_RETRIES, "ten"),
            (RETRY_TIMEOUT, "3"),
            (RETRY_MAX_BACKOFF, "1ms"),
        ] {
            let e = retry_config(&opts(&[(k, v)])).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidOptions);
            assert!(e.to_string().contains(k), "{e}");
        }
    }

    #[test]
    fn timeouts_are_checked_by_name_with_or_without_a_cloud_prefix() {
        validate_client_options(&opts(&[
            ("timeout", "45s"),
            ("connect_timeout", "500ms"),
            ("azure_read_timeout", "1m"),
            ("max_retries", "3"),
        ]))
        .unwrap();
        for (k, v) in [
            ("timeout", "abc"),
            ("aws_timeout", "30"),
            ("google_connect_timeout", "-1s"),
            ("connect_timeout", "0s"),
            ("retry_timeout", "soon"),
        ] {
            let e = validate_client_options(&opts(&[(k, v)])).unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidOptions, "{k}={v}");
            assert!(e.to_string().contains(&format!("'{k}'")), "{e}");
        }
    }
}
