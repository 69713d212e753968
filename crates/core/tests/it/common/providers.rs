//! Scripted credential providers and a refresher over a manual clock, for tests that need a
//! provider misbehaving in a precise way (panics, hangs, alternating or malformed answers).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use vended_storage::refresh::{CredentialRefresher, ManualClock};
use vended_storage::{RefreshConfig, Result, StorageOptions, StorageOptionsProvider};

pub fn opts(pairs: &[(&str, &str)]) -> StorageOptions {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub const NOW: i64 = 1_800_000_000_000;

/// A provider driven by a closure over the call number (0-based).
pub struct FnProvider<F> {
    pub id: String,
    pub calls: AtomicUsize,
    pub f: F,
}

impl<F> std::fmt::Debug for FnProvider<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FnProvider({})", self.id)
    }
}

#[async_trait]
impl<F> StorageOptionsProvider for FnProvider<F>
where
    F: Fn(usize) -> Result<Option<StorageOptions>> + Send + Sync,
{
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        (self.f)(n)
    }
    fn provider_id(&self) -> String {
        self.id.clone()
    }
}

pub fn fn_provider<F>(f: F) -> Arc<FnProvider<F>>
where
    F: Fn(usize) -> Result<Option<StorageOptions>> + Send + Sync,
{
    Arc::new(FnProvider {
        id: "fn-provider".into(),
        calls: AtomicUsize::new(0),
        f,
    })
}

pub fn creds(key: &str, expires: i64) -> StorageOptions {
    opts(&[
        ("aws_access_key_id", key),
        ("aws_secret_access_key", "SECRET-hunter2"),
        ("aws_session_token", "TOKEN-hunter3"),
        ("expires_at_millis", &expires.to_string()),
    ])
}

pub fn refresher(
    provider: Arc<dyn StorageOptionsProvider>,
    initial: StorageOptions,
    clock: Arc<ManualClock>,
) -> CredentialRefresher<String> {
    CredentialRefresher::new(
        provider,
        initial,
        Arc::new(|o: &StorageOptions| {
            vended_storage::cloud::aws::aws_credential_from_options(o).map(|c| c.key_id)
        }),
        RefreshConfig {
            jitter: 0.0,
            ..RefreshConfig::default()
        },
        clock,
    )
    .unwrap()
}
