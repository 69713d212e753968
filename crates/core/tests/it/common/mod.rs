//! Shared fixtures for integration tests: the in-process S3 endpoint and a provider that
//! vends short-lived credentials from it.

#![allow(dead_code)]

pub mod logs;
pub mod providers;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use local_s3::{LocalS3, LocalS3Config};
use vended_storage::{
    ObjectStoreRegistry, RegistryConfig, Result, StorageOptions, StorageOptionsProvider,
};

pub const BUCKET: &str = "test-bucket";

/// `len` pseudo-random bytes, the same for the same `seed`.
pub fn data(len: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

/// Starts the endpoint with one bucket.
pub async fn endpoint() -> Arc<LocalS3> {
    let s3 = LocalS3::start(LocalS3Config::default())
        .await
        .expect("start local S3");
    s3.create_bucket(BUCKET).expect("create bucket");
    Arc::new(s3)
}

/// A registry of its own per test, so tests never share stores.
pub fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

/// Vends temporary credentials from the endpoint, each living `ttl`; counts calls and
/// remembers every key it vended. With `with_expiry == false` it omits `expires_at_millis`
/// (case C08). With `scope` the keys are limited to `bucket/prefix`.
pub struct EndpointProvider {
    pub s3: Arc<LocalS3>,
    pub ttl: Duration,
    pub with_expiry: bool,
    pub scope: Option<String>,
    pub id: String,
    pub calls: AtomicUsize,
    pub vended: Mutex<Vec<String>>,
}

impl std::fmt::Debug for EndpointProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EndpointProvider({})", self.id)
    }
}

impl EndpointProvider {
    pub fn new(s3: Arc<LocalS3>, ttl: Duration) -> Self {
        Self {
            s3,
            ttl,
            with_expiry: true,
            scope: None,
            id: "endpoint-provider".into(),
            calls: AtomicUsize::new(0),
            vended: Mutex::new(Vec::new()),
        }
    }

    /// Vends one set (also used for the initial options).
    pub fn vend(&self) -> StorageOptions {
        let creds = self.s3.issue_credentials(self.ttl, self.scope.as_deref());
        self.vended
            .lock()
            .unwrap()
            .push(creds.access_key_id.clone());
        let mut o: HashMap<String, String> = self.s3.storage_options(&creds);
        if !self.with_expiry {
            o.remove("expires_at_millis");
        }
        o
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn vended_keys(&self) -> Vec<String> {
        self.vended.lock().unwrap().clone()
    }
}

#[async_trait]
impl StorageOptionsProvider for EndpointProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(Some(self.vend()))
    }
    fn provider_id(&self) -> String {
        self.id.clone()
    }
}
