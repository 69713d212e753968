//! `local-s3`: runs the local S3 endpoint until SIGTERM/ctrl-c (or stdin EOF with
//! `--exit-on-stdin-eof`). The first stdout line is `LISTENING http://127.0.0.1:PORT`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use local_s3::{LocalS3, LocalS3Config};

const USAGE: &str = "\
usage: local-s3 [options]
  --port N                 TCP port on 127.0.0.1 (default 0 = any free port)
  --data-dir DIR           where buckets are stored (default: a temp dir removed on exit)
  --bucket NAME            create this bucket at start (repeatable)
  --in-memory              throughput mode: keep objects in a fresh directory on /dev/shm
                           (tmpfs, no disk; removed on exit); auth is checked as always
  --root-access-key KEY    root access key id (default vended-root)
  --root-secret-key KEY    root secret key (default vended-root-secret)
  --exit-on-stdin-eof      exit when stdin reaches end of file (for child processes)
  --help                   show this help
Prints `LISTENING http://127.0.0.1:PORT` as the first stdout line once ready.
Temporary keys: STS AssumeRole (unsigned form POST to /: Action=AssumeRole&DurationSeconds=N,
optional Scope=bucket/prefix, Access=read (read-only), List=false (no LIST)) or
POST /_admin/credentials?ttl_ms=N[&scope=bucket/prefix][&access=read][&list=false].";

struct Args {
    config: LocalS3Config,
    buckets: Vec<String>,
    exit_on_stdin_eof: bool,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut parsed = Args {
        config: LocalS3Config::default(),
        buckets: Vec::new(),
        exit_on_stdin_eof: false,
    };
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--help" | "-h" => return Ok(None),
            "--exit-on-stdin-eof" => parsed.exit_on_stdin_eof = true,
            "--in-memory" => parsed.config.in_memory = true,
            "--port" => {
                let text = value()?;
                parsed.config.port = text
                    .parse()
                    .map_err(|_| format!("--port: not a port number: {text:?}"))?;
            }
            "--data-dir" => parsed.config.data_dir = Some(PathBuf::from(value()?)),
            "--bucket" => parsed.buckets.push(value()?),
            "--root-access-key" => parsed.config.root_access_key = value()?,
            "--root-secret-key" => parsed.config.root_secret_key = value()?,
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    if parsed.config.root_access_key.is_empty() || parsed.config.root_secret_key.is_empty() {
        return Err("root access key and secret must not be empty".to_owned());
    }
    Ok(Some(parsed))
}

/// Resolves once stdin reaches end of file (or fails).
fn stdin_eof() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    rx
}

#[cfg(unix)]
async fn terminate() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            term.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn terminate() {
    std::future::pending().await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("local-s3: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let server = match LocalS3::start(args.config).await {
        Ok(server) => server,
        Err(err) => {
            eprintln!("local-s3: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    for bucket in &args.buckets {
        if let Err(err) = server.create_bucket(bucket) {
            eprintln!("local-s3: cannot create bucket {bucket:?}: {err}");
            return ExitCode::FAILURE;
        }
    }
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "LISTENING {}", server.endpoint())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    eprintln!(
        "local-s3: serving {} from {} (root access key {})",
        server.endpoint(),
        server.data_dir().display(),
        server.root_access_key()
    );

    let stdin_closed = async {
        if args.exit_on_stdin_eof {
            let _ = stdin_eof().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let reason = tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupt",
        () = terminate() => "SIGTERM",
        () = stdin_closed => "stdin closed",
    };
    eprintln!("local-s3: stopping ({reason})");
    server.shutdown().await;
    ExitCode::SUCCESS
}
