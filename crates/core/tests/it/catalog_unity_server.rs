//! The Unity Catalog provider against a real Unity Catalog server: crates.io `olai-uc-server`
//! 0.0.11 (`uc-server serve`, in-memory SQLite, anonymous auth; installed by
//! `bin/install-unity.sh` into `.tools/unity`) with its storage on Azurite. The server holds
//! Azurite's development account key as a storage credential and signs a SAS per
//! `temporary-table-credentials` call, read-only for `READ`, read-write for `READ_WRITE`.
//!
//! What the real server cannot show is tested in catalog_unity.rs against a scripted catalog:
//! its AWS vending assumes a role at AWS STS (the endpoint is not configurable from its
//! configuration, so it cannot vend keys of the local S3 endpoint), and its SAS tokens live
//! one hour (no short expiry, so no rotation within a test).
//!
//! When the server or Azurite is missing the test fails, telling how to install them, unless
//! `VENDED_STORAGE_SKIP_EMULATORS=1` is set (then it prints SKIPPED).

use crate::emulators;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use emulators::{create_container, start_azurite, tool, AZURITE_ACCOUNT, AZURITE_KEY};
use serde_json::{json, Value};
use vended_storage::catalog::unity::{UnityCatalogProvider, UnityOperation};
use vended_storage::catalog::{catalog_error, CatalogErrorKind};
use vended_storage::options::merge;
use vended_storage::{
    ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions,
    StorageOptionsProvider,
};

const CONTAINER: &str = "lakehouse";
const API: &str = "api/2.1/unity-catalog";

/// `uc-server serve` on a free port of 127.0.0.1, killed on drop.
struct UcServer {
    child: Child,
    url: String,
}

impl Drop for UcServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Starts the server and waits (at most 60 s) until its catalogs API answers.
async fn start_uc_server(bin: PathBuf) -> UcServer {
    let port = free_port();
    let child = Command::new(bin)
        .args([
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--no-ui",
        ])
        .env_remove("UC_SERVER_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start uc-server");
    let server = UcServer {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let probe = client
            .get(format!("{}/{API}/catalogs", server.url))
            .timeout(Duration::from_secs(2))
            .send()
            .await;
        if matches!(&probe, Ok(r) if r.status().is_success()) {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "uc-server did not answer within 60 s: {probe:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `POST {API}/{path}` with `body`; panics (with the server's answer) unless it is a 2xx.
async fn post(server: &UcServer, path: &str, body: Value) -> Value {
    let r = reqwest::Client::new()
        .post(format!("{}/{API}/{path}", server.url))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("uc-server request");
    let status = r.status();
    let text = r.text().await.unwrap_or_default();
    assert!(status.is_success(), "POST {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn location(path: &str) -> String {
    format!("abfss://{CONTAINER}@{AZURITE_ACCOUNT}.dfs.core.windows.net/{path}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_on_azurite_is_opened_by_name_with_read_and_read_write_sas_from_uc_server() {
    let test = "catalog_unity_server";
    let Some(bin) = tool(test, "VENDED_STORAGE_UC_SERVER", "unity/bin/uc-server") else {
        return;
    };
    let Some(azurite) = start_azurite(test) else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let server = start_uc_server(bin).await;

    // The server's storage credential (Azurite's public development key), an external location
    // over the container, a catalog, a schema and an external table in it.
    post(
        &server,
        "credentials",
        json!({"name": "azurite_key", "purpose": "STORAGE", "skip_validation": true,
               "azure_storage_key": {"account_name": AZURITE_ACCOUNT, "account_key": AZURITE_KEY}}),
    )
    .await;
    post(
        &server,
        "external-locations",
        json!({"name": "lakehouse", "url": location(""), "credential_name": "azurite_key",
               "skip_validation": true}),
    )
    .await;
    post(
        &server,
        "catalogs",
        json!({"name": "main", "storage_root": location("managed")}),
    )
    .await;
    post(
        &server,
        "schemas",
        json!({"name": "sales", "catalog_name": "main"}),
    )
    .await;
    let table = post(
        &server,
        "tables",
        json!({"name": "orders", "catalog_name": "main", "schema_name": "sales",
               "table_type": "EXTERNAL", "data_source_format": "DELTA",
               "storage_location": location("sales/orders")}),
    )
    .await;
    let table_id = table["table_id"].as_str().expect("table_id").to_string();

    // The client brings Azurite's address; the server vends the SAS only.
    let client: StorageOptions = HashMap::from([
        ("azure_storage_use_emulator".to_string(), "true".to_string()),
        ("azure_storage_endpoint".to_string(), azurite.url.clone()),
    ]);
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let open = |op: UnityOperation| {
        let server_url = server.url.clone();
        let client = client.clone();
        let registry = &registry;
        async move {
            let p = Arc::new(
                UnityCatalogProvider::table(server_url, "main.sales.orders")
                    .operation(op)
                    .timeout(Duration::from_secs(20))
                    .build()
                    .unwrap(),
            );
            let location = p.storage_location().await.expect("getTable");
            let vended = p
                .fetch_storage_options()
                .await
                .expect("credentials")
                .unwrap();
            let store = registry
                .open(
                    &location,
                    merge(&client, &vended),
                    Some(p.clone() as _),
                    RefreshConfig::default(),
                )
                .unwrap();
            (p, location, vended, store)
        }
    };

    let (writer, uri, vended, store) = open(UnityOperation::ReadWrite).await;
    assert_eq!(uri, location("sales/orders"));
    assert_eq!(writer.table_info().await.unwrap().table_id, table_id);
    assert_eq!(vended["azure_storage_account_name"], AZURITE_ACCOUNT);
    assert!(vended.contains_key("azure_storage_sas_token"));
    let expires: i64 = vended["expires_at_millis"].parse().unwrap();
    let now = emulators::now_millis();
    assert!(
        (now + 50 * 60_000..=now + 61 * 60_000).contains(&expires),
        "expires_at_millis {expires}: not about an hour from now ({now})"
    );
    store
        .put(
            "_delta_log/00000000000000000000.json",
            Bytes::from_static(b"{}"),
        )
        .await
        .expect("a READ_WRITE SAS writes");
    assert_eq!((writer.table_calls(), writer.credential_calls()), (1, 1));

    let (reader, _, _, store) = open(UnityOperation::Read).await;
    assert_ne!(reader.provider_id(), writer.provider_id());
    assert_eq!(
        store
            .get("_delta_log/00000000000000000000.json")
            .await
            .unwrap(),
        Bytes::from_static(b"{}")
    );
    let e = store
        .put("data/part-0", Bytes::from_static(b"x"))
        .await
        .expect_err("a READ SAS must not write");
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");

    // A table that does not exist: 404 at getTable, named.
    let missing = UnityCatalogProvider::table(server.url.clone(), "main.sales.missing")
        .build()
        .unwrap();
    let e = missing.fetch_storage_options().await.unwrap_err();
    let c = catalog_error(&e).expect("a catalog error");
    assert_eq!(
        (c.kind, c.status),
        (CatalogErrorKind::NotFound, Some(404)),
        "{e}"
    );
    assert!(
        e.to_string().contains("get table 'main.sales.missing'"),
        "{e}"
    );
}
