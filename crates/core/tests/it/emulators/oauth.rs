//! Azurite's OAuth mode (`--oauth basic`), which accepts bearer tokens only over HTTPS: a test
//! certificate authority and a server certificate for 127.0.0.1 made with the `openssl` command
//! at test time, Azurite started with them, and Azure AD-shaped access tokens.
//!
//! What Azurite 3.35.0 checks of a bearer token (`dist/src/blob/authentication/
//! BlobTokenAuthenticator.js`, `authenticateBasic`): it is a JWT (decoded, the signature is not
//! verified), has `nbf`, `exp` and `iat` with `nbf <= now <= exp` (seconds, no grace; else 403
//! AuthenticationFailed "Lifetime validation failed. The token is expired."), an `iss` starting
//! with `https://sts.windows.net/` (or another Azure AD issuer), and `aud`
//! `https://storage.azure.com` (or the account's blob URL).

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;

use super::{free_port, scratch_dir, spawn, tool, Emulator};

/// PEM files of a test CA and of a server certificate for `127.0.0.1` it signed.
pub struct TestCa {
    /// The CA certificate (PEM): what a client must trust.
    pub ca_pem: PathBuf,
    /// The server certificate (PEM, `subjectAltName = IP:127.0.0.1`).
    pub cert_pem: PathBuf,
    /// The server certificate's private key (PEM).
    pub key_pem: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl (needed for Azurite over HTTPS): {e}"));
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes a P-256 CA (valid one day) and a server certificate for 127.0.0.1 under `dir`.
///
/// # Panics
/// When `openssl` is missing or fails.
pub fn make_test_ca(dir: &Path) -> TestCa {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=vended-storage test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    openssl(dir, &ca);
    let mut csr = vec!["req"];
    csr.extend(ec);
    csr.extend([
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(dir, &csr);
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "server.ext",
        ],
    );
    TestCa {
        ca_pem: dir.join("ca.pem"),
        cert_pem: dir.join("server.pem"),
        key_pem: dir.join("server.key"),
    }
}

/// Azurite's blob service over HTTPS with `--oauth basic` (in memory, telemetry off), its
/// certificate made by a fresh [`TestCa`], and its debug log in the scratch directory (the
/// endpoint's own record of every answer). `None` when Azurite is not installed and skipping
/// is allowed.
pub fn start_azurite_oauth(test: &str) -> Option<(Emulator, TestCa, PathBuf)> {
    let bin = tool(
        test,
        "VENDED_STORAGE_AZURITE",
        "azurite/node_modules/.bin/azurite-blob",
    )?;
    let dir = scratch_dir("azurite-oauth");
    let ca = make_test_ca(&dir);
    let log = dir.join("debug.log");
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .args(["--inMemoryPersistence", "--skipApiVersionCheck", "--loose"])
        .arg("--disableTelemetry")
        .args(["--oauth", "basic"])
        .arg("--cert")
        .arg(&ca.cert_pem)
        .arg("--key")
        .arg(&ca.key_pem)
        .arg("--debug")
        .arg(&log);
    let mut azurite = spawn(cmd, dir, port, "successfully listens on");
    azurite.url = format!("https://127.0.0.1:{port}");
    Some((azurite, ca, log))
}

/// An access token Azurite's basic OAuth accepts until `expires_at_millis` (rounded down to
/// the second, as `exp` has): a JWT with `aud` `https://storage.azure.com`, an Azure AD `iss`,
/// `nbf`/`iat` a minute ago and a placeholder signature (Azurite does not verify it).
pub fn access_token(expires_at_millis: i64, serial: usize) -> String {
    let b64 = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let now = super::now_millis() / 1000;
    let header = b64(serde_json::json!({"typ": "JWT", "alg": "RS256"}));
    let claims = b64(serde_json::json!({
        "aud": "https://storage.azure.com",
        "iss": "https://sts.windows.net/00000000-0000-0000-0000-000000000001/",
        "iat": now - 60,
        "nbf": now - 60,
        "exp": expires_at_millis / 1000,
        "oid": "00000000-0000-0000-0000-000000000002",
        "jti": format!("vended-storage-test-{serial}"),
    }));
    format!("{header}.{claims}.dGVzdC1zaWduYXR1cmU")
}

/// What an Azurite debug log records about authentication.
#[derive(Debug, Default, Clone, Copy)]
pub struct AuthLog {
    /// Answers with status 401 or 403.
    pub rejected: usize,
    /// Errors for an expired bearer token.
    pub expired: usize,
    /// Requests whose bearer token Azurite validated and accepted.
    pub token_accepted: usize,
}

/// Counts [`AuthLog`] in Azurite's debug log `log`.
pub fn auth_log(log: &Path) -> AuthLog {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut counts = AuthLog::default();
    for line in text.lines() {
        if line.contains("EndMiddleware")
            && (line.contains("StatusCode=401") || line.contains("StatusCode=403"))
        {
            counts.rejected += 1;
        }
        if line.contains("ErrorMiddleware: ErrorName") && line.contains("The token is expired") {
            counts.expired += 1;
        }
        if line.contains("Validation against token authentication successfully") {
            counts.token_accepted += 1;
        }
    }
    counts
}
