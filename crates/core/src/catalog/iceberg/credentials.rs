//! The choice of the storage credential for a table's location (the most specific prefix) and
//! the mapping of its Iceberg FileIO keys to storage options (see the module documentation of
//! [`iceberg`](super)).

use super::wire::{LoadCredentialsResponse, StorageCredential};
use super::{
    AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AZURE_STORAGE_ACCOUNT_NAME,
    AZURE_STORAGE_SAS_TOKEN, GOOGLE_BEARER_TOKEN,
};
use crate::catalog::http::Json;
use crate::catalog::CatalogErrorKind;
use crate::options::{parse_expires_at_millis, StorageOptions, EXPIRES_AT_MILLIS};

type Failure = (CatalogErrorKind, String);

fn normalize_scheme(uri: &str) -> String {
    for alias in ["s3a://", "s3n://"] {
        if let Some(rest) = uri.strip_prefix(alias) {
            return format!("s3://{rest}");
        }
    }
    uri.to_string()
}

/// Whether a storage credential's `prefix` covers `location` (both with the scheme normalized):
/// a prefix ends on a path-segment boundary, so `s3://b/t1` covers `s3://b/t1` and
/// `s3://b/t1/data/x` but not `s3://b/t10` (a credential scoped to one table is never applied
/// to another whose name starts the same way, apache/iceberg#17003).
fn covers(prefix: &str, location: &str) -> bool {
    let Some(rest) = location.strip_prefix(prefix) else {
        return false;
    };
    rest.is_empty() || prefix.ends_with('/') || rest.starts_with('/')
}

/// Picks the storage credential for `location` from a `LoadCredentialsResponse` and maps it.
pub(super) fn select_credentials(
    answer: LoadCredentialsResponse,
    location: &str,
) -> std::result::Result<StorageOptions, Failure> {
    let malformed = |m: String| (CatalogErrorKind::MalformedResponse, m);
    let list = match answer.storage_credentials {
        Json::Null => {
            return Err((
                CatalogErrorKind::MissingField,
                "the answer has no storage-credentials".into(),
            ));
        }
        Json::Array(list) => list,
        other => {
            return Err(malformed(format!(
                "'storage-credentials' is a JSON {}, expected an array",
                other.kind()
            )))
        }
    };
    if list.is_empty() {
        return Err((
            CatalogErrorKind::MissingField,
            "the answer's storage-credentials list is empty".into(),
        ));
    }
    let mut prefixes = Vec::with_capacity(list.len());
    let mut configs = Vec::with_capacity(list.len());
    for (i, entry) in list.into_iter().enumerate() {
        let (prefix, config) = match entry {
            Json::Object(StorageCredential {
                prefix: Json::String(prefix),
                config,
            }) => (prefix, config),
            _ => {
                return Err(malformed(format!(
                    "storage-credentials[{i}] has no string 'prefix'"
                )))
            }
        };
        let config =
            config.ok_or_else(|| malformed(format!("storage-credentials[{i}] has no 'config'")))?;
        prefixes.push(prefix);
        configs.push(config);
    }
    let Some(best) =
        covering_prefix(&prefixes, location).or_else(|| only_one_under(&prefixes, location))
    else {
        // Not a malformed answer: the catalog may cover the location again later (a table
        // moved, a policy being rolled out), so it is retried like any failed refresh (C28).
        return Err((
            CatalogErrorKind::MissingField,
            format!(
                "{} [retried like any failed refresh]",
                no_match(location, &prefixes)
            ),
        ));
    };
    let config = match configs
        .swap_remove(best)
        .string_map("config")
        .map_err(malformed)?
    {
        Some(config) => config,
        None => {
            return Err(malformed(
                "'config' is a JSON null, expected an object of strings".into(),
            ))
        }
    };
    map_config(&config, location).map_err(malformed)
}

/// The index in `prefixes` of the most specific storage-credential prefix covering `location`,
/// or `None` when none does: the rule every choice of a credential for a location follows (the
/// provider's first answer and refresh answers, and, through the JNI, the Java `FileIO`'s choice
/// of a store). A prefix covers on path-segment boundaries only (`s3://b/t1` covers
/// `s3://b/t1/x`, never `s3://b/t10`, apache/iceberg#17003); `s3a://` and `s3n://` count as
/// `s3://`; among covering prefixes the longest wins, the first given on a tie.
///
/// ```
/// use vended_storage::catalog::iceberg::covering_prefix;
///
/// let prefixes = ["s3://b/", "s3://b/wh/t1", "s3://b/wh/t10"];
/// assert_eq!(covering_prefix(&prefixes, "s3a://b/wh/t1/data/0.parquet"), Some(1));
/// assert_eq!(covering_prefix(&prefixes, "s3://b/wh/t100"), Some(0));
/// assert_eq!(covering_prefix(&prefixes, "gs://b/wh/t1"), None);
/// ```
pub fn covering_prefix<S: AsRef<str>>(prefixes: &[S], location: &str) -> Option<usize> {
    let target = normalize_scheme(location);
    let mut best: Option<(usize, usize)> = None;
    for (i, prefix) in prefixes.iter().enumerate() {
        let p = normalize_scheme(prefix.as_ref());
        if covers(&p, &target) && best.is_none_or(|(_, len)| p.len() > len) {
            best = Some((i, p.len()));
        }
    }
    best.map(|(i, _)| i)
}

/// When no prefix covers `location`: the index of the answer's only entry whose prefix lies
/// under `location`, if it has exactly one. Iceberg's own `VendedCredentialsProvider` takes
/// the one S3 credential of a refresh answer whatever its prefix: a refresh endpoint is the
/// table's, so its one credential is the table's, also when the store asking is wider than the
/// table (a `FileIO` store for a bucket, whose location is `s3://b/`, case C28). A credential
/// for a sibling (`s3://b/wh/t1` for `s3://b/wh/t10`) is still never used (fails closed,
/// apache/iceberg#17003), and with several entries under the location none is guessed.
fn only_one_under<S: AsRef<str>>(prefixes: &[S], location: &str) -> Option<usize> {
    let location = normalize_scheme(location);
    let mut under = prefixes
        .iter()
        .enumerate()
        .filter(|(_, p)| covers(&location, &normalize_scheme(p.as_ref())));
    match (under.next(), under.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// The message of a location no storage credential covers (prefixes are not secret).
pub(super) fn no_match<S: AsRef<str>>(location: &str, prefixes: &[S]) -> String {
    let prefixes: Vec<&str> = prefixes.iter().map(AsRef::as_ref).collect();
    format!("{NO_MATCH}{location} (prefixes: {prefixes:?})")
}

/// How [`no_match`]'s message starts.
pub(super) const NO_MATCH: &str = "no storage credential's prefix matches the table location ";

/// Checks that the expiry `key` holds epoch milliseconds; the message names the key, never the
/// value (a malformed expiry may be a pasted secret).
fn check_expiry(key: &str, value: &str) -> std::result::Result<(), String> {
    parse_expires_at_millis(value).map(|_| ()).map_err(|_| {
        format!(
            "'{key}' is not an expiry in epoch milliseconds (a whole number such as 1767225600000)"
        )
    })
}

/// Maps Iceberg FileIO credential keys to storage options (see the module documentation).
///
/// # Errors
/// A message naming the expiry key (never its value) when the expiry that applies is not epoch
/// milliseconds.
pub(super) fn map_config(
    config: &StorageOptions,
    location: &str,
) -> std::result::Result<StorageOptions, String> {
    let mut out = StorageOptions::new();
    for (iceberg, ours) in [
        ("s3.access-key-id", AWS_ACCESS_KEY_ID),
        ("s3.secret-access-key", AWS_SECRET_ACCESS_KEY),
        ("s3.session-token", AWS_SESSION_TOKEN),
        ("s3.session-token-expires-at-ms", EXPIRES_AT_MILLIS),
        ("gcs.oauth2.token", GOOGLE_BEARER_TOKEN),
        ("gcs.oauth2.token-expires-at", EXPIRES_AT_MILLIS),
    ] {
        if let Some(v) = config.get(iceberg) {
            if ours == EXPIRES_AT_MILLIS {
                check_expiry(iceberg, v)?;
            }
            out.insert(ours.to_string(), v.clone());
        }
    }
    const SAS: &str = "adls.sas-token.";
    const SAS_EXPIRES: &str = "adls.sas-token-expires-at-ms.";
    let mut accounts: Vec<&str> = config.keys().filter_map(|k| k.strip_prefix(SAS)).collect();
    accounts.sort_unstable();
    let host = url::Url::parse(location)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    let account_of = |a: &str| a.split('.').next().unwrap_or(a).to_string();
    let chosen = accounts
        .iter()
        .find(|a| {
            host.as_deref() == Some(**a) || host.as_deref().map(account_of) == Some(account_of(a))
        })
        .or(accounts.first())
        .copied();
    if let Some(account) = chosen {
        out.insert(
            AZURE_STORAGE_SAS_TOKEN.to_string(),
            config[&format!("{SAS}{account}")].clone(),
        );
        out.insert(AZURE_STORAGE_ACCOUNT_NAME.to_string(), account_of(account));
        let key = format!("{SAS_EXPIRES}{account}");
        if let Some(exp) = config.get(&key) {
            check_expiry(&key, exp)?;
            out.insert(EXPIRES_AT_MILLIS.to_string(), exp.clone());
        }
    }
    Ok(out)
}
