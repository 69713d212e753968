//! The `local-s3` binary: LISTENING line, buckets from flags, exit on stdin EOF and SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_local-s3"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn local-s3");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let endpoint = line
        .trim_end()
        .strip_prefix("LISTENING ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
    (child, endpoint)
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("local-s3 did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut text).unwrap();
    text
}

#[tokio::test]
async fn exits_when_stdin_closes() {
    let dir = std::env::temp_dir().join(format!("local-s3-bin-test-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap();
    let (mut child, endpoint) = spawn(&[
        "--port",
        "0",
        "--data-dir",
        dir_arg,
        "--bucket",
        "one",
        "--bucket=two",
        "--root-secret-key",
        "s3cr3t-value",
        "--exit-on-stdin-eof",
    ]);
    assert!(dir.join("one").is_dir() && dir.join("two").is_dir());
    let body = reqwest::get(format!("{endpoint}/_admin/health"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, r#"{"status":"ok"}"#);

    drop(child.stdin.take());
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
    let stderr = stderr_of(&mut child);
    assert!(stderr.contains("stdin closed"), "{stderr}");
    assert!(!stderr.contains("s3cr3t-value"), "secret leaked: {stderr}");
    // A data dir given on the command line is kept.
    assert!(dir.join("one").is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn stops_on_sigterm_and_ignores_stdin_by_default() {
    let (mut child, endpoint) = spawn(&[]);
    drop(child.stdin.take());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "exited on stdin EOF without --exit-on-stdin-eof"
    );
    assert_eq!(
        reqwest::get(format!("{endpoint}/_admin/stats"))
            .await
            .unwrap()
            .status(),
        200
    );

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
    assert!(stderr_of(&mut child).contains("SIGTERM"));
}

#[test]
fn bad_flags_exit_with_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_local-s3"))
        .args(["--port", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: local-s3"));
    let out = Command::new(env!("CARGO_BIN_EXE_local-s3"))
        .args(["--bucket", "Bad_Name"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "no LISTENING line when startup fails"
    );
}
