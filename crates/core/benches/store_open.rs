//! What opening a store costs: `ObjectStoreRegistry::open` of an `s3://` URI with a fresh
//! provider (so every open builds a new store and refresher), endpoint `http://127.0.0.1:9000`
//! (nothing listens there: opening sends no request).
//!
//! Rows:
//! - `amazon_s3_builder/fresh_reqwest_connector`: an `AmazonS3Builder` built with
//!   object_store's default connector, a new reqwest client per store: what every open cost
//!   before the HTTP client was shared (the baseline).
//! - `build_s3_store/shared_connector`: the library's S3 store builder, HTTP client shared
//!   between stores with the same transport options (`cloud::http`).
//! - `registry_open/fresh_provider`: the whole open through the registry: URI parsing,
//!   option checks, refresher, store, auth-retry wrapper, registry entry.
//!
//! Run: `cargo bench -p vended-storage --bench store_open`.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::vended_options;
use criterion::{BatchSize, Criterion};
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, AwsCredential};
use object_store::StaticCredentialProvider;
use vended_storage::cloud::aws::{build_s3_store, AwsCredentials};
use vended_storage::{
    ObjectStoreRegistry, RefreshConfig, RegistryConfig, Result, StorageOptions,
    StorageOptionsProvider,
};

/// A provider with its own id, so that every open builds a new store.
#[derive(Debug)]
struct FreshProvider(u64);

#[async_trait]
impl StorageOptionsProvider for FreshProvider {
    async fn fetch_storage_options(&self) -> Result<Option<StorageOptions>> {
        Ok(Some(vended_options(self.0, now_millis() + 3_600_000)))
    }
    fn provider_id(&self) -> String {
        format!("bench-fresh-{}", self.0)
    }
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn credential() -> AwsCredential {
    AwsCredential {
        key_id: "ASIABENCH".into(),
        secret_key: "0".repeat(40),
        token: Some("T".repeat(700)),
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let _guard = runtime.enter();
    let options = vended_options(1, now_millis() + 3_600_000);
    let serial = AtomicU64::new(0);

    let mut group = c.benchmark_group("store_open");
    group.bench_function("amazon_s3_builder/fresh_reqwest_connector", |b| {
        b.iter(|| {
            AmazonS3Builder::new()
                .with_bucket_name("bench-bucket")
                .with_config(AmazonS3ConfigKey::Endpoint, "http://127.0.0.1:9000")
                .with_config(AmazonS3ConfigKey::Region, "us-east-1")
                .with_allow_http(true)
                .with_credentials(Arc::new(StaticCredentialProvider::new(credential())))
                .build()
                .expect("build")
        })
    });
    group.bench_function("build_s3_store/shared_connector", |b| {
        b.iter(|| {
            build_s3_store(
                "bench-bucket",
                &options,
                AwsCredentials::Static(credential()),
            )
            .expect("build")
        })
    });
    group.bench_function("registry_open/fresh_provider", |b| {
        b.iter_batched(
            || {
                let n = serial.fetch_add(1, Ordering::Relaxed);
                (
                    ObjectStoreRegistry::new(RegistryConfig::default()),
                    Arc::new(FreshProvider(n)) as Arc<dyn StorageOptionsProvider>,
                )
            },
            |(registry, provider)| {
                let store = registry
                    .open(
                        "s3://bench-bucket/table",
                        options.clone(),
                        Some(provider),
                        RefreshConfig::default(),
                    )
                    .expect("open");
                (store, registry)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
        .configure_from_args();
    bench(&mut c);
    c.final_summary();
}
