//! Support for `catalog_lance.rs` (declared there with `#[path]`, since it needs that binary's
//! `common` module): the real Lance Namespace REST server fixture (pylance's `RestAdapter`,
//! started by `tests/fixtures/lance_rest_server.py`, tables on the local S3 endpoint), and a
//! Lance provider pointed at a scripted catalog.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use local_s3::{LocalS3, LocalS3Config};
use vended_storage::catalog::LanceNamespaceProvider;
use vended_storage::StorageOptions;

use crate::catalog_support::{MockCatalog, Reply};
use crate::common::BUCKET;

/// Vended credentials expire this long after each describe.
pub const REFRESH_INTERVAL_MS: u64 = 3000;
/// The server's namespace root inside the bucket.
pub const ROOT: &str = "lance-ns";

// ------------------------------------------------------------------------------------------
// The real server

/// The Python interpreter with pylance, or `None` (skip) when not configured and absent.
pub fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("VENDED_STORAGE_PYTHON") {
        let p = PathBuf::from(p);
        assert!(
            p.exists(),
            "VENDED_STORAGE_PYTHON={} does not exist",
            p.display()
        );
        return Some(p);
    }
    let default = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    default.exists().then_some(default)
}

pub struct LanceServer {
    child: Child,
    /// Kept open: the server exits when it is closed (also when this process dies).
    _stdin: ChildStdin,
    pub url: String,
}

impl Drop for LanceServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Fixture {
    pub s3: LocalS3,
    pub server: LanceServer,
    /// The access key id the server vends (and writes the tables with).
    pub vended_key: String,
}

static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();

/// Starts (once per test binary) the local S3 endpoint and the Lance server with tables
/// `db.orders` (a real Lance table with 3 rows) and `db.events` (declared only).
pub fn fixture(test: &str) -> Option<&'static Fixture> {
    let fixture = FIXTURE.get_or_init(|| {
        let python = python()?;
        let s3 = LocalS3::start_blocking(LocalS3Config::default()).expect("start local S3");
        s3.create_bucket(BUCKET).unwrap();
        // Long-lived temporary key, scoped to the namespace root: the server vends it with a
        // fresh expires_at_millis on every describe.
        let creds = s3.issue_credentials(
            Duration::from_secs(3600),
            Some(&format!("{BUCKET}/{ROOT}/")),
        );
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lance_rest_server.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .args(["--s3-endpoint", &s3.endpoint()])
            .args(["--root", &format!("s3://{BUCKET}/{ROOT}")])
            .args(["--refresh-interval-ms", &REFRESH_INTERVAL_MS.to_string()])
            .args([
                "--table",
                "db.orders",
                "--declare",
                "db.events",
                "--exit-on-stdin-eof",
            ])
            .env("VENDED_AWS_ACCESS_KEY_ID", &creds.access_key_id)
            .env("VENDED_AWS_SECRET_ACCESS_KEY", &creds.secret_access_key)
            .env("VENDED_AWS_SESSION_TOKEN", &creds.session_token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot run {} {}: {e}", python.display(), script.display())
            });
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the Lance server did not print LISTENING within 120 s");
        let url = line
            .trim()
            .strip_prefix("LISTENING ")
            .unwrap_or_else(|| {
                panic!(
                    "the Lance server failed to start (see its stderr above); first line: {line:?}"
                )
            })
            .to_string();
        Some(Fixture {
            s3,
            server: LanceServer {
                child,
                _stdin: stdin,
                url,
            },
            vended_key: creds.access_key_id,
        })
    });
    if fixture.is_none() {
        println!(
            "SKIPPED {test}: no Python with pylance (set VENDED_STORAGE_PYTHON, or create .venv: \
             python3 -m venv .venv && .venv/bin/pip install pylance==14.0.2)"
        );
    }
    fixture.as_ref()
}

/// What a client brings itself: the endpoint, region and allow-http (the catalog vends only
/// credentials, C10).
pub fn client_options(s3: &LocalS3) -> StorageOptions {
    HashMap::from([
        ("aws_endpoint".to_string(), s3.endpoint()),
        ("aws_region".to_string(), "us-east-1".to_string()),
        ("aws_allow_http".to_string(), "true".to_string()),
    ])
}

pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

pub const TOKEN: &str = "scripted-tenant-token-0123456789";

pub fn scripted(reply: Reply) -> (MockCatalog, LanceNamespaceProvider) {
    let catalog = MockCatalog::start(move |_| reply.clone());
    let provider = LanceNamespaceProvider::builder(catalog.url(), ["db", "orders"])
        .bearer_token(TOKEN)
        .header("x-api-key", "scripted-api-key-abcdef")
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    (catalog, provider)
}
