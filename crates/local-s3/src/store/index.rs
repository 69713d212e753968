//! Objects of every bucket: an in-memory index (key to [`Object`]) backed by one small JSON
//! manifest per object whose file name is the SHA-256 of the key, so that any key S3 accepts
//! (up to 1,024 bytes of UTF-8) is stored whatever its length or characters. An object's
//! bytes are immutable data files (segments) the manifest lists: a single PUT has one, a
//! completed multipart upload its parts, renamed, not copied.
//!
//! Layout of a bucket directory: `.objects/ab/<sha256 of key>.json` (manifests),
//! `.data/<random>` (segments), `.uploads/<upload id>/` (parts in progress), `.tmp/`.
//!
//! Every write (put, complete, copy, delete) checks its condition and replaces the manifest
//! under one lock, so conditional writes are atomic per key. A replaced object's segments
//! are removed when the last reader of it is done (the [`Object`] is dropped).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use s3s::crypto::{Checksum as _, Sha256};
use s3s::dto::ETagCondition;
use s3s::{s3_error, S3Error, S3Result};
use serde::{Deserialize, Serialize};

pub(crate) const OBJECTS: &str = ".objects";
pub(crate) const DATA: &str = ".data";
pub(crate) const UPLOADS: &str = ".uploads";
pub(crate) const TMP: &str = ".tmp";

/// Longest key S3 accepts, in bytes of UTF-8.
pub(crate) const MAX_KEY_BYTES: usize = 1024;

/// Headers stored with an object and returned by GET and HEAD.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Attrs {
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub content_disposition: Option<String>,
    pub content_language: Option<String>,
    pub cache_control: Option<String>,
    pub website_redirect_location: Option<String>,
    pub metadata: Option<HashMap<String, String>>,
}

/// Additional checksums (base64) an object was written with.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Checksums {
    pub crc32: Option<String>,
    pub crc32c: Option<String>,
    pub sha1: Option<String>,
    pub sha256: Option<String>,
    pub crc64nvme: Option<String>,
}

/// One data file of an object, relative to the bucket directory.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Segment {
    pub file: String,
    pub size: u64,
}

/// What the manifest file holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub key: String,
    pub size: u64,
    /// ETag without quotes: hex MD5, or `hex-N` for a multipart object.
    pub etag: String,
    pub last_modified_millis: i64,
    pub attrs: Attrs,
    #[serde(default)]
    pub checksums: Checksums,
    /// How `checksums` cover the object (`None`: no checksum, or a manifest written before
    /// types were kept, which holds single-PUT checksums: FULL_OBJECT).
    #[serde(default)]
    pub checksum_type: Option<super::checksum::Kind>,
    pub segments: Vec<Segment>,
}

/// A stored object. Its segments are removed when it is dropped after being replaced or
/// deleted (or when a write that created it was refused).
pub(crate) struct Object {
    pub manifest: Manifest,
    pub bucket_dir: PathBuf,
    obsolete: AtomicBool,
}

impl Object {
    /// A new object whose segments are removed when it is dropped uncommitted.
    pub fn new(bucket_dir: &Path, manifest: Manifest) -> Object {
        Object {
            manifest,
            bucket_dir: bucket_dir.to_owned(),
            obsolete: AtomicBool::new(true),
        }
    }

    pub fn segment_path(&self, segment: &Segment) -> PathBuf {
        self.bucket_dir.join(&segment.file)
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        if self.obsolete.load(Ordering::Acquire) {
            for s in &self.manifest.segments {
                let _ = fs::remove_file(self.bucket_dir.join(&s.file));
            }
        }
    }
}

/// The precondition of a write.
#[derive(Clone, Debug, Default)]
pub(crate) struct Condition {
    /// `If-None-Match: *`: only if no object has the key (else 412).
    pub if_none_match: bool,
    /// `If-Match`: only if the object exists (else 404 NoSuchKey) with this ETag (else 412).
    pub if_match: Option<ETagCondition>,
}

/// Whether `condition` matches the stored ETag `etag` (quotes and weakness ignored).
pub(crate) fn etag_matches(condition: &ETagCondition, etag: &str) -> bool {
    match condition {
        ETagCondition::Any => true,
        ETagCondition::ETag(e) => e.value() == etag,
    }
}

impl Condition {
    fn check(&self, current: Option<&Arc<Object>>) -> S3Result<()> {
        if self.if_none_match && current.is_some() {
            return Err(s3_error!(
                PreconditionFailed,
                "At least one of the pre-conditions you specified did not hold"
            ));
        }
        if let Some(cond) = &self.if_match {
            let Some(current) = current else {
                return Err(s3_error!(NoSuchKey, "The specified key does not exist."));
            };
            if !etag_matches(cond, &current.manifest.etag) {
                return Err(s3_error!(
                    PreconditionFailed,
                    "At least one of the pre-conditions you specified did not hold"
                ));
            }
        }
        Ok(())
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A random name for a data file or upload: 32 hex digits.
pub(crate) fn random_name() -> String {
    format!("{:032x}", rand::random::<u128>())
}

fn internal(err: impl std::fmt::Display) -> S3Error {
    s3_error!(InternalError, "local-s3 storage: {err}")
}

/// `KeyTooLongError` for keys over 1,024 bytes, `InvalidArgument` for an empty key.
pub(crate) fn check_key(key: &str) -> S3Result<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(s3_error!(
            KeyTooLongError,
            "Your key is too long: {} bytes, at most {MAX_KEY_BYTES} are allowed",
            key.len()
        ));
    }
    if key.is_empty() {
        return Err(s3_error!(InvalidArgument, "The object key is empty"));
    }
    Ok(())
}

type Bucket = BTreeMap<String, Arc<Object>>;

/// The index of every bucket under the data directory.
pub(crate) struct Index {
    root: PathBuf,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Index {
    pub fn new(root: &Path) -> Index {
        Index {
            root: root.to_owned(),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub fn bucket_dir(&self, bucket: &str) -> PathBuf {
        self.root.join(bucket)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Bucket>> {
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the bucket's objects, loading them on first use; `NoSuchBucket` when the
    /// bucket's directory does not exist.
    pub fn with_bucket<R>(&self, bucket: &str, f: impl FnOnce(&mut Bucket) -> R) -> S3Result<R> {
        let dir = self.bucket_dir(bucket);
        let mut buckets = self.lock();
        if !dir.is_dir() || !crate::state::is_valid_bucket_name(bucket) {
            buckets.remove(bucket);
            return Err(s3_error!(
                NoSuchBucket,
                "The specified bucket does not exist"
            ));
        }
        if !buckets.contains_key(bucket) {
            let loaded = load_bucket(&dir).map_err(internal)?;
            buckets.insert(bucket.to_owned(), loaded);
        }
        let objects = buckets.get_mut(bucket).expect("inserted above");
        Ok(f(objects))
    }

    /// The object at `key`, if any.
    pub fn get(&self, bucket: &str, key: &str) -> S3Result<Option<Arc<Object>>> {
        self.with_bucket(bucket, |objects| objects.get(key).cloned())
    }

    /// Makes `object` the one at its key if `condition` holds, atomically with the check;
    /// `None` deletes the key (after the same check).
    pub fn commit(
        &self,
        bucket: &str,
        key: &str,
        condition: &Condition,
        object: Option<Arc<Object>>,
    ) -> S3Result<()> {
        let dir = self.bucket_dir(bucket);
        let manifest_path = manifest_path(&dir, key);
        // Written before taking the lock; only the rename happens under it.
        let staged = match &object {
            Some(obj) => Some(stage_manifest(&dir, &obj.manifest).map_err(internal)?),
            None => None,
        };
        let result = self.with_bucket(bucket, |objects| {
            condition.check(objects.get(key))?;
            match (&object, &staged) {
                (Some(obj), Some(tmp)) => {
                    if let Some(parent) = manifest_path.parent() {
                        fs::create_dir_all(parent).map_err(internal)?;
                    }
                    fs::rename(tmp, &manifest_path).map_err(internal)?;
                    obj.obsolete.store(false, Ordering::Release);
                    if let Some(old) = objects.insert(key.to_owned(), obj.clone()) {
                        old.obsolete.store(true, Ordering::Release);
                    }
                }
                _ => {
                    if let Some(old) = objects.remove(key) {
                        let _ = fs::remove_file(&manifest_path);
                        old.obsolete.store(true, Ordering::Release);
                    }
                }
            }
            Ok(())
        });
        if let Some(tmp) = staged {
            let _ = fs::remove_file(tmp);
        }
        result?
    }

    /// Buckets with a directory, in name order.
    pub fn bucket_names(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter(|n| crate::state::is_valid_bucket_name(n))
            .collect();
        names.sort();
        names
    }

    /// Removes an empty bucket (`BucketNotEmpty` otherwise).
    pub fn delete_bucket(&self, bucket: &str, has_uploads: bool) -> S3Result<()> {
        let dir = self.bucket_dir(bucket);
        let mut buckets = self.lock();
        if !dir.is_dir() {
            return Err(s3_error!(NoSuchBucket));
        }
        let empty = match buckets.get(bucket) {
            Some(objects) => objects.is_empty(),
            None => load_bucket(&dir).map_err(internal)?.is_empty(),
        };
        if !empty || has_uploads {
            return Err(s3_error!(BucketNotEmpty));
        }
        buckets.remove(bucket);
        fs::remove_dir_all(&dir).map_err(internal)
    }
}

/// `.objects/ab/<sha256 hex of key>.json` in the bucket directory.
fn manifest_path(bucket_dir: &Path, key: &str) -> PathBuf {
    let name = hex(&Sha256::checksum(key.as_bytes()));
    bucket_dir
        .join(OBJECTS)
        .join(&name[..2])
        .join(format!("{name}.json"))
}

fn stage_manifest(bucket_dir: &Path, manifest: &Manifest) -> io::Result<PathBuf> {
    let tmp_dir = bucket_dir.join(TMP);
    fs::create_dir_all(&tmp_dir)?;
    let tmp = tmp_dir.join(format!("{}.json", random_name()));
    fs::write(&tmp, serde_json::to_vec(manifest)?)?;
    Ok(tmp)
}

/// Reads every manifest of a bucket directory and removes what no manifest or upload refers
/// to (left by a process that was killed mid-write).
fn load_bucket(dir: &Path) -> io::Result<Bucket> {
    let _ = fs::remove_dir_all(dir.join(TMP));
    let mut objects = Bucket::new();
    for shard in fs::read_dir(dir.join(OBJECTS))
        .into_iter()
        .flatten()
        .flatten()
    {
        for entry in fs::read_dir(shard.path()).into_iter().flatten().flatten() {
            let Ok(bytes) = fs::read(entry.path()) else {
                continue;
            };
            let Ok(manifest) = serde_json::from_slice::<Manifest>(&bytes) else {
                let _ = fs::remove_file(entry.path());
                continue;
            };
            let object = Object::new(dir, manifest);
            object.obsolete.store(false, Ordering::Release);
            objects.insert(object.manifest.key.clone(), Arc::new(object));
        }
    }
    let referenced: std::collections::HashSet<&str> = objects
        .values()
        .flat_map(|o| o.manifest.segments.iter().map(|s| s.file.as_str()))
        .collect();
    for entry in fs::read_dir(dir.join(DATA)).into_iter().flatten().flatten() {
        let name = format!("{DATA}/{}", entry.file_name().to_string_lossy());
        if !referenced.contains(name.as_str()) {
            let _ = fs::remove_file(entry.path());
        }
    }
    Ok(objects)
}
