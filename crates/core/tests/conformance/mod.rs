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

pub mod servers;
pub mod sigv4;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::future::Future;
use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bytes::Bytes;
use futures::{FutureExt, TryStreamExt};
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use vended_storage::{
    Error, ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions,
    StorageOptionsProvider, VendedStore, WriteMode, WriterOptions,
};

/// What a server enforces, so what the suite can prove against it.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Rejects a request signed with credentials past their server-side expiry.
    pub enforces_expiry: bool,
    /// Rejects a request whose SigV4 signature does not verify (wrong secret).
    pub enforces_signature: bool,
    /// Rejects a request outside the prefix a credential was scoped to.
    pub enforces_prefix_scope: bool,
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

/// The outcome of a check that did not fail (a failure is a panic: an assertion).
pub enum Verdict {
    Passed,
    NotProvable(String),
}

// Not `Send`: `ObjectWriter::finish`'s future is not (see CONFORMANCE.md), so checks run on
// the test's task with panics caught, not spawned.
type CheckFuture = Pin<Box<dyn Future<Output = Verdict>>>;
type Check = fn(Arc<Backend>, String) -> CheckFuture;

/// The checks, by name, in the order they run.
pub fn checks() -> Vec<(&'static str, Check)> {
    vec![
        ("put_get_head_list_delete", |b, p| Box::pin(objects(b, p))),
        ("ranged_reads", |b, p| Box::pin(ranged_reads(b, p))),
        ("list_with_delimiter", |b, p| Box::pin(listing(b, p))),
        ("copy_and_rename", |b, p| Box::pin(copy_rename(b, p))),
        ("create_only_put", |b, p| Box::pin(create_only(b, p))),
        ("multipart_writer", |b, p| Box::pin(multipart(b, p))),
        ("refresh_across_windows", |b, p| Box::pin(refresh(b, p))),
        ("server_rejects_expired", |b, p| Box::pin(expired(b, p))),
        ("server_rejects_wrong_secret", |b, p| {
            Box::pin(wrong_secret(b, p))
        }),
        ("revoked_key_recovery", |b, p| Box::pin(revoked(b, p))),
        ("prefix_scope", |b, p| Box::pin(scope(b, p))),
    ]
}

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

// ---------------------------------------------------------------------------------------
// Helpers for the checks.

const MIB: usize = 1 << 20;

fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

/// A store at `s3://bucket/prefix` refreshing from a provider of `ttl` credentials
/// (`None`: revocable ones).
async fn open_refreshing(
    b: &Backend,
    prefix: &str,
    ttl: Option<Duration>,
    scope: Option<&str>,
) -> (Arc<VendingProvider>, VendedStore) {
    let provider = Arc::new(VendingProvider::new(b.vendor.clone(), ttl, scope));
    let initial = provider.vend().await.expect("initial credentials");
    let store = registry()
        .open(
            &format!("s3://{}/{prefix}", b.bucket),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .expect("open");
    (provider, store)
}

/// A store with fixed options and no provider.
fn open_static(b: &Backend, prefix: &str, options: StorageOptions) -> VendedStore {
    registry()
        .open(
            &format!("s3://{}/{prefix}", b.bucket),
            options,
            None,
            RefreshConfig::default(),
        )
        .expect("open")
}

const HOUR: Option<Duration> = Some(Duration::from_secs(3600));

// ---------------------------------------------------------------------------------------
// The checks. A failed assertion panics; the runner reports it as FAILED.

async fn objects(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let body = Bytes::from_static(b"conformance object body");
    store.put("a.txt", body.clone()).await.unwrap();
    assert_eq!(store.get("a.txt").await.unwrap(), body);
    let head = store.head("a.txt").await.unwrap();
    assert_eq!(head.size, body.len() as u64);
    assert_eq!(head.path, "a.txt");
    let listed = store.list(None).await.unwrap();
    let paths: Vec<_> = listed.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(listed[0].size, body.len() as u64);
    store.delete("a.txt").await.unwrap();
    assert_eq!(kind(store.head("a.txt").await), ErrorKind::NotFound);
    assert_eq!(kind(store.get("a.txt").await), ErrorKind::NotFound);
    assert!(store.list(None).await.unwrap().is_empty());
    Verdict::Passed
}

async fn ranged_reads(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let src = data(3 * MIB + 17, 15);
    store.put("obj", Bytes::from(src.clone())).await.unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for _ in 0..20 {
        let offset = rng.random_range(0..src.len() as u64);
        let len = rng.random_range(1..400_000usize);
        let mut buf = vec![0u8; len];
        let n = store
            .read_range_into("obj", offset, &mut buf)
            .await
            .unwrap();
        let end = (offset as usize + len).min(src.len());
        assert_eq!(n, end - offset as usize, "read at {offset} len {len}");
        assert_eq!(&buf[..n], &src[offset as usize..end]);
    }
    let mut buf = [0u8; 8];
    let at_end = store
        .read_range_into("obj", src.len() as u64, &mut buf)
        .await
        .unwrap();
    assert_eq!(at_end, 0, "a read at the end returns nothing");
    let r = store.get_range("obj", 1000..2000).await.unwrap();
    assert_eq!(&r[..], &src[1000..2000]);
    let ranges = [0..100, 2 * MIB as u64..2 * MIB as u64 + 1000, 100..200];
    let got = store.get_ranges("obj", &ranges).await.unwrap();
    assert_eq!(got.len(), ranges.len());
    for (r, g) in ranges.iter().zip(&got) {
        assert_eq!(&g[..], &src[r.start as usize..r.end as usize]);
    }
    Verdict::Passed
}

async fn listing(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    for p in ["a/1", "a/2", "a/sub/3", "b/4", "top"] {
        store.put(p, Bytes::from(p.to_string())).await.unwrap();
    }
    let listed: Vec<_> = store
        .list_stream(None)
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut paths: Vec<_> = listed.iter().map(|o| o.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["a/1", "a/2", "a/sub/3", "b/4", "top"]);
    let level = store.list_with_delimiter(None).await.unwrap();
    let objects: Vec<_> = level.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["top"]);
    assert_eq!(level.common_prefixes, ["a", "b"]);
    let level = store.list_with_delimiter(Some("a/")).await.unwrap();
    let objects: Vec<_> = level.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["a/1", "a/2"]);
    assert_eq!(level.common_prefixes, ["a/sub"]);
    Verdict::Passed
}

async fn copy_rename(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    store.put("src", Bytes::from_static(b"data")).await.unwrap();
    store.copy("src", "dst").await.unwrap();
    assert_eq!(store.get("dst").await.unwrap(), Bytes::from_static(b"data"));
    assert_eq!(store.get("src").await.unwrap(), Bytes::from_static(b"data"));
    store.rename("dst", "moved").await.unwrap();
    assert_eq!(kind(store.head("dst").await), ErrorKind::NotFound);
    assert_eq!(
        store.get("moved").await.unwrap(),
        Bytes::from_static(b"data")
    );
    Verdict::Passed
}

async fn create_only(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    store
        .put_opts("obj", Bytes::from_static(b"one"), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        kind(
            store
                .put_opts("obj", Bytes::from_static(b"two"), WriteMode::Create)
                .await
        ),
        ErrorKind::AlreadyExists
    );
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from_static(b"one"));
    Verdict::Passed
}

async fn multipart(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let src = data(12 * MIB + 3, 17);
    let mut w = store
        .writer(
            "big.bin",
            WriterOptions {
                part_size: 5 * MIB,
                max_concurrency: 2,
                mode: WriteMode::Overwrite,
            },
        )
        .unwrap();
    for piece in src.chunks(MIB) {
        w.write(piece).await.unwrap();
    }
    assert_eq!(
        kind(store.head("big.bin").await),
        ErrorKind::NotFound,
        "invisible before finish"
    );
    let result = w.finish().await.unwrap();
    assert!(result.e_tag.is_some(), "a completed upload has an ETag");
    let mut buf = vec![0u8; src.len()];
    assert_eq!(
        store.get_into("big.bin", &mut buf).await.unwrap(),
        src.len() as u64
    );
    assert_eq!(Sha256::digest(&buf), Sha256::digest(&src));
    Verdict::Passed
}

/// Credentials announced as living 3 s, 8 s of I/O: the store refreshes several times and
/// no request fails. Against a server that enforces expiry this also proves that no request
/// was signed with an expired key (it would have failed).
async fn refresh(b: Arc<Backend>, prefix: String) -> Verdict {
    let (provider, store) = open_refreshing(&b, &prefix, Some(Duration::from_secs(3)), None).await;
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut i = 0u64;
    while Instant::now() < deadline && i < 100_000 {
        let body = Bytes::from(format!("object {i}"));
        let path = format!("obj-{}", i % 8);
        store.put(&path, body.clone()).await.unwrap();
        assert_eq!(store.get(&path).await.unwrap(), body);
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await; // pacing: spread I/O over 8 s
    }
    assert!(i >= 20, "only {i} round trips in 8 s");
    let stats = store.refresh_stats().expect("a refreshing store");
    assert!(
        stats.fetches >= 3,
        "{} provider fetches in 8 s of 3 s credentials",
        stats.fetches
    );
    assert_eq!(stats.failures, 0, "{stats:?}");
    assert_eq!(stats.endpoint_rejections, 0, "{stats:?}");
    assert_eq!(stats.fetches as usize, provider.calls());
    assert_eq!(stats.generation, stats.fetches + 1, "{stats:?}");
    if b.vendor.fresh_key_per_vend() {
        let distinct: HashSet<_> = provider.keys().into_iter().collect();
        assert!(
            distinct.len() >= 4,
            "{} distinct keys vended",
            distinct.len()
        );
    }
    Verdict::Passed
}

/// A store that does not know the expiry (no `expires_at_millis`, no provider) keeps using a
/// 2 s credential past its end: the server must answer with a credentials error.
async fn expired(b: Arc<Backend>, prefix: String) -> Verdict {
    if !b.caps.enforces_expiry {
        return Verdict::NotProvable(b.missing_expiry.into());
    }
    let ttl = Duration::from_secs(2);
    let mut options = b.vendor.vend(ttl, None).await.unwrap().options;
    options.remove("expires_at_millis");
    let store = open_static(&b, &prefix, options);
    store.put("a", Bytes::from_static(b"1")).await.unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(500)).await; // the scenario: past expiry
    assert_eq!(kind(store.get("a").await), ErrorKind::Credentials);
    Verdict::Passed
}

/// A wrong secret must be refused. Probed against every backend: one that accepts it is
/// reported not provable with what was observed; one that refuses it although its
/// capabilities say otherwise fails (the description is wrong).
async fn wrong_secret(b: Arc<Backend>, prefix: String) -> Verdict {
    let mut options = b
        .vendor
        .vend(Duration::from_secs(3600), None)
        .await
        .unwrap()
        .options;
    options.insert(
        "aws_secret_access_key".into(),
        "wrong-secret-wrong-secret-wrong-secret00".into(),
    );
    let store = open_static(&b, &prefix, options);
    let r = store.put("a", Bytes::from_static(b"1")).await;
    if b.caps.enforces_signature {
        assert_eq!(kind(r), ErrorKind::Credentials);
        Verdict::Passed
    } else {
        assert!(
            r.is_ok(),
            "the server refused a wrong secret although the backend says it does not check \
             signatures: {r:?}"
        );
        Verdict::NotProvable(format!(
            "{} (observed: a wrong secret was accepted)",
            b.missing_signature
        ))
    }
}

/// A revoked key: one request is rejected, the provider is asked once, the retry with the
/// new key succeeds.
async fn revoked(b: Arc<Backend>, prefix: String) -> Verdict {
    if let Err(why) = b.vendor.vend_revocable().await.map(|v| v.access_key_id) {
        return Verdict::NotProvable(why);
    }
    let (provider, store) = open_refreshing(&b, &prefix, None, None).await;
    store.put("a", Bytes::from_static(b"1")).await.unwrap();
    assert_eq!(provider.calls(), 0);
    let gen1 = provider.keys()[0].clone();
    b.vendor.revoke(&gen1).await.unwrap();
    assert_eq!(store.get("a").await.unwrap(), Bytes::from_static(b"1"));
    assert_eq!(provider.calls(), 1, "one refetch after the rejection");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.auth_refetches, 1, "{stats:?}");
    assert_eq!(stats.endpoint_rejections, 1, "{stats:?}");
    let keys = provider.keys();
    assert_ne!(keys[0], keys[keys.len() - 1], "the retry used a new key");
    // And the new key keeps working.
    store.put("b", Bytes::from_static(b"2")).await.unwrap();
    assert_eq!(provider.calls(), 1);
    Verdict::Passed
}

/// A credential scoped to `bucket/<prefix>/in/` works there and is refused under `out/`.
async fn scope(b: Arc<Backend>, prefix: String) -> Verdict {
    if !b.caps.enforces_prefix_scope {
        return Verdict::NotProvable(b.missing_scope.into());
    }
    let inside = format!("{prefix}/in");
    let scope = format!("{}/{inside}/", b.bucket);
    let (provider, store) = open_refreshing(&b, &inside, HOUR, Some(&scope)).await;
    store.put("x", Bytes::from_static(b"in")).await.unwrap();
    assert_eq!(store.get("x").await.unwrap(), Bytes::from_static(b"in"));
    let listed = store.list(None).await.unwrap();
    assert_eq!(listed.len(), 1);
    let options = provider.vend().await.unwrap();
    let outside = open_static(&b, &format!("{prefix}/out"), options);
    assert_eq!(
        kind(outside.put("x", Bytes::from_static(b"out")).await),
        ErrorKind::Credentials
    );
    assert_eq!(kind(outside.get("x").await), ErrorKind::Credentials);
    Verdict::Passed
}
