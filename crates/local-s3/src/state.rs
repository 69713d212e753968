//! Shared server state: known keys, counters and the bounded request log.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng;

use crate::types::{
    KeyStats, Permissions, RequestRecord, TemporaryCredentials, REASON_BAD_TOKEN, REASON_EXPIRED,
    REASON_INVALID_KEY,
};

/// Most request records kept; older ones are dropped first.
pub(crate) const REQUEST_LOG_CAPACITY: usize = 100_000;

/// Where a scoped key may read and write: one bucket and a key prefix (plain string prefix,
/// as in IAM policies: prefix `data` also matches `database/x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scope {
    pub bucket: String,
    pub prefix: String,
}

impl Scope {
    /// Parses `bucket` or `bucket/prefix` (an optional `s3://` or leading `/` is ignored).
    pub fn parse(text: &str) -> Result<Scope, String> {
        let trimmed = text.trim();
        let trimmed = trimmed.strip_prefix("s3://").unwrap_or(trimmed);
        let trimmed = trimmed.trim_start_matches('/');
        let (bucket, prefix) = trimmed.split_once('/').unwrap_or((trimmed, ""));
        if !is_valid_bucket_name(bucket) {
            return Err(format!(
                "invalid scope {text:?}: expected bucket or bucket/prefix with a valid bucket name"
            ));
        }
        Ok(Scope {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
        })
    }

    /// Whether object `bucket`/`key` lies inside the scope.
    pub fn allows_object(&self, bucket: &str, key: &str) -> bool {
        bucket == self.bucket && key.starts_with(&self.prefix)
    }
}

/// S3 bucket naming rules (3–63 characters, lower-case letters, digits, `.` and `-`, starting
/// and ending with a letter or digit). Also keeps names from escaping the data directory.
pub(crate) fn is_valid_bucket_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (3..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && !name.contains("..")
}

/// Why a request was refused; the variants map to S3 error codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    InvalidAccessKeyId,
    InvalidToken,
    ExpiredToken,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::InvalidAccessKeyId => REASON_INVALID_KEY,
            Refusal::InvalidToken => REASON_BAD_TOKEN,
            Refusal::ExpiredToken => REASON_EXPIRED,
        }
    }
}

#[derive(Clone)]
struct KeyEntry {
    secret: String,
    session_token: String,
    expires_at_millis: i64,
    scope: Option<Scope>,
    permissions: Permissions,
    revoked: bool,
}

/// What an accepted key may do: where (`scope`, `None` = everywhere) and what.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Grant {
    pub scope: Option<Scope>,
    pub permissions: Permissions,
}

pub(crate) struct State {
    root_access_key: String,
    root_secret_key: String,
    data_dir: PathBuf,
    keys: RwLock<HashMap<String, KeyEntry>>,
    stats: Mutex<HashMap<String, KeyStats>>,
    log: Mutex<VecDeque<RequestRecord>>,
    /// Bulk `DeleteObjects` needs a key scoped to the whole bucket (as moto decides it).
    bulk_delete_bucket_level: std::sync::atomic::AtomicBool,
    /// How far this endpoint's clock runs ahead of the machine's (negative: behind), ms.
    clock_offset_millis: std::sync::atomic::AtomicI64,
    /// Multipart uploads in progress.
    uploads: crate::store::Uploads,
    /// Armed bit flips and their counters.
    faults: crate::faults::Faults,
    /// Lost answers and ignored conditions.
    answers: crate::answers::AnswerFaults,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Current time as epoch milliseconds.
pub(crate) fn now_millis() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn random_string(len: usize, charset: &[u8]) -> String {
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from(charset[rng.random_range(0..charset.len())]))
        .collect()
}

const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

impl State {
    pub fn new(root_access_key: String, root_secret_key: String, data_dir: PathBuf) -> State {
        State {
            root_access_key,
            root_secret_key,
            data_dir,
            keys: RwLock::new(HashMap::new()),
            stats: Mutex::new(HashMap::new()),
            log: Mutex::new(VecDeque::new()),
            bulk_delete_bucket_level: std::sync::atomic::AtomicBool::new(false),
            clock_offset_millis: std::sync::atomic::AtomicI64::new(0),
            uploads: crate::store::Uploads::default(),
            faults: crate::faults::Faults::default(),
            answers: crate::answers::AnswerFaults::default(),
        }
    }

    /// Armed bit flips (see [`crate::faults`]).
    pub fn faults(&self) -> &crate::faults::Faults {
        &self.faults
    }

    /// Lost answers and ignored conditions (see [`crate::answers`]).
    pub fn answers(&self) -> &crate::answers::AnswerFaults {
        &self.answers
    }

    /// Multipart uploads started and neither completed nor aborted.
    pub fn uploads(&self) -> &crate::store::Uploads {
        &self.uploads
    }

    /// See [`crate::LocalS3::set_clock_offset_millis`].
    pub fn set_clock_offset_millis(&self, offset: i64) {
        self.clock_offset_millis
            .store(offset, std::sync::atomic::Ordering::Relaxed);
    }

    /// The endpoint's clock (the machine's plus the configured offset), epoch ms: what expiry
    /// is judged by and what the `Date` header says.
    pub fn now(&self) -> i64 {
        now_millis().saturating_add(
            self.clock_offset_millis
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The configured clock offset, ms.
    pub fn clock_offset_millis(&self) -> i64 {
        self.clock_offset_millis
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// See [`crate::LocalS3::set_bulk_delete_bucket_level`].
    pub fn set_bulk_delete_bucket_level(&self, on: bool) {
        self.bulk_delete_bucket_level
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn bulk_delete_bucket_level(&self) -> bool {
        self.bulk_delete_bucket_level
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn root_access_key(&self) -> &str {
        &self.root_access_key
    }

    pub fn root_secret_key(&self) -> &str {
        &self.root_secret_key
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn is_root(&self, access_key: &str) -> bool {
        access_key == self.root_access_key
    }

    /// Creates the bucket directory (idempotent).
    pub fn create_bucket(&self, name: &str) -> std::io::Result<()> {
        if !is_valid_bucket_name(name) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "invalid bucket name {name:?}: use 3-63 lower-case letters, digits, '.' or '-'"
                ),
            ));
        }
        std::fs::create_dir_all(self.data_dir.join(name))
    }

    /// Issues a new temporary key valid for `ttl` from now.
    pub fn issue(
        &self,
        ttl: Duration,
        scope: Option<Scope>,
        permissions: Permissions,
    ) -> TemporaryCredentials {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let expires_at_millis = self.now().saturating_add(ttl_ms);
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        let access_key_id = loop {
            let candidate = format!("ASIA{}", random_string(16, UPPER_DIGITS));
            if candidate != self.root_access_key && !keys.contains_key(&candidate) {
                break candidate;
            }
        };
        let entry = KeyEntry {
            secret: random_string(40, ALNUM),
            session_token: format!("LS3{}", random_string(93, ALNUM)),
            expires_at_millis,
            scope,
            permissions,
            revoked: false,
        };
        let creds = TemporaryCredentials {
            access_key_id: access_key_id.clone(),
            secret_access_key: entry.secret.clone(),
            session_token: entry.session_token.clone(),
            expires_at_millis,
        };
        keys.insert(access_key_id, entry);
        creds
    }

    /// Marks a temporary key revoked. Returns `false` for unknown keys and the root key.
    pub fn revoke(&self, access_key_id: &str) -> bool {
        let mut keys = self.keys.write().unwrap_or_else(PoisonError::into_inner);
        match keys.get_mut(access_key_id) {
            Some(entry) => {
                entry.revoked = true;
                true
            }
            None => false,
        }
    }

    /// The secret used to verify a signature: the root secret, or a temporary key's secret
    /// (also when expired, so that the signature is checked before expiry is reported).
    pub fn secret_for(&self, access_key: &str) -> Option<String> {
        if self.is_root(access_key) {
            return Some(self.root_secret_key.clone());
        }
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        keys.get(access_key)
            .filter(|e| !e.revoked)
            .map(|e| e.secret.clone())
    }

    /// Checks a key whose signature verified: revocation, session token, then expiry.
    /// Returns what the key may do (everything for the root key).
    pub fn authorize(
        &self,
        access_key: &str,
        token: Option<&str>,
        now_ms: i64,
    ) -> Result<Grant, Refusal> {
        if self.is_root(access_key) {
            return Ok(Grant::default());
        }
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let entry = match keys.get(access_key) {
            Some(entry) if !entry.revoked => entry,
            _ => return Err(Refusal::InvalidAccessKeyId),
        };
        if token != Some(entry.session_token.as_str()) {
            return Err(Refusal::InvalidToken);
        }
        if now_ms >= entry.expires_at_millis {
            return Err(Refusal::ExpiredToken);
        }
        Ok(Grant {
            scope: entry.scope.clone(),
            permissions: entry.permissions,
        })
    }

    /// The scope of a temporary key (`None` for the root key, unknown keys and unscoped keys).
    pub fn scope_of(&self, access_key: &str) -> Option<Scope> {
        let keys = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        keys.get(access_key).and_then(|e| e.scope.clone())
    }

    /// Counts a finished request and appends it to the bounded log.
    pub fn record(&self, record: RequestRecord) {
        lock(&self.stats)
            .entry(record.access_key_id.clone())
            .or_default()
            .count(record.accepted, record.reason.as_deref());
        let mut log = lock(&self.log);
        if log.len() >= REQUEST_LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(record);
    }

    pub fn key_stats(&self, access_key_id: &str) -> KeyStats {
        lock(&self.stats)
            .get(access_key_id)
            .copied()
            .unwrap_or_default()
    }

    pub fn all_stats(&self) -> HashMap<String, KeyStats> {
        lock(&self.stats).clone()
    }

    pub fn request_log(&self) -> Vec<RequestRecord> {
        lock(&self.log).iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State::new("root".into(), "root-secret".into(), std::env::temp_dir())
    }

    #[test]
    fn scope_parsing() {
        assert_eq!(
            Scope::parse("bkt/a/b").unwrap(),
            Scope {
                bucket: "bkt".into(),
                prefix: "a/b".into()
            }
        );
        assert_eq!(
            Scope::parse("s3://bkt").unwrap(),
            Scope {
                bucket: "bkt".into(),
                prefix: String::new()
            }
        );
        assert!(Scope::parse("").is_err());
        assert!(Scope::parse("/x").is_err());
        assert!(Scope::parse("../etc").is_err());
    }

    #[test]
    fn authorize_order_and_expiry() {
        let s = state();
        let live = s.issue(Duration::from_secs(60), None, Permissions::READ_WRITE);
        let now = now_millis();
        assert_eq!(
            s.authorize(&live.access_key_id, Some(&live.session_token), now),
            Ok(Grant::default())
        );
        assert_eq!(
            s.authorize(&live.access_key_id, None, now),
            Err(Refusal::InvalidToken)
        );
        assert_eq!(
            s.authorize(&live.access_key_id, Some("x"), now),
            Err(Refusal::InvalidToken)
        );
        assert_eq!(
            s.authorize(
                &live.access_key_id,
                Some(&live.session_token),
                live.expires_at_millis
            ),
            Err(Refusal::ExpiredToken)
        );
        assert!(s.revoke(&live.access_key_id));
        assert_eq!(
            s.authorize(&live.access_key_id, Some(&live.session_token), now),
            Err(Refusal::InvalidAccessKeyId)
        );
        assert!(s.secret_for(&live.access_key_id).is_none());
        assert_eq!(s.authorize("root", None, now), Ok(Grant::default()));
        assert!(!s.revoke("root"));
    }

    #[test]
    fn a_key_keeps_its_scope_and_permissions() {
        let s = state();
        let permissions = Permissions::READ_ONLY.without_list();
        let scope = Scope::parse("bkt/p/").unwrap();
        let key = s.issue(Duration::from_secs(60), Some(scope.clone()), permissions);
        assert_eq!(
            s.authorize(&key.access_key_id, Some(&key.session_token), now_millis()),
            Ok(Grant {
                scope: Some(scope),
                permissions
            })
        );
    }

    #[test]
    fn log_is_bounded() {
        let s = state();
        for i in 0..(REQUEST_LOG_CAPACITY + 5) {
            s.record(RequestRecord {
                access_key_id: "k".into(),
                method: "GET".into(),
                bucket: None,
                key: Some(i.to_string()),
                accepted: true,
                reason: None,
                status: 200,
                user_agent: None,
            });
        }
        let log = s.request_log();
        assert_eq!(log.len(), REQUEST_LOG_CAPACITY);
        assert_eq!(log[0].key.as_deref(), Some("5"));
        assert_eq!(s.key_stats("k").accepted, (REQUEST_LOG_CAPACITY + 5) as u64);
    }
}
