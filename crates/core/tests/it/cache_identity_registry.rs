//! Cache identity of registry keys and session caches: object identities whose hashes
//! collide, static options and rotated secrets, idle expiry, session invalidation and sizes.
//! Rotations and provider ids against the local S3 endpoint are in `cache_identity.rs`. Case
//! ids refer to shared/CASES.md.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, BUCKET};
use vended_storage::{
    ObjectIdentity, ObjectStoreRegistry, ProviderIdentity, RefreshConfig, RegistryConfig, Session,
    SessionConfig, StorageOptions, StorageOptionsProvider,
};

/// An identity whose hash always collides.
#[derive(Debug)]
struct Colliding(u32);
impl ObjectIdentity for Colliding {
    fn hash_code(&self) -> u64 {
        42
    }
    fn same_object(&self, other: &dyn ObjectIdentity) -> bool {
        other
            .as_any()
            .downcast_ref::<Colliding>()
            .is_some_and(|o| o.0 == self.0)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[derive(Debug)]
struct ObjectProvider(Arc<Colliding>);
#[async_trait]
impl StorageOptionsProvider for ObjectProvider {
    async fn fetch_storage_options(&self) -> vended_storage::Result<Option<StorageOptions>> {
        Ok(None)
    }
    fn provider_id(&self) -> String {
        format!("object-{}", self.0 .0)
    }
    fn identity(&self) -> ProviderIdentity {
        ProviderIdentity::Object(self.0.clone())
    }
}

fn memory_opts() -> StorageOptions {
    StorageOptions::new()
}

#[test]
fn providers_with_object_identity_never_share_even_when_hashes_collide() {
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let a = Arc::new(ObjectProvider(Arc::new(Colliding(1))));
    let b = Arc::new(ObjectProvider(Arc::new(Colliding(2))));
    let sa = registry
        .open(
            "memory://t",
            memory_opts(),
            Some(a.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    let sb = registry
        .open(
            "memory://t",
            memory_opts(),
            Some(b as _),
            RefreshConfig::default(),
        )
        .unwrap();
    let sa2 = registry
        .open(
            "memory://t",
            memory_opts(),
            Some(a as _),
            RefreshConfig::default(),
        )
        .unwrap();
    assert_ne!(sa.key(), sb.key());
    assert_eq!(sa.key(), sa2.key());
    assert!(Arc::ptr_eq(&sa.object_store(), &sa2.object_store()));
    assert!(!Arc::ptr_eq(&sa.object_store(), &sb.object_store()));
}

#[test]
fn closing_the_last_store_of_an_object_identity_releases_the_provider() {
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let a = Arc::new(ObjectProvider(Arc::new(Colliding(7))));
    let s1 = registry
        .open(
            "memory://t",
            memory_opts(),
            Some(a.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    let s2 = registry
        .open(
            "memory://t",
            memory_opts(),
            Some(a.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    assert_eq!(registry.len(), 1);
    drop(s1);
    assert_eq!(registry.len(), 1, "still in use");
    drop(s2);
    assert_eq!(registry.len(), 0);
    assert_eq!(
        Arc::strong_count(&a),
        1,
        "the registry no longer holds the provider"
    );
}

fn static_s3(secret: &str) -> StorageOptions {
    [
        ("aws_access_key_id", "AKIDSTATIC"),
        ("aws_secret_access_key", secret),
        ("aws_endpoint", "http://127.0.0.1:1"),
        ("aws_allow_http", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[test]
fn equal_static_options_share_and_rotated_secrets_do_not() {
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let a = registry
        .open(
            "s3://b/t",
            static_s3("secret-one"),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let a2 = registry
        .open(
            "s3://b/other",
            static_s3("secret-one"),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let b = registry
        .open(
            "s3://b/t",
            static_s3("secret-two"),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    assert!(
        Arc::ptr_eq(&a.object_store(), &a2.object_store()),
        "same bucket, same credentials"
    );
    assert!(
        !Arc::ptr_eq(&a.object_store(), &b.object_store()),
        "rotated secret, new store"
    );
    let text = format!("{:?} {:?} {:?} {:?}", a.key(), b.key(), a, b);
    assert!(
        !text.contains("secret-one") && !text.contains("secret-two"),
        "{text}"
    );
    assert!(text.contains("fingerprint"));
}

#[test]
fn idle_entries_expire_but_open_stores_stay_valid() {
    let registry = ObjectStoreRegistry::new(RegistryConfig {
        time_to_idle: Duration::from_millis(300),
        max_capacity: 10,
    });
    let s = registry
        .open(
            "memory://idle",
            memory_opts(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(s.put("k", Bytes::from_static(b"v"))).unwrap();
    std::thread::sleep(Duration::from_millis(600)); // the scenario: idle past time_to_idle
    assert_eq!(registry.len(), 0);
    assert_eq!(rt.block_on(s.get("k")).unwrap(), Bytes::from_static(b"v"));
    registry.clear();
}

#[tokio::test]
async fn session_invalidate_drops_exactly_the_prefix() {
    let session = Arc::new(Session::new(SessionConfig::default()).unwrap());
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let t1 = registry
        .open(
            "memory://m/t1",
            memory_opts(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    let t10 = registry
        .open(
            "memory://m/t10",
            memory_opts(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    for s in [&t1, &t10] {
        s.put("f", Bytes::from_static(b"abcdef")).await.unwrap();
        s.head("f").await.unwrap();
        s.get_range("f", 0..3).await.unwrap();
    }
    assert_eq!(session.stats().entries, 4);
    session.invalidate("memory://m/t1").unwrap();
    let before = session.stats();
    t10.head("f").await.unwrap();
    t10.get_range("f", 0..3).await.unwrap();
    t1.head("f").await.unwrap();
    let after = session.stats();
    assert_eq!(after.hits - before.hits, 2, "t10 kept its entries");
    assert_eq!(after.misses - before.misses, 1, "t1's were dropped");
    assert!(session.invalidate("").is_err());
    // A write drops the object's entries, so the next read sees the new bytes.
    t10.put("f", Bytes::from_static(b"XYZdef")).await.unwrap();
    assert_eq!(
        t10.get_range("f", 0..3).await.unwrap(),
        Bytes::from_static(b"XYZ")
    );
}

#[test]
fn session_rejects_zero_sizes() {
    let e = Session::new(SessionConfig {
        ttl: Duration::ZERO,
        ..SessionConfig::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("ttl"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_an_s3_store_with_an_object_identity_provider_releases_it() {
    let s3 = endpoint().await;
    let creds = s3.issue_credentials(Duration::from_secs(60), None);
    let registry = registry();
    let provider = Arc::new(ObjectProvider(Arc::new(Colliding(9))));
    let store = registry
        .open(
            &format!("s3://{BUCKET}/rel"),
            s3.storage_options(&creds),
            Some(provider.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap();
    store.put("x", Bytes::from_static(b"1")).await.unwrap();
    assert_eq!(store.get("x").await.unwrap(), Bytes::from_static(b"1"));
    drop(store);
    assert_eq!(registry.len(), 0);
    assert_eq!(
        Arc::strong_count(&provider),
        1,
        "the store's refresher no longer holds the provider"
    );
    // The identity itself may outlive the entry inside the cache's bookkeeping: the Java
    // identity therefore holds only a weak reference (ProviderReleaseTest shows the provider
    // is collected after close).
}

#[tokio::test]
async fn session_head_answers_with_the_path_relative_to_the_asking_store() {
    let session = Arc::new(Session::new(SessionConfig::default()).unwrap());
    let registry = ObjectStoreRegistry::new(RegistryConfig::default());
    let root = registry
        .open("memory://p", memory_opts(), None, RefreshConfig::default())
        .unwrap()
        .with_session(session.clone());
    let table = registry
        .open(
            "memory://p/table",
            memory_opts(),
            None,
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    table.put("x.bin", Bytes::from_static(b"12")).await.unwrap();
    assert_eq!(table.head("x.bin").await.unwrap().path, "x.bin");
    let hits = session.stats().hits;
    // Same store key, same object, cached by `table`: `root` sees its own relative path.
    assert_eq!(root.head("table/x.bin").await.unwrap().path, "table/x.bin");
    assert_eq!(session.stats().hits, hits + 1, "served from the session");
}
