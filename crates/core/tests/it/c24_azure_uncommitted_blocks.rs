//! Case C24 on Azure (Azurite): a multipart write whose SAS expires while the provider fails.
//! Azure has no abort: the blocks staged so far stay the blob's uncommitted blocks (Get Block
//! List shows them) until Azure discards them after 7 days. The write fails with the provider's
//! error, says so and names the blob; nothing is committed.

use crate::emulators;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use emulators::{account_sas, create_container, now_millis, sas_expiry, start_azurite};
use emulators::{Emulator, AZURITE_ACCOUNT};
use vended_storage::{
    Error, ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider, WriterOptions,
};

const CONTAINER: &str = "c24";
const TTL: Duration = Duration::from_secs(3);

/// Vends account SAS tokens living [`TTL`], or fails with "catalog down" while `down` is set.
#[derive(Debug, Default)]
struct SasProvider {
    down: AtomicBool,
}

impl SasProvider {
    fn vend(&self) -> StorageOptions {
        let expires = sas_expiry(TTL);
        [
            ("azure_storage_sas_token", account_sas(expires, false)),
            ("expires_at_millis", expires.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

#[async_trait]
impl StorageOptionsProvider for SasProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        if self.down.load(Ordering::SeqCst) {
            return Err(Error::provider("c24-sas", "catalog down"));
        }
        Ok(Some(self.vend()))
    }
    fn provider_id(&self) -> String {
        "c24-sas".into()
    }
}

/// The `<UncommittedBlocks>` and `<CommittedBlocks>` counts of Get Block List for `blob`.
async fn block_list(azurite: &Emulator, blob: &str) -> (usize, usize) {
    let sas = account_sas(now_millis() + 60_000, false);
    let r = reqwest::Client::new()
        .get(format!(
            "{}/{AZURITE_ACCOUNT}/{CONTAINER}/{blob}?comp=blocklist&blocklisttype=all&{sas}",
            azurite.url
        ))
        .header("x-ms-version", "2021-08-06")
        .send()
        .await
        .expect("get block list");
    let status = r.status();
    let body = r.text().await.unwrap_or_default();
    assert!(status.is_success(), "Get Block List: {status} {body}");
    let count = |section: &str| {
        body.split(&format!("<{section}>"))
            .nth(1)
            .and_then(|s| s.split(&format!("</{section}>")).next())
            .map_or(0, |s| s.matches("<Block>").count())
    };
    (count("UncommittedBlocks"), count("CommittedBlocks"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c24_azure_a_failed_close_says_the_staged_blocks_stay_uncommitted() {
    let Some(azurite) =
        start_azurite("c24_azure_a_failed_close_says_the_staged_blocks_stay_uncommitted")
    else {
        return;
    };
    create_container(&azurite, CONTAINER).await;
    let provider = Arc::new(SasProvider::default());
    let mut initial: StorageOptions = [
        ("azure_storage_use_emulator", "true"),
        ("azure_storage_endpoint", azurite.url.as_str()),
        ("azure_storage_account_name", AZURITE_ACCOUNT),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    initial.extend(provider.vend());
    let config = RefreshConfig {
        lead_time: Duration::from_millis(1000),
        stale_window: Duration::from_millis(500),
        initial_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(400),
        jitter: 0.0,
        ..RefreshConfig::default()
    };
    let store = ObjectStoreRegistry::new(RegistryConfig::default())
        .open(
            &format!("az://{CONTAINER}/"),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            config,
        )
        .unwrap();
    let mut w = store
        .writer(
            "obj",
            WriterOptions {
                part_size: 1 << 20,
                ..WriterOptions::default()
            },
        )
        .unwrap();
    w.write(&vec![7u8; (3 << 20) + 100]).await.unwrap();
    assert_eq!(w.upload_id(), None, "Azure uploads have no id");

    provider.down.store(true, Ordering::SeqCst);
    tokio::time::sleep(TTL + Duration::from_millis(1200)).await;
    let e = w.finish().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
    let text = e.to_string();
    assert!(text.contains("catalog down"), "{text}");
    assert!(
        text.contains("az://c24/obj")
            && text.contains("uncommitted blocks")
            && text.contains("Get Block List")
            && text.contains("7 days"),
        "{text}"
    );
    assert!(
        matches!(
            &e,
            Error::UploadLeft {
                upload_id: None,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!text.contains("sig="), "no SAS in the message: {text}");
    // Nothing committed; the staged blocks are there, as the message says.
    let (uncommitted, committed) = block_list(&azurite, "obj").await;
    assert_eq!(committed, 0);
    assert!(uncommitted >= 3, "{uncommitted} uncommitted blocks");
}
