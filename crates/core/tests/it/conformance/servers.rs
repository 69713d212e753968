//! Third-party S3 servers started by the conformance tests: moto's server and LocalStack,
//! each a child process in its own process group on a free 127.0.0.1 port, killed on drop.
//! Installed by `bin/install-s3-servers.sh` under `.tools/`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::sigv4::{call, form_encode, xml_value, Keys};
use super::{s3_options, Backend, Capabilities, Vended, Vendor};

/// Set to `1` to skip the third-party servers when they are not installed.
pub const SKIP_ENV: &str = "VENDED_STORAGE_SKIP_S3_SERVERS";

/// The workspace's `.tools` directory.
fn tools_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools")
}

/// The Python of a tool's venv: `$env_var`, else `.tools/<venv>/bin/python`; `None` when
/// missing.
pub fn tool_python(env_var: &str, venv: &str) -> Option<PathBuf> {
    let p = std::env::var_os(env_var)
        .map(PathBuf::from)
        .unwrap_or_else(|| tools_dir().join(venv).join("bin/python"));
    p.exists().then_some(p)
}

/// The reason the installer wrote to `.tools/<file>` when it could not install a server.
pub fn unavailable_reason(file: &str) -> Option<String> {
    std::fs::read_to_string(tools_dir().join(file))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether missing servers are to be skipped.
pub fn skip_requested() -> bool {
    std::env::var(SKIP_ENV).is_ok_and(|v| v == "1")
}

/// A free port on 127.0.0.1 (bound, then released for the child to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A child server process in a process group of its own; the group is killed on drop.
pub struct ServerProcess {
    child: Child,
    /// Where the child's stdout and stderr go (shown when it does not start).
    pub log: PathBuf,
}

impl ServerProcess {
    pub fn spawn(mut cmd: Command, log_name: &str) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance");
        std::fs::create_dir_all(&dir)?;
        let log = dir.join(log_name);
        let out = std::fs::File::create(&log)?;
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0);
        Ok(Self {
            child: cmd.spawn()?,
            log,
        })
    }

    /// Polls `url` until it answers 2xx, the child exits, or `limit` passes.
    pub async fn wait_ready(&mut self, url: &str, limit: Duration) -> Result<(), String> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("exited with {status}; log: {}", self.log.display()));
            }
            if let Ok(r) = client.get(url).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await; // readiness poll
        }
        Err(format!(
            "not ready after {limit:?}; log: {}",
            self.log.display()
        ))
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on the process group this struct created (process_group(0) made
        // the child its leader); no memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// moto

const MOTO_BUCKET: &str = "conformance";
const MOTO_SETUP_KEYS: (&str, &str) = ("AKIASETUPSETUPSETUP0", "setup-secret");
const ALLOW_ALL: &str =
    r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#;
const TRUST_ALL: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}"#;
const REVOCABLE_USER: &str = "conformance-revocable";

/// moto's server with auth switched on, an admin IAM user, a role to assume and a bucket.
pub struct Moto {
    _process: ServerProcess,
    endpoint: String,
    admin: Keys,
    client: reqwest::Client,
    scoped_users: AtomicUsize,
}

impl Moto {
    /// Starts `python -m moto.server` and prepares it; `Err` with the reason.
    pub async fn start(python: &std::path::Path) -> Result<Arc<Self>, String> {
        let port = free_port();
        let mut cmd = Command::new(python);
        cmd.args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ]);
        let mut process = ServerProcess::spawn(cmd, "moto.log").map_err(|e| e.to_string())?;
        let endpoint = format!("http://127.0.0.1:{port}");
        process
            .wait_ready(
                &format!("{endpoint}/moto-api/data.json"),
                Duration::from_secs(30),
            )
            .await?;
        let client = reqwest::Client::new();
        let setup = Keys {
            access_key_id: MOTO_SETUP_KEYS.0.into(),
            secret: MOTO_SETUP_KEYS.1.into(),
        };
        let iam = |body: String| call(&client, &setup, &endpoint, "POST", "/", "iam", body);
        // Before auth: an admin user allowed everything, a role to assume, a user whose keys
        // the revocation check creates and deletes.
        for user in ["conformance-admin", REVOCABLE_USER] {
            iam(form_encode(&[
                ("Action", "CreateUser"),
                ("Version", "2010-05-08"),
                ("UserName", user),
            ]))
            .await?;
            iam(form_encode(&[
                ("Action", "PutUserPolicy"),
                ("Version", "2010-05-08"),
                ("UserName", user),
                ("PolicyName", "all"),
                ("PolicyDocument", ALLOW_ALL),
            ]))
            .await?;
        }
        iam(form_encode(&[
            ("Action", "CreateRole"),
            ("Version", "2010-05-08"),
            ("RoleName", "conformance-role"),
            ("AssumeRolePolicyDocument", TRUST_ALL),
        ]))
        .await?;
        iam(form_encode(&[
            ("Action", "PutRolePolicy"),
            ("Version", "2010-05-08"),
            ("RoleName", "conformance-role"),
            ("PolicyName", "all"),
            ("PolicyDocument", ALLOW_ALL),
        ]))
        .await?;
        let xml = iam(form_encode(&[
            ("Action", "CreateAccessKey"),
            ("Version", "2010-05-08"),
            ("UserName", "conformance-admin"),
        ]))
        .await?;
        let admin = access_key(&xml)?;
        call(
            &client,
            &setup,
            &endpoint,
            "PUT",
            &format!("/{MOTO_BUCKET}"),
            "s3",
            String::new(),
        )
        .await?;
        // Auth on: every later request must carry a valid signature of a known key.
        let r = client
            .post(format!("{endpoint}/moto-api/reset-auth"))
            .body("0")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !r.status().is_success() {
            return Err(format!("reset-auth: {}", r.status()));
        }
        Ok(Arc::new(Self {
            _process: process,
            endpoint,
            admin,
            client,
            scoped_users: AtomicUsize::new(0),
        }))
    }

    async fn iam(&self, pairs: &[(&str, &str)]) -> Result<String, String> {
        let mut all = pairs.to_vec();
        all.push(("Version", "2010-05-08"));
        call(
            &self.client,
            &self.admin,
            &self.endpoint,
            "POST",
            "/",
            "iam",
            form_encode(&all),
        )
        .await
    }

    /// The backend description for the suite.
    pub fn backend(self: &Arc<Self>) -> Backend {
        Backend {
            name: "moto",
            bucket: MOTO_BUCKET.into(),
            caps: Capabilities {
                enforces_expiry: false,
                enforces_signature: true,
                enforces_prefix_scope: true,
                atomic_conditional_writes: false,
            },
            vendor: self.clone(),
            missing_expiry: "moto accepts expired STS credentials, and its AssumeRole \
                             DurationSeconds minimum is 900 s",
            missing_signature: "",
            missing_scope: "",
        }
    }
}

fn access_key(xml: &str) -> Result<Keys, String> {
    Ok(Keys {
        access_key_id: xml_value(xml, "AccessKeyId").ok_or("no AccessKeyId in the answer")?,
        secret: xml_value(xml, "SecretAccessKey").ok_or("no SecretAccessKey in the answer")?,
    })
}

#[async_trait]
impl Vendor for Moto {
    async fn vend(&self, ttl: Duration, scope: Option<&str>) -> Result<Vended, String> {
        if let Some(scope) = scope {
            // An IAM user whose inline policy allows objects under the scope only (moto
            // evaluates the object ARN `arn:aws:s3:::bucket/key`), and listing the bucket.
            let n = self.scoped_users.fetch_add(1, Ordering::SeqCst);
            let user = format!("conformance-scoped-{n}");
            let bucket = scope.split('/').next().unwrap_or(scope);
            let policy = format!(
                r#"{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::{scope}*"}},{{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::{bucket}"}}]}}"#
            );
            self.iam(&[("Action", "CreateUser"), ("UserName", &user)])
                .await?;
            self.iam(&[
                ("Action", "PutUserPolicy"),
                ("UserName", &user),
                ("PolicyName", "scope"),
                ("PolicyDocument", &policy),
            ])
            .await?;
            let k = access_key(
                &self
                    .iam(&[("Action", "CreateAccessKey"), ("UserName", &user)])
                    .await?,
            )?;
            return Ok(Vended {
                options: s3_options(&self.endpoint, &k.access_key_id, &k.secret, None, Some(ttl)),
                access_key_id: k.access_key_id,
            });
        }
        // STS AssumeRole, signed by the admin key. moto's minimum is 900 s (as AWS); the
        // client is told `ttl`, which is what makes it refresh.
        let body = form_encode(&[
            ("Action", "AssumeRole"),
            ("Version", "2011-06-15"),
            ("RoleArn", "arn:aws:iam::123456789012:role/conformance-role"),
            ("RoleSessionName", "conformance"),
            ("DurationSeconds", "900"),
        ]);
        let xml = call(
            &self.client,
            &self.admin,
            &self.endpoint,
            "POST",
            "/",
            "sts",
            body,
        )
        .await?;
        let k = access_key(&xml)?;
        let token = xml_value(&xml, "SessionToken").ok_or("no SessionToken in the answer")?;
        Ok(Vended {
            options: s3_options(
                &self.endpoint,
                &k.access_key_id,
                &k.secret,
                Some(&token),
                Some(ttl),
            ),
            access_key_id: k.access_key_id,
        })
    }

    async fn vend_revocable(&self) -> Result<Vended, String> {
        let k = access_key(
            &self
                .iam(&[("Action", "CreateAccessKey"), ("UserName", REVOCABLE_USER)])
                .await?,
        )?;
        Ok(Vended {
            options: s3_options(&self.endpoint, &k.access_key_id, &k.secret, None, None),
            access_key_id: k.access_key_id,
        })
    }

    async fn revoke(&self, access_key_id: &str) -> Result<(), String> {
        self.iam(&[
            ("Action", "DeleteAccessKey"),
            ("UserName", REVOCABLE_USER),
            ("AccessKeyId", access_key_id),
        ])
        .await
        .map(|_| ())
    }

    fn fresh_key_per_vend(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        "STS AssumeRole keys+session token (900 s server-side, announced 3 s/1 h); \
         revocable IAM user keys; scoped IAM user keys"
            .into()
    }
}

// ---------------------------------------------------------------------------------------
// LocalStack

const LOCALSTACK_BUCKET: &str = "conformance";

/// LocalStack (`localstack-core`, no Docker) running S3 only.
pub struct LocalStack {
    _process: ServerProcess,
    endpoint: String,
}

impl LocalStack {
    /// Starts `python -m localstack.runtime.main` with S3 only and creates the bucket.
    pub async fn start(python: &std::path::Path) -> Result<Arc<Self>, String> {
        let port = free_port();
        let state = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("conformance")
            .join(format!("localstack-{}", std::process::id()));
        std::fs::create_dir_all(&state).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(python);
        cmd.args(["-m", "localstack.runtime.main"])
            .env("GATEWAY_LISTEN", format!("127.0.0.1:{port}"))
            .env("SERVICES", "s3")
            .env("LOCALSTACK_VOLUME_DIR", &state)
            .env("FILESYSTEM_ROOT", &state)
            .env("PERSISTENCE", "0")
            .env("SKIP_SSL_CERT_DOWNLOAD", "1")
            .env("DISABLE_EVENTS", "1")
            .env("LOCALSTACK_TELEMETRY_DISABLED", "1");
        let mut process = ServerProcess::spawn(cmd, "localstack.log").map_err(|e| e.to_string())?;
        let endpoint = format!("http://127.0.0.1:{port}");
        process
            .wait_ready(
                &format!("{endpoint}/_localstack/health"),
                Duration::from_secs(60),
            )
            .await?;
        let keys = Keys {
            access_key_id: "test".into(),
            secret: "test".into(),
        };
        call(
            &reqwest::Client::new(),
            &keys,
            &endpoint,
            "PUT",
            &format!("/{LOCALSTACK_BUCKET}"),
            "s3",
            String::new(),
        )
        .await?;
        Ok(Arc::new(Self {
            _process: process,
            endpoint,
        }))
    }

    /// The backend description for the suite.
    pub fn backend(self: &Arc<Self>) -> Backend {
        Backend {
            name: "localstack",
            bucket: LOCALSTACK_BUCKET.into(),
            caps: Capabilities {
                enforces_expiry: false,
                enforces_signature: false,
                enforces_prefix_scope: false,
                atomic_conditional_writes: false,
            },
            vendor: self.clone(),
            missing_expiry: "LocalStack's free build accepts expired credentials",
            missing_signature: "LocalStack's free build does not verify signatures",
            missing_scope: "LocalStack's free build does not evaluate IAM policies",
        }
    }
}

#[async_trait]
impl Vendor for LocalStack {
    async fn vend(&self, ttl: Duration, _scope: Option<&str>) -> Result<Vended, String> {
        // Static keys re-vended with a fresh announced expiry: LocalStack checks no key.
        Ok(Vended {
            options: s3_options(&self.endpoint, "test", "test", None, Some(ttl)),
            access_key_id: "test".into(),
        })
    }

    async fn vend_revocable(&self) -> Result<Vended, String> {
        Err("LocalStack's free build accepts any key, so none can be revoked".into())
    }

    async fn revoke(&self, _access_key_id: &str) -> Result<(), String> {
        Err("not supported".into())
    }

    fn fresh_key_per_vend(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "static keys test/test re-vended with a fresh expires_at_millis on every fetch".into()
    }
}
