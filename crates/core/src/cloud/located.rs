//! [`LocatedStore`]: every cloud store's errors name the operation and the location in the
//! store's own terms (`s3://bucket/path`, `az://container/path`, `gs://bucket/path`), and a 404
//! says whether the bucket (container) or the object is missing (case C27).
//!
//! `object_store`'s own request errors print the request URL: `REDACTED` for requests it marks
//! sensitive (every SAS-signed Azure request), a percent-encoded endpoint URL elsewhere (GCS:
//! `/b/<bucket>/o/a%2Fb`). [`enrich`] puts a [`RequestFailure`] with the store's location into
//! the error instead (same variant, so the error kind is unchanged).
//!
//! A missing bucket is told apart from a missing object by the endpoint's error code or
//! message (S3 `NoSuchBucket`/`NoSuchKey`, Azure `ContainerNotFound`/`BlobNotFound`, GCS
//! messages; each cloud's [`CloudTerms::container_missing`]). An answer to `HEAD` has no body:
//! on a 404 `HEAD`, unless this store has already seen its bucket exist (any success, or a 404
//! naming the object), one probe `GET` of the first byte of the same key is sent, whose 404
//! answer carries the code. The store remembers that the bucket exists; it never remembers that
//! it is missing (it may be created later).
//!
//! A 403 answer that refuses an accepted credential a permission (S3 `AccessDenied`, Azure
//! `AuthorizationPermissionMismatch`, any GCS 403; not an expired, unknown or malformed
//! credential, which the cloud's [`CloudTerms::rejects_credential`] recognises) to a write
//! (`PUT`, `POST`, `DELETE`: puts, multipart calls, copies, deletes) or to a listing says so
//! before the endpoint's message: `PUT s3://b/k: 403 AccessDenied: ` [`NO_WRITES`] `: <message>`,
//! `LIST s3://b/p/: 403 AccessDenied: ` [`NO_LISTING`] `: <message>`. The kind stays
//! [`crate::ErrorKind::Credentials`]; the store that retries rejected credentials does not
//! retry it (a fresh credential of the same grant is refused the same way).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};

use crate::cloud::requests::RequestCounters;
use crate::cloud::secrets::StoreSecrets;
use crate::error::{Missing, RequestFailure};

/// How one cloud names locations and reads 404 answers.
#[derive(Debug, Clone, Copy)]
pub struct CloudTerms {
    /// The URI scheme of locations in messages: `s3`, `az` or `gs`.
    pub scheme: &'static str,
    /// What the cloud calls a bucket: `bucket` or `container`.
    pub container: &'static str,
    /// What a 404 answer says is missing: `Some(true)` the bucket (container), `Some(false)`
    /// the object, `None` when the answer does not tell (no code, an unknown one).
    pub container_missing: fn(&RequestFailure) -> Option<bool>,
    /// Whether an error is the endpoint rejecting the credential itself (expired, unknown,
    /// revoked, badly signed): the cloud's `is_auth_failure`. A 403 that is not such a
    /// rejection refuses an accepted credential a permission.
    pub rejects_credential: fn(&object_store::Error) -> bool,
}

pub use enrich::enrich;
use enrich::{enrich_scrubbed, scrub_error};
use messages::{lacking, refuses_checksums};
pub use messages::{CHECKSUMS_HINT, NO_LISTING, NO_WRITES};

impl CloudTerms {
    /// `scheme://bucket/path` (`scheme://bucket/` for the root).
    pub fn location(&self, bucket: &str, path: &str) -> String {
        format!("{}://{bucket}/{path}", self.scheme)
    }
}

type Source = Box<dyn std::error::Error + Send + Sync>;

/// The path `e` names (if its variant has one) and its source, for the variants of a failed
/// request (the others are returned by no request).
fn parts(e: &mut object_store::Error) -> Option<(Option<&str>, &mut Source)> {
    use object_store::Error as E;
    match e {
        E::NotFound { path, source }
        | E::PermissionDenied { path, source }
        | E::Unauthenticated { path, source }
        | E::Precondition { path, source }
        | E::NotModified { path, source }
        | E::AlreadyExists { path, source } => Some((Some(path.as_str()), source)),
        E::Generic { source, .. } => Some((None, source)),
        _ => None,
    }
}

/// The [`RequestFailure`] that is `e`'s direct source, where [`enrich`] (or a store's own
/// request) put it.
fn failure_mut(e: &mut object_store::Error) -> Option<&mut RequestFailure> {
    parts(e).and_then(|(_, source)| source.downcast_mut::<RequestFailure>())
}

/// What every call of one store shares: its terms, its bucket, and whether it has seen the
/// bucket exist.
#[derive(Debug)]
struct Place {
    terms: CloudTerms,
    bucket: String,
    bucket_seen: AtomicBool,
    /// Keys whose bodiless 403 `HEAD` a probe showed to be a refused permission, for
    /// [`DENIAL_MEMO_TTL`] (case C29): a repeated `HEAD` of such a key is one request.
    /// The probe's code and message, repeated for the key's next denied `HEAD`s.
    denied: moka::sync::Cache<String, (Option<String>, Option<String>)>,
    /// The store's secret values, scrubbed from every error it returns.
    secrets: StoreSecrets,
}

use denial::DENIAL_MEMO_KEYS;
pub use denial::DENIAL_MEMO_TTL;

impl Place {
    fn new(terms: CloudTerms, bucket: &str) -> Self {
        Self {
            terms,
            bucket: bucket.to_string(),
            bucket_seen: AtomicBool::new(false),
            denied: moka::sync::Cache::builder()
                .max_capacity(DENIAL_MEMO_KEYS)
                .time_to_live(DENIAL_MEMO_TTL)
                .build(),
            secrets: StoreSecrets::default(),
        }
    }

    /// The scrubber of the store's secret values now (see [`StoreSecrets::current`]).
    fn scrubber(&self) -> crate::redact::Scrubber {
        self.secrets.current()
    }

    fn seen(&self) {
        self.bucket_seen.store(true, Ordering::Relaxed);
    }

    fn missing(&self, exists: bool, at: String) -> Missing {
        if exists {
            self.seen();
            Missing::Object { at }
        } else {
            Missing::Container {
                word: self.terms.container,
                name: self.bucket.clone(),
            }
        }
    }

    /// [`enrich`] with `path`'s location, then, for a 404 whose answer tells, what is missing.
    fn locate(
        &self,
        e: object_store::Error,
        path: &str,
        operation: Option<&'static str>,
    ) -> object_store::Error {
        let at = self.terms.location(&self.bucket, path);
        self.locate_as(e, at.clone(), at, operation)
    }

    /// [`locate`](Self::locate) printing `printed` as the location; a missing object is `at`.
    fn locate_as(
        &self,
        e: object_store::Error,
        printed: String,
        at: String,
        operation: Option<&'static str>,
    ) -> object_store::Error {
        let scrubber = self.scrubber();
        let scrub = |t: &str| scrubber.scrub(t);
        let mut e = scrub_error(enrich_scrubbed(e, printed, operation, &scrub), &scrub);
        let lacks = RequestFailure::find(&e).and_then(|f| lacking(&self.terms, &e, f));
        if let Some(f) = failure_mut(&mut e) {
            if let Some(lacks) = lacks {
                if !f.message.as_deref().is_some_and(|m| m.starts_with(lacks)) {
                    f.message = Some(match f.message.take() {
                        Some(message) => format!("{lacks}: {message}"),
                        None => lacks.to_string(),
                    });
                }
            }
            if refuses_checksums(f)
                && !f
                    .message
                    .as_deref()
                    .is_some_and(|m| m.ends_with(CHECKSUMS_HINT))
            {
                f.message = Some(match f.message.take() {
                    Some(message) => format!("{message} ({CHECKSUMS_HINT})"),
                    None => CHECKSUMS_HINT.to_string(),
                });
            }
            if f.status == Some(404) && f.missing.is_none() {
                if let Some(container) = (self.terms.container_missing)(f) {
                    f.missing = Some(self.missing(!container, at));
                }
            }
        }
        e
    }
}

/// A cloud store whose errors name `scheme://bucket/path` and tell a missing bucket from a
/// missing object (see the module docs). Every call goes to the inner store (multipart calls
/// to the cloud's multipart API with upload ids); only a 404 answer to `HEAD`, before the store
/// has seen its bucket exist, and a bodiless 403 answer to `HEAD` that the cloud would take for
/// a rejected credential add one request each (the probe). A key whose probe showed a refused
/// permission is remembered for [`DENIAL_MEMO_TTL`]: its next denied `HEAD`s are one request
/// each, with no probe (a scope is the same for every credential of the store's provider).
pub struct LocatedStore<S> {
    place: Arc<Place>,
    inner: Arc<S>,
    multipart: Arc<dyn MultipartStore>,
    counters: Arc<RequestCounters>,
}

impl<S: fmt::Debug> fmt::Debug for LocatedStore<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The inner store's Debug prints no credential.
        f.debug_struct("LocatedStore")
            .field("place", &self.place)
            .field("inner", &self.inner)
            .finish()
    }
}

impl<S: fmt::Display> fmt::Display for LocatedStore<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<S> LocatedStore<S> {
    /// Wraps `inner`, the store of `bucket` (container), naming locations by `terms`;
    /// `multipart` is the same store's multipart API (`object_store`'s cloud store).
    pub fn new(
        terms: CloudTerms,
        bucket: &str,
        inner: S,
        multipart: Arc<dyn MultipartStore>,
    ) -> Self {
        Self {
            place: Arc::new(Place::new(terms, bucket)),
            inner: Arc::new(inner),
            multipart,
            counters: Arc::default(),
        }
    }

    /// The store with `counters`, those of its HTTP connector (see [`Self::counters`]).
    pub fn with_counters(mut self, counters: Arc<RequestCounters>) -> Self {
        self.counters = counters;
        self
    }

    /// The store with `secrets`, the secret values it holds (its options' and its refresher's),
    /// scrubbed from every error it returns with the well-known secret patterns (without them,
    /// the patterns only). Called by the cloud's builder, before the store is shared.
    pub fn with_secrets(mut self, secrets: StoreSecrets) -> Self {
        match Arc::get_mut(&mut self.place) {
            Some(place) => place.secrets = secrets,
            None => log::warn!("store secrets set after the store was shared: ignored"),
        }
        self
    }

    /// The request counters of the store's HTTP connector (all 0 unless set by
    /// [`Self::with_counters`]).
    pub fn counters(&self) -> Arc<RequestCounters> {
        self.counters.clone()
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// `listing` of `prefix`, its errors located (`LIST scheme://bucket/prefix/`).
    fn listing(
        &self,
        prefix: Option<&Path>,
        listing: BoxStream<'static, object_store::Result<ObjectMeta>>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let place = self.place.clone();
        let at = prefix_text(prefix);
        listing
            .map(move |r| match r {
                Ok(m) => {
                    place.seen();
                    Ok(m)
                }
                Err(e) => Err(place.locate(e, &at, Some("LIST"))),
            })
            .boxed()
    }

    fn ok<T>(&self, r: object_store::Result<T>, path: &Path) -> object_store::Result<T> {
        match r {
            Ok(v) => {
                self.place.seen();
                Ok(v)
            }
            Err(e) => Err(self.place.locate(e, path.as_ref(), None)),
        }
    }
}

fn prefix_text(prefix: Option<&Path>) -> String {
    match prefix {
        Some(p) if !p.as_ref().is_empty() => format!("{p}/"),
        _ => String::new(),
    }
}

impl<S: ObjectStore> LocatedStore<S> {
    /// For a 404 `HEAD` (no body, no code): what is missing, from the store's memory or one
    /// probe `GET` of the first byte of the same key.
    async fn probe(&self, location: &Path) -> Option<Missing> {
        let at = self
            .place
            .terms
            .location(&self.place.bucket, location.as_ref());
        if self.place.bucket_seen.load(Ordering::Relaxed) {
            return Some(Missing::Object { at });
        }
        let options = GetOptions::new().with_range(Some(0..1));
        match self.inner.get_opts(location, options).await {
            // The object appeared meanwhile: its bucket exists.
            Ok(_) => Some(self.place.missing(true, at)),
            Err(e) => {
                let mut e = self.place.locate(e, location.as_ref(), None);
                failure_mut(&mut e).and_then(|f| f.missing.take())
            }
        }
    }
}

#[async_trait]
impl<S: ObjectStore> ObjectStore for LocatedStore<S> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let r = self.inner.put_opts(location, payload, opts).await;
        self.ok(r, location)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let r = self.inner.put_multipart_opts(location, opts).await;
        self.ok(r, location)
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let mut e = match self.inner.get_opts(location, options).await {
            Ok(mut r) => {
                self.place.seen();
                body::locate_body(&self.place, &mut r, location);
                return Ok(r);
            }
            Err(e) => self.place.locate(e, location.as_ref(), None),
        };
        let unknown = failure_mut(&mut e)
            .is_some_and(|f| head && f.status == Some(404) && f.missing.is_none());
        let ambiguous = head
            && (self.place.terms.rejects_credential)(&e)
            && failure_mut(&mut e)
                .is_some_and(|f| f.status == Some(403) && f.code.is_none() && f.message.is_none());
        if ambiguous {
            let known = self.place.denied.get(location.as_ref());
            let (code, message) = match known.clone() {
                Some(answer) => answer,
                None => self.probe_denial(location).await,
            };
            if let Some(f) = failure_mut(&mut e) {
                f.code = code.clone();
                f.message = message.clone();
            }
            if known.is_none() && !(self.place.terms.rejects_credential)(&e) {
                self.place
                    .denied
                    .insert(location.as_ref().to_string(), (code, message));
            }
        }
        if unknown {
            let missing = self.probe(location).await;
            if let Some(f) = failure_mut(&mut e) {
                f.missing = missing;
            }
        }
        Err(e)
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        let r = self.inner.get_ranges(location, ranges).await;
        self.ok(r, location)
    }

    /// The inner store's deletes; errors name the key the error names (the bucket when it
    /// names none), unless the inner store named it already.
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let place = self.place.clone();
        self.inner
            .delete_stream(locations)
            .map(move |r| {
                r.map_err(|mut e| {
                    let path = parts(&mut e)
                        .and_then(|(path, _)| path)
                        .unwrap_or_default()
                        .to_string();
                    place.locate(e, &path, None)
                })
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listing(prefix, self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.listing(prefix, self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        match self.inner.list_with_delimiter(prefix).await {
            Ok(r) => {
                self.place.seen();
                Ok(r)
            }
            Err(e) => Err(self.place.locate(e, &prefix_text(prefix), Some("LIST"))),
        }
    }

    /// Errors name both objects (`COPY s3://b/from -> s3://b/to: ...`); a 404 is the source's.
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        match self.inner.copy_opts(from, to, options).await {
            Ok(()) => {
                self.place.seen();
                Ok(())
            }
            Err(e) => {
                let terms = &self.place.terms;
                let source = terms.location(&self.place.bucket, from.as_ref());
                let printed = format!(
                    "{source} -> {}",
                    terms.location(&self.place.bucket, to.as_ref())
                );
                Err(self.place.locate_as(e, printed, source, Some("COPY")))
            }
        }
    }

    // `rename_opts`: the trait's default, a copy and then a delete through this store.
}

mod body;
mod denial;
mod enrich;
mod messages;
mod multipart;
#[cfg(test)]
mod tests;
