//! Catalog interop with the **real** Lance Namespace REST server on Azure: pylance 14.0.2's
//! `lance.namespace.RestAdapter("dir", ...)` (started by `tests/fixtures/lance_rest_server.py
//! --azurite-endpoint`) hosts a Lance table on Azurite and vends, on every `DescribeTable`, the
//! Azure options it was given (`azure_storage_account_name`, `azure_storage_sas_token`) with
//! `expires_at_millis` = describe time + 3 s (`vend_input_storage_options=true`,
//! `vend_input_storage_options_refresh_interval_millis=3000`). The table is opened by name from
//! Rust and read and written through several refresh windows.
//!
//! What the server vends is what it holds: one SAS (here a container SAS valid for an hour, see
//! `emulators::container_sas` for why not an account SAS), re-vended with a fresh expiry each
//! time. So this proves the wire format, the key mapping, that the client keeps its own
//! Azurite endpoint (C10: the server vends none) and the describe cadence counted at the
//! server; that Azurite rejects an expired SAS is proven by azure_emulator.rs, whose provider
//! mints short-lived ones.
//!
//! Needs Azurite (`bin/install-emulators.sh`) and Python with pylance (as catalog_lance.rs:
//! `VENDED_STORAGE_PYTHON`, else `.venv/bin/python`; skipped with a message when neither).

use crate::emulators;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use emulators::{
    container_sas, create_container, now_millis, start_azurite, Proxy, AZURITE_ACCOUNT,
};
use vended_storage::catalog::LanceNamespaceProvider;
use vended_storage::{ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions};

const CONTAINER: &str = "lance";
const ROOT: &str = "ns";
/// Vended credentials expire this long after each describe.
const REFRESH_INTERVAL_MS: u64 = 3000;

/// The Python interpreter with pylance, or `None` (skip) when not configured and absent.
fn python() -> Option<PathBuf> {
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

struct LanceServer {
    child: Child,
    /// Kept open: the server exits when it is closed (also when this process dies).
    _stdin: ChildStdin,
    url: String,
}

impl Drop for LanceServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the Lance server on Azurite (`azurite_url`) with table `db.orders` (3 rows), vending
/// `sas`.
fn start_lance_server(python: &PathBuf, azurite_url: &str, sas: &str) -> LanceServer {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lance_rest_server.py");
    let mut child = Command::new(python)
        .arg(&script)
        .args(["--azurite-endpoint", azurite_url])
        .args(["--root", &format!("az://{CONTAINER}/{ROOT}")])
        .args(["--refresh-interval-ms", &REFRESH_INTERVAL_MS.to_string()])
        .args(["--table", "db.orders", "--exit-on-stdin-eof"])
        .env("VENDED_AZURE_STORAGE_ACCOUNT_NAME", AZURITE_ACCOUNT)
        .env("VENDED_AZURE_STORAGE_SAS_TOKEN", sas)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {} {}: {e}", python.display(), script.display()));
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
        .unwrap_or_else(|| panic!("the Lance server failed to start (stderr above): {line:?}"))
        .to_string();
    LanceServer {
        child,
        _stdin: stdin,
        url,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lance_server_on_azurite_table_opened_by_name_is_read_over_several_refresh_windows() {
    let test = "lance_server_on_azurite";
    let Some(python) = python() else {
        println!("SKIPPED {test}: no Python with pylance (VENDED_STORAGE_PYTHON or .venv)");
        return;
    };
    let Some(azurite) = start_azurite(test) else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let sas = container_sas(CONTAINER, now_millis() + 3_600_000);
    let sig = sas.rsplit("sig=").next().unwrap().to_string();
    let server = start_lance_server(&python, &azurite.url, &sas);
    // Counting proxies: in front of the Lance server (every request it gets is a describe of
    // this test's provider) and in front of Azurite (the client's requests and rejections).
    let catalog = Proxy::start(&server.url, None).await;
    let blob = Proxy::start(&azurite.url, None).await;

    let provider = Arc::new(
        LanceNamespaceProvider::builder(&catalog.url, ["db", "orders"])
            .build()
            .unwrap(),
    );
    // What the real server vends: the account, the SAS and a fresh expiry; no endpoint (C10).
    let before = now_millis();
    let d = provider.describe_table().await.unwrap();
    let vended = d.storage_options.clone().expect("storage_options");
    assert_eq!(vended["azure_storage_account_name"], AZURITE_ACCOUNT);
    assert_eq!(vended["azure_storage_sas_token"], sas);
    for key in ["azure_storage_endpoint", "azure_storage_use_emulator"] {
        assert!(!vended.contains_key(key), "the server vended {key}");
    }
    let expires: i64 = vended["expires_at_millis"].parse().unwrap();
    let interval = REFRESH_INTERVAL_MS as i64;
    assert!(
        (before + interval - 1000..=now_millis() + interval + 1000).contains(&expires),
        "expires_at_millis {expires} is not describe time + {REFRESH_INTERVAL_MS} ms"
    );
    let uri = d.uri().unwrap().to_string();
    assert!(
        uri.starts_with(&format!("az://{CONTAINER}/{ROOT}/")),
        "{uri}"
    );
    assert!(!format!("{d:?}").contains(&sig), "SAS signature in {d:?}");
    assert_eq!(catalog.stats.requests(), 1);

    // Open by name: one describe. The client brings Azurite's address itself.
    let client: StorageOptions = HashMap::from([
        ("azure_storage_use_emulator".to_string(), "true".to_string()),
        ("azure_storage_endpoint".to_string(), blob.url.clone()),
    ]);
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let refresh = RefreshConfig {
        lead_time: Duration::from_secs(1),
        ..RefreshConfig::default()
    };
    let store = Arc::new(
        provider
            .open_table(&registry, client, refresh)
            .await
            .unwrap(),
    );
    assert_eq!(provider.describe_calls(), 2);
    assert_eq!(catalog.stats.requests(), 2, "open_table: one describe");
    assert_eq!(store.uri(), uri);

    // The table the Lance server wrote on Azurite: a version manifest and a data file.
    let versions = store.list(Some("_versions")).await.unwrap();
    assert!(!versions.is_empty(), "no _versions/ under {uri}");
    let data = store.list(Some("data")).await.unwrap();
    let file = data
        .iter()
        .find(|o| o.path.ends_with(".lance"))
        .expect("a .lance data file");
    let lance_file = store.get(&file.path).await.unwrap();
    assert!(
        lance_file.ends_with(b"LANC"),
        "{} lacks the Lance magic",
        file.path
    );

    // Read the table's files and write beside them for about three credential lifetimes
    // (3 s each, refreshed 1 s before expiry: one describe about every 2 s).
    let run = Duration::from_secs(9);
    let start_describes = provider.describe_calls();
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..2 {
        let store = store.clone();
        let (path, expected) = (file.path.clone(), lance_file.clone());
        workers.push(tokio::spawn(async move {
            let mut n = 0u64;
            while started.elapsed() < run && n < 100_000 {
                assert_eq!(store.get(&path).await.expect("read table file"), expected);
                let own = format!("vended-io/w{w}/{n}");
                let body = Bytes::from(format!("worker {w} object {n}"));
                store.put(&own, body.clone()).await.expect("put");
                assert_eq!(store.get(&own).await.expect("get"), body);
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            n
        }));
    }
    let mut rounds = 0;
    for w in workers {
        rounds += w.await.unwrap();
    }
    let describes = provider.describe_calls() - start_describes;
    let windows = run.as_millis() as u64 / (REFRESH_INTERVAL_MS - 1000);
    println!(
        "{rounds} rounds (table file read + own object written and read) in {run:?}; \
         {describes} describes; {} requests to Azurite",
        blob.stats.requests()
    );
    assert!(rounds > 50, "only {rounds} rounds");
    assert!(
        (windows - 2..=windows + 2).contains(&describes),
        "{describes} describes in {run:?}, expected about one per {} ms ({windows})",
        REFRESH_INTERVAL_MS - 1000
    );
    // The server answered exactly the describes the provider made, no more.
    assert_eq!(catalog.stats.requests() as u64, provider.describe_calls());
    assert_eq!(blob.stats.rejections(), 0, "Azurite rejected a request");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.failures, 0, "{stats:?}");
    assert_eq!(stats.fetches, describes, "{stats:?}");
    assert!(stats.expires_at_millis.unwrap() > now_millis(), "{stats:?}");
    // C10: the client's Azurite endpoint survives every refresh.
    let current = store.refresher().unwrap().current_options();
    assert_eq!(current["azure_storage_endpoint"], blob.url);
    assert_eq!(current["azure_storage_use_emulator"], "true");
    assert_eq!(current["azure_storage_account_name"], AZURITE_ACCOUNT);
    assert!(!format!("{store:?}").contains(&sig));
}
