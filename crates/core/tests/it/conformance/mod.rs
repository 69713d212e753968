//! One conformance suite for every S3 server: the checks below run through
//! `ObjectStoreRegistry::open` and the `VendedStore` data plane against a [`Backend`] — the
//! project's local endpoint (crates/local-s3), moto's server, LocalStack. Each check's
//! assertions are as strong as the backend allows; a property the backend cannot show (its
//! [`Capabilities`] say so) is reported as "not provable" with the reason, never skipped
//! silently. See crates/core/tests/CONFORMANCE.md.
//!
//! Every test binary prints a table (one line per check) and the summary
//! `conformance <backend>: N passed, N failed, N not-provable` on the process's stderr (not
//! captured by the test harness) and writes the same lines to
//! `target/tmp/conformance/<backend>.txt` for `bin/conformance-table`.

#![allow(dead_code)]

pub mod checks;
pub mod race;
pub mod servers;
pub mod sigv4;

use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures::FutureExt;
use vended_storage::{Error, StorageOptions, StorageOptionsProvider};

/// What a server enforces, so what the suite can prove against it.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Rejects a request signed with credentials past their server-side expiry.
    pub enforces_expiry: bool,
    /// Rejects a request whose SigV4 signature does not verify (wrong secret).
    pub enforces_signature: bool,
    /// Rejects a request outside the prefix a credential was scoped to.
    pub enforces_prefix_scope: bool,
    /// Its conditional writes must be atomic per key (ours): a second winner of the race
    /// fails the check. Otherwise a second winner is reported not provable.
    pub atomic_conditional_writes: bool,
}

/// One set of vended options and the access key id in them.
pub struct Vended {
    /// `object_store` options: `aws_*` keys, endpoint, region, and (unless revocable)
    /// `expires_at_millis` (epoch ms).
    pub options: StorageOptions,
    /// The access key id in `options` (not secret).
    pub access_key_id: String,
}

/// How a backend hands out credentials.
#[async_trait]
pub trait Vendor: Send + Sync + 'static {
    /// A short-lived credential announced to the client as expiring `ttl` from now
    /// (`expires_at_millis`), limited to `scope` (`bucket/prefix`) when given. Only called
    /// with a scope when the backend enforces prefix scopes.
    async fn vend(&self, ttl: Duration, scope: Option<&str>) -> Result<Vended, String>;
    /// A credential without `expires_at_millis` that [`Vendor::revoke`] can invalidate, or
    /// `Err(reason)` when the server cannot revoke a key.
    async fn vend_revocable(&self) -> Result<Vended, String>;
    /// Invalidates a key from [`Vendor::vend_revocable`].
    async fn revoke(&self, access_key_id: &str) -> Result<(), String>;
    /// Whether every `vend` returns a different access key (so the refresh check can count
    /// distinct keys).
    fn fresh_key_per_vend(&self) -> bool;
    /// How the credentials are obtained, for the table (one short line).
    fn describe(&self) -> String;
}

/// A server the suite runs against.
pub struct Backend {
    /// Short name for the table: `local`, `moto`, `localstack`.
    pub name: &'static str,
    /// An existing, empty bucket.
    pub bucket: String,
    pub caps: Capabilities,
    pub vendor: Arc<dyn Vendor>,
    /// Why a capability is missing (shown in the not-provable lines).
    pub missing_expiry: &'static str,
    pub missing_signature: &'static str,
    pub missing_scope: &'static str,
}

/// Epoch ms now.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `object_store` options for an S3 endpoint; `expires_at_millis` when `ttl` is given.
pub fn s3_options(
    endpoint: &str,
    access_key_id: &str,
    secret: &str,
    session_token: Option<&str>,
    ttl: Option<Duration>,
) -> StorageOptions {
    let mut o = StorageOptions::new();
    o.insert("aws_access_key_id".into(), access_key_id.into());
    o.insert("aws_secret_access_key".into(), secret.into());
    if let Some(t) = session_token {
        o.insert("aws_session_token".into(), t.into());
    }
    o.insert("aws_endpoint".into(), endpoint.into());
    o.insert("aws_region".into(), "us-east-1".into());
    o.insert("aws_allow_http".into(), "true".into());
    if let Some(ttl) = ttl {
        o.insert(
            "expires_at_millis".into(),
            (now_millis() + ttl.as_millis() as i64).to_string(),
        );
    }
    o
}

/// A provider that asks the backend's vendor for every fetch; counts calls and remembers
/// the keys it vended.
pub struct VendingProvider {
    vendor: Arc<dyn Vendor>,
    /// `Some(ttl)`: short-lived credentials; `None`: revocable ones without expiry.
    ttl: Option<Duration>,
    scope: Option<String>,
    calls: AtomicUsize,
    keys: Mutex<Vec<String>>,
}

impl std::fmt::Debug for VendingProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VendingProvider(ttl {:?})", self.ttl)
    }
}

impl VendingProvider {
    pub fn new(vendor: Arc<dyn Vendor>, ttl: Option<Duration>, scope: Option<&str>) -> Self {
        Self {
            vendor,
            ttl,
            scope: scope.map(str::to_owned),
            calls: AtomicUsize::new(0),
            keys: Mutex::new(Vec::new()),
        }
    }

    /// One set of options (also used for the initial options; not counted as a call).
    pub async fn vend(&self) -> Result<StorageOptions, String> {
        let v = match self.ttl {
            Some(ttl) => self.vendor.vend(ttl, self.scope.as_deref()).await?,
            None => self.vendor.vend_revocable().await?,
        };
        self.keys.lock().unwrap().push(v.access_key_id);
        Ok(v.options)
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

#[async_trait]
impl StorageOptionsProvider for VendingProvider {
    async fn fetch_storage_options(&self) -> vended_storage::Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.vend()
            .await
            .map(Some)
            .map_err(|e| Error::provider("conformance", e))
    }
    fn provider_id(&self) -> String {
        "conformance".into()
    }
}

pub use checks::{checks, Verdict};

/// The counts of one run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub not_provable: usize,
}

/// Longest one check may take before it counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs every check against `backend` (one after another), prints and saves the table, and
/// returns the counts. The caller asserts `failed == 0`.
pub async fn run(backend: Backend) -> Summary {
    let backend = Arc::new(backend);
    let run_id = format!("conf-{}-{}", std::process::id(), now_millis());
    let mut lines = vec![format!(
        "conformance {} credentials: {}",
        backend.name,
        backend.vendor.describe()
    )];
    let mut summary = Summary::default();
    for (name, check) in checks() {
        let started = Instant::now();
        let prefix = format!("{run_id}/{name}");
        let outcome = tokio::time::timeout(
            CHECK_TIMEOUT,
            AssertUnwindSafe(check(backend.clone(), prefix)).catch_unwind(),
        )
        .await;
        let (status, detail) = match outcome {
            Ok(Ok(Verdict::Passed)) => {
                summary.passed += 1;
                ("passed", String::new())
            }
            Ok(Ok(Verdict::Proven(what))) => {
                summary.passed += 1;
                ("passed", what)
            }
            Ok(Ok(Verdict::NotProvable(why))) => {
                summary.not_provable += 1;
                ("not-provable", why)
            }
            Err(_) => {
                summary.failed += 1;
                ("FAILED", format!("timed out after {CHECK_TIMEOUT:?}"))
            }
            Ok(Err(p)) => {
                summary.failed += 1;
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panicked".into());
                ("FAILED", msg.replace('\n', " "))
            }
        };
        let mut line = format!(
            "conformance {} {name}: {status} ({:.1} s)",
            backend.name,
            started.elapsed().as_secs_f64()
        );
        if !detail.is_empty() {
            let _ = write!(line, ": {detail}");
        }
        emit(&line);
        lines.push(line);
    }
    let total = format!(
        "conformance {}: {} passed, {} failed, {} not-provable",
        backend.name, summary.passed, summary.failed, summary.not_provable
    );
    emit(&total);
    lines.push(total);
    save(backend.name, &lines);
    summary
}

/// Reports a backend that cannot run here at all (every check not provable, with `reason`),
/// or that was skipped on request (`skipped`).
pub fn report_unavailable(name: &str, reason: &str, skipped: bool) -> Summary {
    let n = checks().len();
    let mut lines = Vec::new();
    let summary = if skipped {
        lines.push(format!("conformance {name}: SKIPPED ({reason})"));
        Summary::default()
    } else {
        lines.push(format!("conformance {name}: not provable here: {reason}"));
        lines.push(format!(
            "conformance {name}: 0 passed, 0 failed, {n} not-provable"
        ));
        Summary {
            not_provable: n,
            ..Default::default()
        }
    };
    for l in &lines {
        emit(l);
    }
    save(name, &lines);
    summary
}

/// Straight to the process's stderr: the test harness captures `eprintln!`, not this.
fn emit(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

fn save(name: &str, lines: &[String]) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(format!("{name}.txt")), lines.join("\n") + "\n");
    }
}
