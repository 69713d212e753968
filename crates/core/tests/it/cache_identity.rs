//! Cache identity: stores and session caches never cross tables and never go stale after a
//! rotation. Case ids refer to shared/CASES.md. Object identities, static
//! options, idle expiry and session caches are in `cache_identity_registry.rs`.

use crate::common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use common::{endpoint, registry, EndpointProvider, BUCKET};
use vended_storage::{
    RefreshConfig, Session, SessionConfig, StorageOptions, StorageOptionsProvider,
};

fn named(s3: &Arc<local_s3::LocalS3>, id: &str, ttl: Duration) -> Arc<EndpointProvider> {
    let mut p = EndpointProvider::new(s3.clone(), ttl);
    p.id = id.into();
    Arc::new(p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c11_session_reused_across_a_rotation_never_serves_gen1() {
    let s3 = endpoint().await;
    let session = Arc::new(Session::new(SessionConfig::default()).unwrap());
    let registry = registry();
    let uri = format!("s3://{BUCKET}/tables/t1");

    // gen1: fill the session's caches.
    let p1 = named(&s3, "table-t1", Duration::from_secs(3600));
    let gen1_options = p1.vend();
    let gen1 = p1.vended_keys()[0].clone();
    let store1 = registry
        .open(
            &uri,
            gen1_options,
            Some(p1.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    store1
        .put("data", Bytes::from_static(b"0123456789"))
        .await
        .unwrap();
    assert_eq!(store1.head("data").await.unwrap().size, 10);
    assert_eq!(
        store1.get_range("data", 2..5).await.unwrap(),
        Bytes::from_static(b"234")
    );
    drop(store1);

    // Rotation: gen1 is revoked; the table is opened again with a provider that vends gen2.
    s3.revoke(&gen1);
    let gen1_seen = s3.key_stats(&gen1);
    let p2 = named(&s3, "table-t1", Duration::from_secs(3600));
    let gen2_options = p2.vend();
    let gen2 = p2.vended_keys()[0].clone();
    let store2 = registry
        .open(
            &uri,
            gen2_options,
            Some(p2.clone() as _),
            RefreshConfig::default(),
        )
        .unwrap()
        .with_session(session.clone());
    assert_eq!(
        store2.get_range("data", 0..4).await.unwrap(),
        Bytes::from_static(b"0123")
    );
    assert_eq!(store2.get("data").await.unwrap().len(), 10);
    assert_eq!(store2.head("data").await.unwrap().size, 10);
    assert_eq!(
        s3.key_stats(&gen1),
        gen1_seen,
        "no request was signed with gen1 after its revocation"
    );
    assert!(
        s3.key_stats(&gen2).accepted >= 2,
        "{:?}",
        s3.key_stats(&gen2)
    );
    assert_eq!(
        store2.refresher().unwrap().generation(),
        2,
        "the re-open's fresher options were adopted"
    );

    // Cached data is portable: the cached head is served from the session.
    let before = session.stats();
    store2.head("data").await.unwrap();
    assert_eq!(session.stats().hits, before.hits + 1);
    let key_text = format!("{:?} {:?}", store2.key(), session);
    for secret in [&gen1, &gen2] {
        assert!(
            key_text.contains("table-t1") && !key_text.contains(secret.as_str()),
            "{key_text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c13_two_tables_in_one_bucket_each_request_signed_by_its_own_provider() {
    let s3 = endpoint().await;
    let registry = Arc::new(registry());
    let mut pa = EndpointProvider::new(s3.clone(), Duration::from_secs(2));
    pa.scope = Some(format!("{BUCKET}/a"));
    pa.id = "table-a".into();
    let mut pb = EndpointProvider::new(s3.clone(), Duration::from_secs(2));
    pb.scope = Some(format!("{BUCKET}/b"));
    pb.id = "table-b".into();
    let (pa, pb) = (Arc::new(pa), Arc::new(pb));
    let (ia, ib) = (pa.vend(), pb.vend());

    let mut workers = Vec::new();
    for t in 0..8 {
        let (registry, pa, pb, ia, ib) = (
            registry.clone(),
            pa.clone(),
            pb.clone(),
            ia.clone(),
            ib.clone(),
        );
        workers.push(tokio::spawn(async move {
            for round in 0..6 {
                // A, then B, then A again, each opened through the shared registry.
                for (table, p, initial) in [("a", &pa, &ia), ("b", &pb, &ib), ("a", &pa, &ia)] {
                    let store = registry
                        .open(
                            &format!("s3://{BUCKET}/{table}"),
                            initial.clone(),
                            Some(p.clone() as Arc<dyn StorageOptionsProvider>),
                            RefreshConfig::default(),
                        )
                        .unwrap();
                    let path = format!("t{t}-r{round}");
                    store.put(&path, Bytes::from(path.clone())).await.unwrap();
                    assert_eq!(store.get(&path).await.unwrap(), Bytes::from(path.clone()));
                }
                tokio::time::sleep(Duration::from_millis(150)).await; // spread over rotations
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    assert_eq!(registry.len(), 2, "two distinct stores");
    let keys_a: HashSet<String> = pa.vended_keys().into_iter().collect();
    let keys_b: HashSet<String> = pb.vended_keys().into_iter().collect();
    let log = s3.request_log();
    let mut checked = 0;
    for r in &log {
        let Some(key) = &r.key else { continue };
        assert!(r.accepted, "request denied: {r:?}");
        if key.starts_with("a/") {
            assert!(
                keys_a.contains(&r.access_key_id),
                "a/ signed by {}",
                r.access_key_id
            );
        } else if key.starts_with("b/") {
            assert!(
                keys_b.contains(&r.access_key_id),
                "b/ signed by {}",
                r.access_key_id
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 8 * 6 * 3 * 2,
        "only {checked} object requests recorded"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn c14_two_hundred_provider_instances_with_one_id_share_one_store() {
    let s3 = endpoint().await;
    let registry = Arc::new(registry());
    let fetches = Arc::new(AtomicUsize::new(0));
    let vended = Arc::new(Mutex::new(Vec::<String>::new()));

    /// What each task rebuilds from the serialized provider: same id, own instance.
    #[derive(Debug)]
    struct TaskProvider {
        s3: Arc<local_s3::LocalS3>,
        fetches: Arc<AtomicUsize>,
        vended: Arc<Mutex<Vec<String>>>,
    }
    #[async_trait]
    impl StorageOptionsProvider for TaskProvider {
        async fn fetch_storage_options(&self) -> vended_storage::Result<Option<StorageOptions>> {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            let c = self.s3.issue_credentials(Duration::from_secs(3), None);
            self.vended.lock().unwrap().push(c.access_key_id.clone());
            Ok(Some(self.s3.storage_options(&c)))
        }
        fn provider_id(&self) -> String {
            "catalog:table-x".into()
        }
    }

    let seed = s3.root_storage_options();
    let root = registry
        .open(
            &format!("s3://{BUCKET}/x"),
            seed.clone(),
            None,
            RefreshConfig::default(),
        )
        .unwrap();
    root.put("input", Bytes::from_static(b"shared input"))
        .await
        .unwrap();
    drop(root);
    let started = std::time::Instant::now();
    let mut tasks = Vec::new();
    for i in 0..200 {
        let (registry, s3, fetches, vended) = (
            registry.clone(),
            s3.clone(),
            fetches.clone(),
            vended.clone(),
        );
        tasks.push(tokio::spawn(async move {
            // Spread the 200 tasks over about 6 s (two expiry windows of 3 s credentials).
            tokio::time::sleep(Duration::from_millis(30 * i)).await;
            let endpoint_only: StorageOptions = [
                ("aws_endpoint".to_string(), s3.endpoint()),
                ("aws_region".to_string(), "us-east-1".to_string()),
                ("aws_allow_http".to_string(), "true".to_string()),
            ]
            .into_iter()
            .collect();
            let provider = Arc::new(TaskProvider {
                s3,
                fetches,
                vended,
            });
            let store = registry
                .open(
                    &format!("s3://{BUCKET}/x"),
                    endpoint_only,
                    Some(provider as _),
                    RefreshConfig::default(),
                )
                .unwrap();
            store.get("input").await.unwrap()
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), Bytes::from_static(b"shared input"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    let n = fetches.load(Ordering::SeqCst);
    // 3 s credentials are refreshed at half their lifetime: about one fetch per 1.5 s.
    let bound = (elapsed / 1.2).ceil() as usize + 2;
    assert!(
        n >= 1 && n <= bound,
        "{n} fetches in {elapsed:.1} s (bound {bound})"
    );
    for k in vended.lock().unwrap().iter() {
        assert_eq!(s3.key_stats(k).rejected, 0, "no 403 for {k}");
    }
    assert_eq!(
        registry.len(),
        2,
        "one store for the 200 providers (plus the root one)"
    );
}
