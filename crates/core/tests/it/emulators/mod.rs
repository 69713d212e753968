//! Test support for the Azure and GCS tests: starting Azurite and fake-gcs-server on
//! 127.0.0.1 (installed by `bin/install-emulators.sh` under `.tools/`), minting Azure SAS
//! tokens with Azurite's public development key, and a small HTTP proxy that counts the
//! endpoint's rejections and, for GCS, accepts only bearer tokens it issued and rejects expired
//! or revoked ones with 401 (fake-gcs-server checks no token at all) and refuses an upload
//! whose body does not match its `x-goog-hash` (fake-gcs-server checks none).
//!
//! When an emulator is missing the test fails, telling to run `bin/install-emulators.sh`,
//! unless `VENDED_STORAGE_SKIP_EMULATORS=1` is set: then it prints `SKIPPED` and returns.

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

mod flip;
mod gcs_errors;
mod gcs_hash;
pub mod oauth;
mod sas;
pub use flip::ProxyFlips;
use gcs_errors::gcs_xml_error;
#[allow(unused_imports)] // each test binary uses some
pub use sas::{account_sas, container_sas, sas_expiry};

/// Set to `1` to skip (with a printed `SKIPPED`) the tests whose emulator is not installed.
pub const SKIP_ENV: &str = "VENDED_STORAGE_SKIP_EMULATORS";
/// Longest wait for an emulator to say it listens.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Azurite's well-known development account and key (public, emulator only:
/// <https://learn.microsoft.com/en-us/azure/storage/common/storage-use-azurite#well-known-storage-account-and-key>).
pub const AZURITE_ACCOUNT: &str = "devstoreaccount1";
pub const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path of an emulator executable: `$env_var` if set, else `.tools/<relative>`. `None`
/// (after printing SKIPPED) when it is missing and [`SKIP_ENV`] is `1`.
///
/// # Panics
/// When it is missing and [`SKIP_ENV`] is not set: the test must not pass silently.
pub fn tool(test: &str, env_var: &str, relative: &str) -> Option<PathBuf> {
    let path = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".tools").join(relative));
    if path.exists() {
        return Some(path);
    }
    if std::env::var(SKIP_ENV).as_deref() == Ok("1") {
        eprintln!(
            "SKIPPED {test}: {} not found and {SKIP_ENV}=1",
            path.display()
        );
        return None;
    }
    panic!(
        "{} not found: run bin/install-emulators.sh (or set {env_var}, or {SKIP_ENV}=1 to skip)",
        path.display()
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// A child process killed (and reaped) on drop, with its scratch directory removed.
pub struct Emulator {
    child: Child,
    dir: PathBuf,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// How long the start took (spawn to "listening").
    pub started_in: Duration,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Spawns `cmd`, waits (at most [`START_TIMEOUT`]) for a line containing `ready` on stdout or
/// stderr, and keeps draining both so the child never blocks on a full pipe.
fn spawn(mut cmd: Command, dir: PathBuf, port: u16, ready: &'static str) -> Emulator {
    let started = std::time::Instant::now();
    let mut child = cmd
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let (tx, rx) = mpsc::channel::<String>();
    let pipes: Vec<Box<dyn Read + Send>> = vec![
        Box::new(child.stdout.take().unwrap()),
        Box::new(child.stderr.take().unwrap()),
    ];
    for pipe in pipes {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(|l| l.ok()) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    let mut seen = Vec::new();
    let deadline = started + START_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(ready) => break,
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{cmd:?} did not report '{ready}' within {START_TIMEOUT:?}; output:\n{}",
                    seen.join("\n")
                );
            }
        }
    }
    // Keep draining in the background (the threads own the pipes; the receiver goes away).
    std::thread::spawn(move || while rx.recv().is_ok() {});
    Emulator {
        child,
        dir,
        url: format!("http://127.0.0.1:{port}"),
        started_in: started.elapsed(),
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "vended-storage-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Starts Azurite's blob service (in memory, telemetry off) on a free port, or `None` when it
/// is not installed and skipping is allowed.
pub fn start_azurite(test: &str) -> Option<Emulator> {
    let bin = tool(
        test,
        "VENDED_STORAGE_AZURITE",
        "azurite/node_modules/.bin/azurite-blob",
    )?;
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--inMemoryPersistence", "--skipApiVersionCheck", "--loose"])
        .arg("--disableTelemetry");
    Some(spawn(
        cmd,
        scratch_dir("azurite"),
        port,
        "successfully listens on",
    ))
}

/// Starts fake-gcs-server (memory backend, plain HTTP) on a free port, or `None` when it is not
/// installed and skipping is allowed.
pub fn start_fake_gcs(test: &str) -> Option<Emulator> {
    let bin = tool(test, "VENDED_STORAGE_FAKE_GCS_SERVER", "fake-gcs-server")?;
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args([
        "-scheme",
        "http",
        "-host",
        "127.0.0.1",
        "-backend",
        "memory",
    ])
    .args(["-port", &port.to_string()])
    .args(["-public-host", &format!("127.0.0.1:{port}")]);
    Some(spawn(cmd, scratch_dir("fake-gcs"), port, "server started"))
}

/// Creates `bucket` in fake-gcs-server (JSON API, straight to the emulator).
pub async fn create_gcs_bucket(gcs: &Emulator, bucket: &str) {
    let r = reqwest::Client::new()
        .post(format!("{}/storage/v1/b", gcs.url))
        .body(format!("{{\"name\":\"{bucket}\"}}"))
        .send()
        .await
        .expect("create bucket");
    assert!(r.status().is_success(), "create bucket: {}", r.status());
}

/// Epoch milliseconds now.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Creates `container` in Azurite with an account SAS.
pub async fn create_container(azurite: &Emulator, container: &str) {
    let sas = account_sas(now_millis() + 60_000, false);
    let r = reqwest::Client::new()
        .put(format!(
            "{}/{AZURITE_ACCOUNT}/{container}?restype=container&{sas}",
            azurite.url
        ))
        .header("x-ms-version", "2021-08-06")
        .header("content-length", "0")
        .send()
        .await
        .expect("create container");
    assert!(
        r.status().is_success(),
        "create container: {} {}",
        r.status(),
        r.text().await.unwrap_or_default()
    );
}

/// Bearer tokens a [`Proxy`] accepts: issued here, each with an expiry; revocable.
#[derive(Default)]
pub struct TokenAuthority {
    tokens: Mutex<HashMap<String, (i64, bool)>>,
    next: AtomicUsize,
}

impl TokenAuthority {
    /// Issues a token valid until `expires_at_millis`.
    pub fn issue(&self, expires_at_millis: i64) -> String {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let token = format!("ya29.test-{n}-{:016x}", rand::random::<u64>());
        self.tokens
            .lock()
            .unwrap()
            .insert(token.clone(), (expires_at_millis, false));
        token
    }

    /// Revokes `token` (later requests with it get 401).
    pub fn revoke(&self, token: &str) {
        if let Some(t) = self.tokens.lock().unwrap().get_mut(token) {
            t.1 = true;
        }
    }

    fn accepts(&self, token: Option<&str>) -> bool {
        let Some(token) = token else { return false };
        match self.tokens.lock().unwrap().get(token) {
            Some((exp, revoked)) => !revoked && now_millis() < *exp,
            None => false,
        }
    }
}

/// What a [`Proxy`] saw.
#[derive(Default, Debug)]
pub struct ProxyStats {
    /// Requests received.
    pub requests: AtomicUsize,
    /// Requests the proxy itself rejected (GCS mode: missing, unknown, expired or revoked
    /// token).
    pub rejected_by_proxy: AtomicUsize,
    /// 401/403 answers of the emulator (Azure: expired or badly signed SAS).
    pub rejected_by_upstream: AtomicUsize,
}

impl ProxyStats {
    /// Every rejection, by the proxy or the emulator.
    pub fn rejections(&self) -> usize {
        self.rejected_by_proxy.load(Ordering::SeqCst)
            + self.rejected_by_upstream.load(Ordering::SeqCst)
    }
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

struct ProxyState {
    upstream: String,
    client: reqwest::Client,
    tokens: Option<Arc<TokenAuthority>>,
    stats: Arc<ProxyStats>,
    flips: Arc<ProxyFlips>,
}

/// A forwarding HTTP/1 proxy on 127.0.0.1 (a task on the test's runtime, aborted on drop).
///
/// GCS mode (`tokens` given) also rewrites the two requests stock fake-gcs-server 1.54 does not
/// route for `object_store`: a plain XML `PUT /<bucket>/<object>` becomes its signed-URL upload
/// (`?X-Goog-Algorithm=none`), and an XML `DELETE` becomes the JSON API delete. Lists and
/// multipart uploads (XML API) are not served by fake-gcs-server. Its answers to reads of a
/// missing object or bucket become GCS's 404 `NoSuchKey` / `NoSuchBucket` (see
/// `gcs_xml_error`). It can flip one bit of a request or response body (see [`ProxyFlips`]).
pub struct Proxy {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    pub stats: Arc<ProxyStats>,
    /// One-shot bit flips of bodies passing through.
    pub flips: Arc<ProxyFlips>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy to `upstream` (`http://host:port`); with `tokens`, only bearer tokens
    /// issued by it pass.
    pub async fn start(upstream: &str, tokens: Option<Arc<TokenAuthority>>) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let stats = Arc::new(ProxyStats::default());
        let flips = Arc::new(ProxyFlips::default());
        let state = Arc::new(ProxyState {
            upstream: upstream.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            tokens,
            stats: stats.clone(),
            flips: flips.clone(),
        });
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(forward(req, &state).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Proxy {
            url,
            stats,
            flips,
            task,
        }
    }
}

fn status_response(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

async fn forward(req: Request<Incoming>, state: &ProxyState) -> Response<Full<Bytes>> {
    state.stats.requests.fetch_add(1, Ordering::SeqCst);
    let gcs = state.tokens.is_some();
    if let Some(tokens) = &state.tokens {
        let token = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !tokens.accepts(token) {
            state.stats.rejected_by_proxy.fetch_add(1, Ordering::SeqCst);
            return status_response(
                StatusCode::UNAUTHORIZED,
                r#"{"error":{"code":401,"message":"Invalid Credentials"}}"#,
            );
        }
    }
    let method = req.method().clone();
    let mut path_and_query = req
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let mut translated_put = false;
    if gcs && req.uri().query().is_none() {
        let path = req.uri().path();
        if method == hyper::Method::PUT && !req.headers().contains_key("x-goog-copy-source") {
            path_and_query = format!("{path}?X-Goog-Algorithm=none");
            translated_put = true;
        } else if method == hyper::Method::DELETE {
            if let Some((bucket, object)) = path.trim_start_matches('/').split_once('/') {
                let object = percent_encoding::percent_decode_str(object).decode_utf8_lossy();
                let object: String =
                    url::form_urlencoded::byte_serialize(object.as_bytes()).collect();
                path_and_query = format!("/storage/v1/b/{bucket}/o/{}", object.replace('+', "%20"));
            }
        }
    }
    let headers = req.headers().clone();
    let request_path = req.uri().path().to_string();
    let request_method = method.clone();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return status_response(StatusCode::BAD_REQUEST, "{}"),
    };
    let body = state.flips.request_body(&request_path, body);
    if gcs && request_method == hyper::Method::PUT {
        if let Some(refused) = gcs_hash::refuse_mismatch(&headers, &body) {
            return refused;
        }
    }
    let mut upstream = state
        .client
        .request(method, format!("{}{path_and_query}", state.upstream));
    for (name, value) in &headers {
        if name != hyper::header::HOST
            && name != hyper::header::CONTENT_LENGTH
            && name != hyper::header::CONNECTION
        {
            upstream = upstream.header(name, value);
        }
    }
    let answer = match upstream.body(body).send().await {
        Ok(a) => a,
        Err(_) => return status_response(StatusCode::BAD_GATEWAY, "{}"),
    };
    let status = answer.status();
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        state
            .stats
            .rejected_by_upstream
            .fetch_add(1, Ordering::SeqCst);
    }
    let mut answer_headers = answer.headers().clone();
    let mut bytes = answer.bytes().await.unwrap_or_default();
    let mut status = status;
    if gcs {
        if let Some((s, b)) =
            gcs_xml_error(state, &request_method, &request_path, status, &bytes).await
        {
            status = s;
            bytes = b;
            answer_headers.remove(hyper::header::CONTENT_LENGTH);
            answer_headers.insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/xml"),
            );
        }
    }
    // fake-gcs-server's signed-URL upload answers without the ETag header object_store wants;
    // the object's JSON carries it.
    let etag = (translated_put
        && status.is_success()
        && !answer_headers.contains_key(hyper::header::ETAG))
    .then(|| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
    .flatten()
    .and_then(|v| v.get("etag").and_then(|e| e.as_str()).map(str::to_string))
    .and_then(|e| hyper::header::HeaderValue::from_str(&format!("\"{e}\"")).ok());
    let bytes = state.flips.response_body(&request_path, bytes);
    let mut response = Response::new(Full::new(bytes));
    *response.status_mut() = status;
    for (name, value) in &answer_headers {
        if name != hyper::header::TRANSFER_ENCODING && name != hyper::header::CONNECTION {
            response.headers_mut().append(name, value.clone());
        }
    }
    if let Some(etag) = etag {
        response.headers_mut().insert(hyper::header::ETAG, etag);
    }
    response
}
