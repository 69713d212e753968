//! The README's Rust example: a catalog-backed provider and an S3-compatible endpoint.
//! Run it against any S3 endpoint: `cargo run -p vended-storage-rust-consumer -- <endpoint>`
//! with `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` in the environment (the stand-in catalog
//! below re-vends them with a fresh expiry).

// region:main
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use vended_storage::{
    ObjectStoreRegistry, RefreshConfig, Result, StorageOptions, StorageOptionsProvider,
};

/// Your catalog client. Here a stand-in that re-vends keys from the environment, valid 15 min.
#[derive(Debug)]
struct MyCatalog {
    table: String,
}

#[async_trait::async_trait]
impl StorageOptionsProvider for MyCatalog {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH);
        let expires = now.unwrap_or_default() + Duration::from_secs(15 * 60);
        let env = |k: &str| std::env::var(k).unwrap_or_default();
        Ok(Some(HashMap::from([
            ("aws_access_key_id".into(), env("AWS_ACCESS_KEY_ID")),
            ("aws_secret_access_key".into(), env("AWS_SECRET_ACCESS_KEY")),
            // Epoch milliseconds, as a decimal string.
            ("expires_at_millis".into(), expires.as_millis().to_string()),
        ])))
    }

    fn provider_id(&self) -> String {
        format!("my-catalog:{}", self.table) // equal ids share one store and credential cache
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let endpoint = std::env::args()
        .nth(1)
        .unwrap_or("http://127.0.0.1:9000".into());
    // What a non-AWS S3 endpoint needs besides credentials: its URL, a region, plain HTTP.
    let mut options: StorageOptions = HashMap::from([
        ("aws_endpoint".into(), endpoint),
        ("aws_region".into(), "us-east-1".into()),
        ("aws_allow_http".into(), "true".into()),
    ]);
    let provider = Arc::new(MyCatalog {
        table: "db.orders".into(),
    });
    // The first answer seeds the credential cache: opening costs no second catalog call.
    options.extend(provider.fetch_storage_options().await?.unwrap_or_default());
    let store = ObjectStoreRegistry::global().open(
        "s3://bucket/warehouse/orders",
        options,
        Some(provider),
        RefreshConfig::default(), // lead time 5 min, at most half the credential's lifetime
    )?;
    store
        .put("part-0.bin", bytes::Bytes::from_static(b"hello"))
        .await?;
    let back = store.get("part-0.bin").await?;
    println!("read {} bytes; {:?}", back.len(), store.refresh_stats());
    Ok(())
}
// endregion
