//! The conformance checks (run in this order by [`super::run`]) and their helpers. A failed
//! assertion panics; the runner reports it as FAILED.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::TryStreamExt;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use vended_storage::{
    Error, ErrorKind, ObjectStoreRegistry, RefreshConfig, RegistryConfig, StorageOptions,
    StorageOptionsProvider, VendedStore, WriteMode, WriterOptions,
};

use super::{Backend, VendingProvider};

/// The outcome of a check that did not fail (a failure is a panic: an assertion).
pub enum Verdict {
    Passed,
    /// Passed, with what was shown (printed after the status).
    Proven(String),
    NotProvable(String),
}

// Not `Send`: `ObjectWriter::finish`'s future is not (see CONFORMANCE.md), so checks run on
// the test's task with panics caught, not spawned.
type CheckFuture = Pin<Box<dyn Future<Output = Verdict>>>;
type Check = fn(Arc<Backend>, String) -> CheckFuture;

/// The checks, by name, in the order they run.
pub fn checks() -> Vec<(&'static str, Check)> {
    vec![
        ("put_get_head_list_delete", |b, p| Box::pin(objects(b, p))),
        ("ranged_reads", |b, p| Box::pin(ranged_reads(b, p))),
        ("list_with_delimiter", |b, p| Box::pin(listing(b, p))),
        ("copy_and_rename", |b, p| Box::pin(copy_rename(b, p))),
        ("create_only_put", |b, p| Box::pin(create_only(b, p))),
        ("conditional_write_race", |b, p| {
            Box::pin(super::race::race(b, p))
        }),
        ("multipart_writer", |b, p| Box::pin(multipart(b, p))),
        ("refresh_across_windows", |b, p| Box::pin(refresh(b, p))),
        ("server_rejects_expired", |b, p| Box::pin(expired(b, p))),
        ("server_rejects_wrong_secret", |b, p| {
            Box::pin(wrong_secret(b, p))
        }),
        ("revoked_key_recovery", |b, p| Box::pin(revoked(b, p))),
        ("prefix_scope", |b, p| Box::pin(scope(b, p))),
        ("scoped_denied_heads", |b, p| Box::pin(denied_heads(b, p))),
        ("checksums", |b, p| Box::pin(checksums(b, p))),
    ]
}

// ---------------------------------------------------------------------------------------
// Helpers for the checks.

const MIB: usize = 1 << 20;

fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

fn kind<T: std::fmt::Debug>(r: Result<T, Error>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

fn registry() -> ObjectStoreRegistry {
    ObjectStoreRegistry::new(RegistryConfig::default())
}

/// A store at `s3://bucket/prefix` refreshing from a provider of `ttl` credentials
/// (`None`: revocable ones).
pub(super) async fn open_refreshing(
    b: &Backend,
    prefix: &str,
    ttl: Option<Duration>,
    scope: Option<&str>,
) -> (Arc<VendingProvider>, VendedStore) {
    let provider = Arc::new(VendingProvider::new(b.vendor.clone(), ttl, scope));
    let initial = provider.vend().await.expect("initial credentials");
    let store = registry()
        .open(
            &format!("s3://{}/{prefix}", b.bucket),
            initial,
            Some(provider.clone() as Arc<dyn StorageOptionsProvider>),
            RefreshConfig::default(),
        )
        .expect("open");
    (provider, store)
}

/// A store with fixed options and no provider.
fn open_static(b: &Backend, prefix: &str, options: StorageOptions) -> VendedStore {
    registry()
        .open(
            &format!("s3://{}/{prefix}", b.bucket),
            options,
            None,
            RefreshConfig::default(),
        )
        .expect("open")
}

pub(super) const HOUR: Option<Duration> = Some(Duration::from_secs(3600));

// ---------------------------------------------------------------------------------------
// The checks. A failed assertion panics; the runner reports it as FAILED.

async fn objects(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let body = Bytes::from_static(b"conformance object body");
    store.put("a.txt", body.clone()).await.unwrap();
    assert_eq!(store.get("a.txt").await.unwrap(), body);
    let head = store.head("a.txt").await.unwrap();
    assert_eq!(head.size, body.len() as u64);
    assert_eq!(head.path, "a.txt");
    let listed = store.list(None).await.unwrap();
    let paths: Vec<_> = listed.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(listed[0].size, body.len() as u64);
    store.delete("a.txt").await.unwrap();
    assert_eq!(kind(store.head("a.txt").await), ErrorKind::NotFound);
    assert_eq!(kind(store.get("a.txt").await), ErrorKind::NotFound);
    assert!(store.list(None).await.unwrap().is_empty());
    Verdict::Passed
}

async fn ranged_reads(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let src = data(3 * MIB + 17, 15);
    store.put("obj", Bytes::from(src.clone())).await.unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    for _ in 0..20 {
        let offset = rng.random_range(0..src.len() as u64);
        let len = rng.random_range(1..400_000usize);
        let mut buf = vec![0u8; len];
        let n = store
            .read_range_into("obj", offset, &mut buf)
            .await
            .unwrap();
        let end = (offset as usize + len).min(src.len());
        assert_eq!(n, end - offset as usize, "read at {offset} len {len}");
        assert_eq!(&buf[..n], &src[offset as usize..end]);
    }
    let mut buf = [0u8; 8];
    let at_end = store
        .read_range_into("obj", src.len() as u64, &mut buf)
        .await
        .unwrap();
    assert_eq!(at_end, 0, "a read at the end returns nothing");
    let r = store.get_range("obj", 1000..2000).await.unwrap();
    assert_eq!(&r[..], &src[1000..2000]);
    let ranges = [0..100, 2 * MIB as u64..2 * MIB as u64 + 1000, 100..200];
    let got = store.get_ranges("obj", &ranges).await.unwrap();
    assert_eq!(got.len(), ranges.len());
    for (r, g) in ranges.iter().zip(&got) {
        assert_eq!(&g[..], &src[r.start as usize..r.end as usize]);
    }
    Verdict::Passed
}

async fn listing(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    for p in ["a/1", "a/2", "a/sub/3", "b/4", "top"] {
        store.put(p, Bytes::from(p.to_string())).await.unwrap();
    }
    let listed: Vec<_> = store
        .list_stream(None)
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let mut paths: Vec<_> = listed.iter().map(|o| o.path.clone()).collect();
    paths.sort();
    assert_eq!(paths, ["a/1", "a/2", "a/sub/3", "b/4", "top"]);
    let level = store.list_with_delimiter(None).await.unwrap();
    let objects: Vec<_> = level.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["top"]);
    assert_eq!(level.common_prefixes, ["a", "b"]);
    let level = store.list_with_delimiter(Some("a/")).await.unwrap();
    let objects: Vec<_> = level.objects.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(objects, ["a/1", "a/2"]);
    assert_eq!(level.common_prefixes, ["a/sub"]);
    Verdict::Passed
}

async fn copy_rename(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    store.put("src", Bytes::from_static(b"data")).await.unwrap();
    store.copy("src", "dst").await.unwrap();
    assert_eq!(store.get("dst").await.unwrap(), Bytes::from_static(b"data"));
    assert_eq!(store.get("src").await.unwrap(), Bytes::from_static(b"data"));
    store.rename("dst", "moved").await.unwrap();
    assert_eq!(kind(store.head("dst").await), ErrorKind::NotFound);
    assert_eq!(
        store.get("moved").await.unwrap(),
        Bytes::from_static(b"data")
    );
    Verdict::Passed
}

async fn create_only(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    store
        .put_opts("obj", Bytes::from_static(b"one"), WriteMode::Create)
        .await
        .unwrap();
    assert_eq!(
        kind(
            store
                .put_opts("obj", Bytes::from_static(b"two"), WriteMode::Create)
                .await
        ),
        ErrorKind::AlreadyExists
    );
    assert_eq!(store.get("obj").await.unwrap(), Bytes::from_static(b"one"));
    Verdict::Passed
}

async fn multipart(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let src = data(12 * MIB + 3, 17);
    let mut w = store
        .writer(
            "big.bin",
            WriterOptions {
                part_size: 5 * MIB,
                max_concurrency: 2,
                mode: WriteMode::Overwrite,
            },
        )
        .unwrap();
    for piece in src.chunks(MIB) {
        w.write(piece).await.unwrap();
    }
    assert_eq!(
        kind(store.head("big.bin").await),
        ErrorKind::NotFound,
        "invisible before finish"
    );
    let result = w.finish().await.unwrap();
    assert!(result.e_tag.is_some(), "a completed upload has an ETag");
    let mut buf = vec![0u8; src.len()];
    assert_eq!(
        store.get_into("big.bin", &mut buf).await.unwrap(),
        src.len() as u64
    );
    assert_eq!(Sha256::digest(&buf), Sha256::digest(&src));
    Verdict::Passed
}

/// Credentials announced as living 3 s, 8 s of I/O: the store refreshes several times and
/// no request fails. Against a server that enforces expiry this also proves that no request
/// was signed with an expired key (it would have failed).
async fn refresh(b: Arc<Backend>, prefix: String) -> Verdict {
    let (provider, store) = open_refreshing(&b, &prefix, Some(Duration::from_secs(3)), None).await;
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut i = 0u64;
    while Instant::now() < deadline && i < 100_000 {
        let body = Bytes::from(format!("object {i}"));
        let path = format!("obj-{}", i % 8);
        store.put(&path, body.clone()).await.unwrap();
        assert_eq!(store.get(&path).await.unwrap(), body);
        i += 1;
        tokio::time::sleep(Duration::from_millis(50)).await; // pacing: spread I/O over 8 s
    }
    assert!(i >= 20, "only {i} round trips in 8 s");
    let stats = store.refresh_stats().expect("a refreshing store");
    assert!(
        stats.fetches >= 3,
        "{} provider fetches in 8 s of 3 s credentials",
        stats.fetches
    );
    assert_eq!(stats.failures, 0, "{stats:?}");
    assert_eq!(stats.endpoint_rejections, 0, "{stats:?}");
    assert_eq!(stats.fetches as usize, provider.calls());
    assert_eq!(stats.generation, stats.fetches + 1, "{stats:?}");
    if b.vendor.fresh_key_per_vend() {
        let distinct: HashSet<_> = provider.keys().into_iter().collect();
        assert!(
            distinct.len() >= 4,
            "{} distinct keys vended",
            distinct.len()
        );
    }
    Verdict::Passed
}

/// A store that does not know the expiry (no `expires_at_millis`, no provider) keeps using a
/// 2 s credential past its end: the server must answer with a credentials error.
async fn expired(b: Arc<Backend>, prefix: String) -> Verdict {
    if !b.caps.enforces_expiry {
        return Verdict::NotProvable(b.missing_expiry.into());
    }
    let ttl = Duration::from_secs(2);
    let mut options = b.vendor.vend(ttl, None).await.unwrap().options;
    options.remove("expires_at_millis");
    let store = open_static(&b, &prefix, options);
    store.put("a", Bytes::from_static(b"1")).await.unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(500)).await; // the scenario: past expiry
    assert_eq!(kind(store.get("a").await), ErrorKind::Credentials);
    Verdict::Passed
}

/// A wrong secret must be refused. Probed against every backend: one that accepts it is
/// reported not provable with what was observed; one that refuses it although its
/// capabilities say otherwise fails (the description is wrong).
async fn wrong_secret(b: Arc<Backend>, prefix: String) -> Verdict {
    let mut options = b
        .vendor
        .vend(Duration::from_secs(3600), None)
        .await
        .unwrap()
        .options;
    options.insert(
        "aws_secret_access_key".into(),
        "wrong-secret-wrong-secret-wrong-secret00".into(),
    );
    let store = open_static(&b, &prefix, options);
    let r = store.put("a", Bytes::from_static(b"1")).await;
    if b.caps.enforces_signature {
        assert_eq!(kind(r), ErrorKind::Credentials);
        Verdict::Passed
    } else {
        assert!(
            r.is_ok(),
            "the server refused a wrong secret although the backend says it does not check \
             signatures: {r:?}"
        );
        Verdict::NotProvable(format!(
            "{} (observed: a wrong secret was accepted)",
            b.missing_signature
        ))
    }
}

/// A revoked key: one request is rejected, the provider is asked once, the retry with the
/// new key succeeds.
async fn revoked(b: Arc<Backend>, prefix: String) -> Verdict {
    if let Err(why) = b.vendor.vend_revocable().await.map(|v| v.access_key_id) {
        return Verdict::NotProvable(why);
    }
    let (provider, store) = open_refreshing(&b, &prefix, None, None).await;
    store.put("a", Bytes::from_static(b"1")).await.unwrap();
    assert_eq!(provider.calls(), 0);
    let gen1 = provider.keys()[0].clone();
    b.vendor.revoke(&gen1).await.unwrap();
    assert_eq!(store.get("a").await.unwrap(), Bytes::from_static(b"1"));
    assert_eq!(provider.calls(), 1, "one refetch after the rejection");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.auth_refetches, 1, "{stats:?}");
    assert_eq!(stats.endpoint_rejections, 1, "{stats:?}");
    let keys = provider.keys();
    assert_ne!(keys[0], keys[keys.len() - 1], "the retry used a new key");
    // And the new key keeps working.
    store.put("b", Bytes::from_static(b"2")).await.unwrap();
    assert_eq!(provider.calls(), 1);
    Verdict::Passed
}

/// A credential scoped to `bucket/<prefix>/in/` works there and is refused under `out/`.
async fn scope(b: Arc<Backend>, prefix: String) -> Verdict {
    if !b.caps.enforces_prefix_scope {
        return Verdict::NotProvable(b.missing_scope.into());
    }
    let inside = format!("{prefix}/in");
    let scope = format!("{}/{inside}/", b.bucket);
    let (provider, store) = open_refreshing(&b, &inside, HOUR, Some(&scope)).await;
    store.put("x", Bytes::from_static(b"in")).await.unwrap();
    assert_eq!(store.get("x").await.unwrap(), Bytes::from_static(b"in"));
    let listed = store.list(None).await.unwrap();
    assert_eq!(listed.len(), 1);
    let options = provider.vend().await.unwrap();
    let outside = open_static(&b, &format!("{prefix}/out"), options);
    assert_eq!(
        kind(outside.put("x", Bytes::from_static(b"out")).await),
        ErrorKind::Credentials
    );
    assert_eq!(kind(outside.get("x").await), ErrorKind::Credentials);
    Verdict::Passed
}

/// Denied `HEAD`s outside a scoped key's prefix (case C29): each is a `Credentials` error, the
/// key stays valid for its own prefix, no provider call, no credential rejected; a probe only
/// for the first `HEAD` of each key, so 20 `HEAD`s of 2 keys are 22 requests.
async fn denied_heads(b: Arc<Backend>, prefix: String) -> Verdict {
    if !b.caps.enforces_prefix_scope {
        return Verdict::NotProvable(b.missing_scope.into());
    }
    let scope = format!("{}/{prefix}/in/", b.bucket);
    let (provider, store) = open_refreshing(&b, &prefix, HOUR, Some(&scope)).await;
    store.put("in/x", Bytes::from_static(b"in")).await.unwrap();
    let before = store.stats();
    for i in 0..20 {
        let e = store.head(&format!("out/{}", i % 2)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Credentials, "{e}");
        assert!(e.to_string().contains("AccessDenied"), "{e}");
    }
    assert_eq!(store.get("in/x").await.unwrap(), Bytes::from_static(b"in"));
    let after = store.stats();
    assert_eq!(after.requests - before.requests, 20 + 2 + 1, "{after:?}");
    assert_eq!(provider.calls(), 0, "no provider call for a denied path");
    let stats = store.refresh_stats().unwrap();
    assert_eq!(stats.endpoint_rejections, 0, "{stats:?}");
    assert_eq!(stats.auth_refetches, 0, "{stats:?}");
    Verdict::Passed
}

/// End-to-end checksums (on by default): a single PUT and a 12 MiB multipart upload carry
/// CRC64NVME checksums the server accepts; whole reads of both are checked against the stored
/// checksum when the server returns one with `x-amz-checksum-mode: ENABLED`.
async fn checksums(b: Arc<Backend>, prefix: String) -> Verdict {
    let (_p, store) = open_refreshing(&b, &prefix, HOUR, None).await;
    let small = Bytes::from(data(MIB + 5, 23));
    store.put("small.bin", small.clone()).await.unwrap();
    let big = data(12 * MIB + 7, 29);
    let mut w = store
        .writer(
            "big.bin",
            WriterOptions {
                part_size: 5 * MIB,
                max_concurrency: 2,
                mode: WriteMode::Overwrite,
            },
        )
        .unwrap();
    w.write(&big).await.unwrap();
    w.finish().await.unwrap();
    let before = store.stats();
    assert_eq!(store.get("small.bin").await.unwrap(), small);
    assert_eq!(
        Sha256::digest(store.get("big.bin").await.unwrap()),
        Sha256::digest(&big)
    );
    let after = store.stats();
    assert_eq!(after.checksum_mismatches, 0, "{after:?}");
    match after.checksums_matched - before.checksums_matched {
        2 => Verdict::Passed,
        n => Verdict::NotProvable(format!(
            "writes with CRC64NVME accepted; {n} of 2 whole reads returned a well-formed stored checksum \
             to check (single PUT and multipart)"
        )),
    }
}
