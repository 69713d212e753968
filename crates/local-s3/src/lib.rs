#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod admin;
mod answers;
mod auth;
mod faults;
mod permissions;
mod server;
mod state;
mod store;
mod sts;
mod types;

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use faults::{FlipCounts, FlipSide};
pub use types::{
    IncompleteUpload, KeyStats, Permissions, RequestRecord, TemporaryCredentials, REASON_BAD_TOKEN,
    REASON_DENIED, REASON_EXPIRED, REASON_INVALID_KEY,
};

use server::{Frontend, ServerHandle};
use state::{Scope, State};

/// Default root access key id.
pub const DEFAULT_ROOT_ACCESS_KEY: &str = "vended-root";
/// Default root secret access key.
pub const DEFAULT_ROOT_SECRET_KEY: &str = "vended-root-secret";
/// Region clients should sign with (any region is accepted).
pub const REGION: &str = "us-east-1";

/// How to start a [`LocalS3`].
#[derive(Clone)]
pub struct LocalS3Config {
    /// Long-lived root access key id; requests signed with it are always allowed.
    pub root_access_key: String,
    /// Root secret access key.
    pub root_secret_key: String,
    /// Where objects are stored (created if missing, kept on shutdown). `None` = a fresh
    /// directory under the system temp dir, removed when the server is shut down or dropped.
    pub data_dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1; `0` picks a free port.
    pub port: u16,
    /// Throughput mode: when `data_dir` is `None`, the fresh directory is made under
    /// `/dev/shm` (tmpfs: objects live in memory, no disk I/O) instead of the system temp
    /// dir. Everything else is unchanged: SigV4, session tokens, expiry and revocation are
    /// checked as always. For benchmarks whose objects fit in memory.
    pub in_memory: bool,
}

impl Default for LocalS3Config {
    fn default() -> Self {
        LocalS3Config {
            root_access_key: DEFAULT_ROOT_ACCESS_KEY.to_owned(),
            root_secret_key: DEFAULT_ROOT_SECRET_KEY.to_owned(),
            data_dir: None,
            port: 0,
            in_memory: false,
        }
    }
}

impl fmt::Debug for LocalS3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalS3Config")
            .field("root_access_key", &self.root_access_key)
            .field("root_secret_key", &"<redacted>")
            .field("data_dir", &self.data_dir)
            .field("port", &self.port)
            .field("in_memory", &self.in_memory)
            .finish()
    }
}

/// A running local S3 endpoint. Stops on [`LocalS3::shutdown`] or when dropped (dropping
/// blocks the current thread for at most about a second while connections close).
pub struct LocalS3 {
    state: Arc<State>,
    addr: SocketAddr,
    server: Option<ServerHandle>,
    temp_dir: Option<PathBuf>,
}

impl fmt::Debug for LocalS3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalS3")
            .field("endpoint", &self.endpoint())
            .field("data_dir", &self.state.data_dir())
            .finish_non_exhaustive()
    }
}

/// Removes `local-s3-{pid}-{hex}` temp dirs left by processes that no longer exist (a server
/// kept in a `static`, or a killed test process, never runs its `Drop`). Linux only.
fn sweep_stale_temp_dirs(base: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("local-s3-")) else {
            continue;
        };
        let Some((pid, suffix)) = rest.split_once('-') else {
            continue;
        };
        let ours = suffix.len() == 16 && suffix.bytes().all(|b| b.is_ascii_hexdigit());
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if ours && pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Where throughput mode keeps its objects: a memory-backed file system.
const MEMORY_DIR: &str = "/dev/shm";

fn fresh_temp_dir(in_memory: bool) -> io::Result<PathBuf> {
    use rand::Rng;
    let base = if in_memory {
        let base = PathBuf::from(MEMORY_DIR);
        if !base.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("in-memory mode needs the tmpfs directory {MEMORY_DIR}, which is missing"),
            ));
        }
        base
    } else {
        std::env::temp_dir()
    };
    sweep_stale_temp_dirs(&base);
    let suffix: u64 = rand::rng().random();
    let dir = base.join(format!("local-s3-{}-{suffix:016x}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

impl LocalS3 {
    /// Binds 127.0.0.1:`config.port` and starts serving. Needs no particular runtime: the
    /// server runs on its own thread (the function is `async` for convenience in tests).
    ///
    /// # Errors
    /// When the port cannot be bound or the data directory cannot be created.
    pub async fn start(config: LocalS3Config) -> io::Result<LocalS3> {
        Self::start_blocking(config)
    }

    /// Same as [`LocalS3::start`], callable from synchronous code.
    ///
    /// # Errors
    /// When the port cannot be bound or the data directory cannot be created.
    pub fn start_blocking(config: LocalS3Config) -> io::Result<LocalS3> {
        let (data_dir, temp_dir) = match config.data_dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir)?;
                (dir, None)
            }
            None => {
                let dir = fresh_temp_dir(config.in_memory)?;
                (dir.clone(), Some(dir))
            }
        };
        let cleanup = |err: io::Error| {
            if let Some(dir) = &temp_dir {
                let _ = std::fs::remove_dir_all(dir);
            }
            err
        };
        let state = Arc::new(State::new(
            config.root_access_key,
            config.root_secret_key,
            data_dir,
        ));
        let listener =
            std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, config.port)).map_err(cleanup)?;
        let addr = listener.local_addr().map_err(cleanup)?;
        let frontend = Frontend::new(state.clone()).map_err(cleanup)?;
        let server = ServerHandle::spawn(listener, frontend).map_err(cleanup)?;
        Ok(LocalS3 {
            state,
            addr,
            server: Some(server),
            temp_dir,
        })
    }

    /// Base URL, `http://127.0.0.1:PORT` (no trailing slash). Use path-style addressing.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound TCP port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Directory holding the buckets (one sub-directory each).
    pub fn data_dir(&self) -> &Path {
        self.state.data_dir()
    }

    /// Root access key id.
    pub fn root_access_key(&self) -> &str {
        self.state.root_access_key()
    }

    /// Root secret access key.
    pub fn root_secret_key(&self) -> &str {
        self.state.root_secret_key()
    }

    /// Creates a bucket (idempotent).
    ///
    /// # Errors
    /// `InvalidInput` for names outside the S3 rules (3–63 lower-case letters, digits, `.`, `-`),
    /// or the I/O error of creating the directory.
    pub fn create_bucket(&self, name: &str) -> io::Result<()> {
        self.state.create_bucket(name)
    }

    /// Issues temporary credentials valid for `ttl` from now (millisecond precision;
    /// `Duration::ZERO` gives credentials that are already expired). `scope`, if given, is
    /// `bucket` or `bucket/prefix`: the key may then only touch objects of that bucket whose
    /// keys start with `prefix` (a plain string prefix) and list with such prefixes.
    ///
    /// # Panics
    /// If `scope` is not `bucket` or `bucket/prefix` with a valid bucket name.
    pub fn issue_credentials(&self, ttl: Duration, scope: Option<&str>) -> TemporaryCredentials {
        self.issue_credentials_with(ttl, scope, Permissions::READ_WRITE)
    }

    /// [`LocalS3::issue_credentials`] with `permissions`: [`Permissions::READ_ONLY`] for a key
    /// that may only read and list, `.without_list()` for one that may not list (403
    /// `AccessDenied` with a message saying so, naming the operation).
    ///
    /// # Panics
    /// If `scope` is not `bucket` or `bucket/prefix` with a valid bucket name.
    pub fn issue_credentials_with(
        &self,
        ttl: Duration,
        scope: Option<&str>,
        permissions: Permissions,
    ) -> TemporaryCredentials {
        let scope = scope.map(|s| Scope::parse(s).unwrap_or_else(|msg| panic!("{msg}")));
        self.state.issue(ttl, scope, permissions)
    }

    /// Runs this endpoint's clock `offset` milliseconds ahead of the machine's (negative:
    /// behind): credentials it issues expire, and are judged expired, by that clock, and its
    /// answers' `Date` header shows it. For tests of clients whose clock is off.
    pub fn set_clock_offset_millis(&self, offset: i64) {
        self.state.set_clock_offset_millis(offset);
    }

    /// With `on`, a bulk `DeleteObjects` (`POST /bucket?delete`) signed by a key scoped to a
    /// prefix is refused with 403 `AccessDenied`, whatever keys it names: moto authorizes it
    /// at bucket level. Off (the default), each named key is checked against the scope.
    pub fn set_bulk_delete_bucket_level(&self, on: bool) {
        self.state.set_bulk_delete_bucket_level(on);
    }

    /// Revokes a temporary key: its later requests get 403 `InvalidAccessKeyId`. Unknown keys
    /// and the root key are ignored.
    pub fn revoke(&self, access_key_id: &str) {
        self.state.revoke(access_key_id);
    }

    /// Counters for one access key (all zero if it was never seen). Unsigned requests count
    /// under the empty key `""`.
    pub fn key_stats(&self, access_key_id: &str) -> KeyStats {
        self.state.key_stats(access_key_id)
    }

    /// Counters for every access key seen so far.
    pub fn all_stats(&self) -> HashMap<String, KeyStats> {
        self.state.all_stats()
    }

    /// The last (up to 100 000) S3/STS requests, oldest first. Admin calls are not recorded.
    pub fn request_log(&self) -> Vec<RequestRecord> {
        self.state.request_log()
    }

    /// Multipart uploads that were started and neither completed nor aborted (their parts
    /// still take space), in `bucket` if given, else in every bucket; ordered by bucket, key,
    /// then start time. A test asserts with it that a failed upload left no parts behind.
    /// Also served as `GET /_admin/uploads[?bucket=NAME]` and, per bucket, as S3
    /// `ListMultipartUploads`.
    pub fn incomplete_uploads(&self, bucket: Option<&str>) -> Vec<IncompleteUpload> {
        self.state.uploads().list(bucket)
    }

    /// Arms one bit flip in the next PutObject or UploadPart body received for
    /// `bucket`/`key`: the lowest bit of its middle byte (`len / 2`) is flipped after the body
    /// was received and before its checksums are computed, so a client that sent a checksum
    /// gets 400 `BadDigest` and nothing is stored. One-shot; counted in
    /// [`LocalS3::flips`]`.request`. Also `POST /_admin/flip?key=bucket/key&where=request`.
    pub fn flip_next_request(&self, bucket: &str, key: &str) {
        self.arm_flip(FlipSide::Request, bucket, key, None);
    }

    /// Arms one bit flip in the body the next GetObject of `bucket`/`key` sends: the lowest
    /// bit of its middle byte; the headers, the stored checksums among them, are unchanged,
    /// so only the client's own check can notice. One-shot; counted in
    /// [`LocalS3::flips`]`.response`. Also `POST /_admin/flip?key=bucket/key&where=response`.
    pub fn flip_next_response(&self, bucket: &str, key: &str) {
        self.arm_flip(FlipSide::Response, bucket, key, None);
    }

    /// Arms one bit flip of `side` for `bucket`/`key` at byte `offset` of the body (`None`:
    /// the middle byte, `len / 2`; for a ranged GET, of the bytes sent). The flip waits for a
    /// body of that key long enough to hold the offset (an empty body, a HEAD or another key
    /// leaves it armed), is used once, after any flip armed earlier for the same side
    /// and key.
    pub fn arm_flip(&self, side: FlipSide, bucket: &str, key: &str, offset: Option<u64>) {
        self.state.faults().arm(side, bucket, key, offset);
    }

    /// Arms `count` lost answers for PutObject of `bucket`/`key`: each of the next `count`
    /// successful PutObjects of the key is stored, then answered `500 InternalError`, so the
    /// client retries a write that landed. Also `POST
    /// /_admin/lose-answer?key=bucket/key[&count=N]`.
    pub fn lose_next_put_answers(&self, bucket: &str, key: &str, count: u64) {
        self.state.answers().lose_answers(bucket, key, count);
    }

    /// `(answers lost so far, lost answers still armed)`. Also `GET /_admin/lost-answers`.
    pub fn lost_answers(&self) -> (u64, u64) {
        self.state.answers().counts()
    }

    /// Makes PutObject in `bucket` ignore `If-None-Match` and `If-Match` (`true`: every PUT
    /// overwrites, as servers without conditional writes do) or honour them again. Also `POST
    /// /_admin/ignore-conditions?bucket=B[&ignore=false]`.
    pub fn ignore_conditions(&self, bucket: &str, ignore: bool) {
        self.state.answers().ignore_conditions(bucket, ignore);
    }

    /// How many bodies had a bit flipped so far, by side, and how many flips are still armed.
    /// Also `GET /_admin/flips`.
    pub fn flips(&self) -> FlipCounts {
        self.state.faults().counts()
    }

    /// `object_store` storage options for these credentials against this endpoint:
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`, `aws_endpoint`,
    /// `aws_region` (`us-east-1`), `aws_allow_http` (`true`) and `expires_at_millis` (epoch
    /// milliseconds as a decimal string).
    pub fn storage_options(&self, creds: &TemporaryCredentials) -> HashMap<String, String> {
        let mut options = self.base_options(&creds.access_key_id, &creds.secret_access_key);
        options.insert("aws_session_token".to_owned(), creds.session_token.clone());
        options.insert(
            "expires_at_millis".to_owned(),
            creds.expires_at_millis.to_string(),
        );
        options
    }

    /// `object_store` storage options for the root key (no token, no expiry).
    pub fn root_storage_options(&self) -> HashMap<String, String> {
        self.base_options(self.root_access_key(), self.root_secret_key())
    }

    fn base_options(&self, access_key: &str, secret: &str) -> HashMap<String, String> {
        [
            ("aws_access_key_id", access_key.to_owned()),
            ("aws_secret_access_key", secret.to_owned()),
            ("aws_endpoint", self.endpoint()),
            ("aws_region", REGION.to_owned()),
            ("aws_allow_http", "true".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Stops accepting connections, lets in-flight requests finish (up to about a second),
    /// and removes the temporary data directory if one was created.
    pub async fn shutdown(mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await;
        }
    }
}

impl Drop for LocalS3 {
    fn drop(&mut self) {
        drop(self.server.take());
        if let Some(dir) = self.temp_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
