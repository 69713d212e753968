//! Writes: [`ObjectWriter`] (one PUT when the data fits in one part, otherwise a multipart
//! upload whose parts upload while the caller writes) and [`VendedStore::put_opts`]
//! (conditional PUTs).

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{
    ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, PutPayloadMut, PutResult,
    UpdateVersion,
};

use super::PartLimits;
use crate::error::{Error, Result};
use crate::session::Session;
use crate::store::{StoreEntry, VendedStore};

mod abandon;
mod commit;
mod parts;
mod pending;
#[cfg(test)]
mod race_tests;
mod upload;

pub use abandon::{ABORT_FIRST_PAUSE, ABORT_MAX_ATTEMPTS, ABORT_MAX_PAUSE, ABORT_RETRY_WINDOW};
pub use commit::{CommitResult, CONDITION_PROBE_PREFIX, WRITE_ID_METADATA};
use parts::Chunk;
pub use pending::{PendingCommit, PENDING_COMMIT_VERSION};
use upload::{Ctx, Target, Upload};

/// What a write may replace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// Replace whatever is there (the default).
    #[default]
    Overwrite,
    /// Create only: fail with [`crate::ErrorKind::AlreadyExists`] when the object exists.
    Create,
    /// Replace only the version with this ETag (as [`crate::ObjectInfo::e_tag`] gives it):
    /// fail with [`crate::ErrorKind::Precondition`] when the object's ETag differs or the
    /// object does not exist (whether the server answers 412 or 404).
    IfMatch(String),
}

impl WriteMode {
    /// The error of a refused conditional PUT or completion, the same whatever the server
    /// answered: an if-match write of a missing object is [`crate::ErrorKind::Precondition`]
    /// whether the server answers 412 or 404 (S3-compatible servers differ); a create-only
    /// write of an existing one is [`crate::ErrorKind::AlreadyExists`] whether it answers 409
    /// or 412 (an S3 `If-None-Match: *` completion answers 412). Other errors unchanged.
    fn refusal(&self, e: object_store::Error) -> object_store::Error {
        match (self, e) {
            (WriteMode::IfMatch(_), object_store::Error::NotFound { path, source }) => {
                object_store::Error::Precondition { path, source }
            }
            (WriteMode::Create, object_store::Error::Precondition { path, source }) => {
                object_store::Error::AlreadyExists { path, source }
            }
            (_, e) => e,
        }
    }

    fn put_mode(&self) -> PutMode {
        match self {
            WriteMode::Overwrite => PutMode::Overwrite,
            WriteMode::Create => PutMode::Create,
            WriteMode::IfMatch(e_tag) => PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag.clone()),
                version: None,
            }),
        }
    }
}

/// What a finished write reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteResult {
    /// The new object's ETag, if the store gives one.
    pub e_tag: Option<String>,
    /// The new object's version, if the store keeps versions.
    pub version: Option<String>,
}

impl From<PutResult> for WriteResult {
    fn from(r: PutResult) -> Self {
        Self {
            e_tag: r.e_tag,
            version: r.version,
        }
    }
}

/// Settings of an [`ObjectWriter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    /// Size of each part but the last, bytes. Default 5 MiB (`object_store`'s
    /// `WriteMultipart` default, and S3's minimum). Data up to one part is written with one PUT.
    /// With S3's 10,000-part limit, 5 MiB parts allow objects up to 48.8 GiB; raise it for
    /// larger objects.
    pub part_size: usize,
    /// Most parts uploading at once. Default 8 (`object_store`'s `BufWriter` default). The
    /// writer holds at most `part_size * (max_concurrency + 1)` bytes of data, plus the chunk of
    /// the `write`/`put` call in progress; the process needs more than that (each connection's
    /// buffers, runtime threads, allocator caches: up to about 10 MiB more with the defaults;
    /// budget `part_size * (max_concurrency + 1)` + 16 MiB).
    pub max_concurrency: usize,
    /// What the write may replace. Default [`WriteMode::Overwrite`].
    pub mode: WriteMode,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            part_size: 5 << 20,
            max_concurrency: 8,
            mode: WriteMode::Overwrite,
        }
    }
}

enum State {
    /// Less than one part written so far: kept here, written with one PUT by `finish`.
    Buffer(PutPayloadMut),
    /// A multipart upload is under way.
    Multipart(Box<Upload>),
    /// Finished or aborted.
    Closed(&'static str),
    /// A part, the completion or a check failed; the upload was aborted.
    Failed(Error),
}

/// Writes one object: buffers up to one part, then uploads parts while the caller writes
/// (at most `max_concurrency` at once; the writer holds at most
/// `part_size * (max_concurrency + 1)` bytes of data besides the chunk being written, see
/// [`WriterOptions::max_concurrency`]). Nothing is visible at the path until
/// [`finish`](Self::finish) returns.
///
/// - [`abort`](Self::abort) aborts the multipart upload (no parts left behind) once its parts
///   in flight have ended.
/// - After `finish` or `abort`, `write` and `finish` fail with [`Error::Closed`] (kind
///   [`crate::ErrorKind::Closed`]); `abort` again is a no-op.
/// - After a failure (a part, the completion, a limit) the upload is aborted at once and every
///   later call returns that same error (`abort` returns `Ok`).
/// - Dropping an unfinished writer aborts its upload in the background (on the runtime the
///   writer was created on).
/// - Each request (create, part, complete, abort) is signed with the credential current when
///   it is sent; one the endpoint rejects is retried once with a freshly fetched credential.
///
/// **Parts left behind.** An abort needs a valid credential too. When it fails (typically the
/// credential expired while the provider fails), the write's error becomes
/// [`Error::UploadLeft`]: same kind and provider cause, its message adding the location
/// (`s3://bucket/key`), the upload id ([`upload_id`](Self::upload_id)) and that the parts are
/// still stored; the abort is retried in the background with freshly fetched credentials
/// ([`ABORT_FIRST_PAUSE`] doubling to [`ABORT_MAX_PAUSE`], at most [`ABORT_MAX_ATTEMPTS`]
/// attempts within [`ABORT_RETRY_WINDOW`]), and a warning naming the upload is logged if that
/// fails too. A dropped writer is handled the same way (logged only). Parts of a process killed
/// mid-upload are never aborted by the library: give the bucket a lifecycle rule (S3:
/// `AbortIncompleteMultipartUpload` with `DaysAfterInitiation`; GCS: the
/// `AbortIncompleteMultipartUpload` lifecycle action). On Azure an abort removes nothing: staged
/// blocks stay the blob's uncommitted blocks (Get Block List shows them; reads and listings do
/// not) until Azure discards them, 7 days after staging; a failed write's error says so.
/// - [`WriteMode::Create`] and [`WriteMode::IfMatch`] are atomic when the data fits in one
///   part (one conditional PUT). A multipart upload is checked with a `HEAD` before completing
///   (an early refusal), and its completion carries the condition where the store takes it
///   (S3; Azure with a SAS or bearer token; GCS create-only), so that the store refuses it
///   atomically; the upload is aborted either way. Elsewhere (Azure shared key, GCS if-match,
///   `file://`) the `HEAD` is the only guard; see `docs/streams-and-async.md`. A completion
///   whose answer was lost is retried: if it had completed, the retry may fail the write.
pub struct ObjectWriter {
    store: Arc<dyn ObjectStore>,
    entry: Arc<StoreEntry>,
    session: Option<Arc<Session>>,
    path: Path,
    relative: String,
    options: WriterOptions,
    limits: PartLimits,
    written: u64,
    state: State,
    runtime: Option<tokio::runtime::Handle>,
}

impl fmt::Debug for ObjectWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Buffer(_) => "buffering",
            State::Multipart(_) => "multipart",
            State::Closed(s) => s,
            State::Failed(_) => "failed",
        };
        f.debug_struct("ObjectWriter")
            .field("path", &self.relative)
            .field("written", &self.written)
            .field("state", &state)
            .finish()
    }
}

const CLOSED: &str = "object writer";

impl ObjectWriter {
    /// Bytes accepted so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The path being written (relative to the store's prefix).
    pub fn path(&self) -> &str {
        &self.relative
    }

    /// Whether `finish` or `abort` ran (or a failure closed the writer).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed(_) | State::Failed(_))
    }

    /// Appends `data` (copied once, into the part being filled). Waits while
    /// `max_concurrency` parts are uploading.
    ///
    /// # Errors
    /// [`Error::Closed`] after `finish`/`abort`; the error of a failed part (the upload is then
    /// aborted); [`Error::InvalidOption`] (key `part_size`) when the object would need more
    /// parts than the store allows.
    pub async fn write(&mut self, data: &[u8]) -> Result<()> {
        self.feed(Chunk::Slice(data)).await
    }

    /// Appends `data` without copying it (the part keeps a reference).
    ///
    /// # Errors
    /// As [`write`](Self::write).
    pub async fn put(&mut self, data: Bytes) -> Result<()> {
        self.feed(Chunk::Owned(data)).await
    }

    async fn feed(&mut self, mut data: Chunk<'_>) -> Result<()> {
        self.check_open()?;
        if data.is_empty() {
            return Ok(());
        }
        let part = self.options.part_size as u64;
        let total = self.written + data.len() as u64;
        if total.div_ceil(part) > self.limits.max_parts {
            let e = Error::invalid_option(
                "part_size",
                format!(
                    "{total} bytes need more than {} parts of {part} bytes; use larger parts",
                    self.limits.max_parts
                ),
            );
            return Err(self.fail(e).await);
        }
        if let State::Buffer(buffer) = &mut self.state {
            if total <= part {
                data.append_to(buffer);
                self.written = total;
                return Ok(());
            }
            let buffered = std::mem::take(buffer).freeze();
            match self.start_multipart().await {
                Ok(mut upload) => {
                    for chunk in buffered {
                        upload.put(chunk);
                    }
                    self.state = State::Multipart(Box::new(upload));
                }
                Err(e) => return Err(self.fail(e).await),
            }
        }
        let State::Multipart(upload) = &mut self.state else {
            return self.check_open();
        };
        let concurrency = self.options.max_concurrency;
        while !data.is_empty() {
            if let Err(e) = upload.wait_for_capacity(concurrency).await {
                return Err(self.fail(e).await);
            }
            let room = part - self.written % part;
            let piece = data.split_to(room.min(data.len() as u64) as usize);
            self.written += piece.len() as u64;
            piece.append_to_upload(upload);
        }
        Ok(())
    }

    /// Writes what is left and completes the object, which becomes visible now; returns its
    /// ETag and version.
    ///
    /// # Errors
    /// [`Error::Closed`] after `finish`/`abort`; kind [`crate::ErrorKind::AlreadyExists`] or
    /// [`crate::ErrorKind::Precondition`] when the [`WriteMode`] does not hold; the error of
    /// a failed part or of the completion (the upload is then aborted).
    pub async fn finish(&mut self) -> Result<WriteResult> {
        self.check_open()?;
        let state = std::mem::replace(&mut self.state, State::Closed("finished object writer"));
        self.forget();
        let result = match state {
            State::Buffer(buffer) => {
                let opts = PutOptions {
                    mode: self.options.mode.put_mode(),
                    ..Default::default()
                };
                self.store
                    .put_opts(&self.path, buffer.freeze(), opts)
                    .await
                    .map(WriteResult::from)
                    .map_err(|e| Error::from(self.options.mode.refusal(e)))
            }
            State::Multipart(mut upload) => {
                let outcome = match check_mode(&*self.store, &self.path, &self.options.mode).await {
                    Ok(()) => upload.finish(&self.options.mode).await,
                    Err(e) => Err(e),
                };
                match outcome {
                    Ok(done) => Ok(WriteResult::from(done)),
                    Err(e) => Err(abandon::after_failure(*upload, e).await),
                }
            }
            State::Closed(_) | State::Failed(_) => unreachable_state(),
        };
        self.forget();
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
        }
        result
    }

    /// Aborts the write: a multipart upload is aborted (its parts deleted by the store);
    /// nothing becomes visible. A no-op once closed.
    ///
    /// # Errors
    /// The store's error when aborting the multipart upload fails (the writer is closed all
    /// the same; S3 lifecycle rules clean up abandoned uploads).
    pub async fn abort(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.state, State::Closed("aborted object writer")) {
            State::Multipart(upload) => abandon::abort(*upload).await,
            State::Failed(e) => {
                self.state = State::Failed(e);
                Ok(())
            }
            closed @ State::Closed(_) => {
                self.state = closed;
                Ok(())
            }
            State::Buffer(_) => Ok(()),
        }
    }

    fn check_open(&self) -> Result<()> {
        match &self.state {
            State::Closed(what) => Err(Error::Closed(what)),
            State::Failed(e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// Aborts the upload after `e`; later calls return `e`.
    async fn fail(&mut self, e: Error) -> Error {
        match std::mem::replace(&mut self.state, State::Failed(e.clone())) {
            State::Multipart(upload) => {
                let e = abandon::after_failure(*upload, e).await;
                self.state = State::Failed(e.clone());
                e
            }
            _ => e,
        }
    }

    /// Starts the multipart upload (nothing is uploaded yet).
    async fn start_multipart(&self) -> Result<Upload> {
        let key = &self.entry.key;
        let ctx = Ctx {
            location: format!("{}://{}/{}", key.scheme.as_str(), key.authority, self.path),
            path: self.path.clone(),
            scheme: key.scheme,
            refresher: self.entry.refresher.clone(),
            adapter: crate::cloud::adapter_for(key.scheme).ok(),
        };
        let target = Target::start(ctx, self.entry.multipart.clone(), &*self.store).await?;
        Ok(Upload::new(
            target,
            self.options.part_size,
            self.runtime.clone(),
        ))
    }

    /// The multipart upload's id, once one was started (S3, GCS; `None` before, for
    /// single-PUT writes, on Azure and for local files).
    pub fn upload_id(&self) -> Option<&str> {
        match &self.state {
            State::Multipart(upload) => upload.target.upload_id(),
            _ => None,
        }
    }

    fn forget(&self) {
        if let Some(s) = &self.session {
            s.forget_object(&self.entry.key, self.path.as_ref());
        }
    }
}

/// Checks a create-only or if-match write just before completing a multipart upload (an early
/// refusal; the completion itself is conditional where the store allows, see
/// [`ObjectWriter`]). Takes
/// the fields it needs rather than the writer, so that `finish()` stays `Send` (the writer's
/// upload is not `Sync`): callers may hand it to `tokio::spawn`.
async fn check_mode(store: &dyn ObjectStore, path: &Path, mode: &WriteMode) -> Result<()> {
    let current = match store.head(path).await {
        Ok(meta) => Some(meta),
        Err(object_store::Error::NotFound { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let refused = |e: object_store::Error| Err(Error::from(e));
    match (mode, current) {
        (WriteMode::Overwrite, _) | (WriteMode::Create, None) => Ok(()),
        (WriteMode::Create, Some(_)) => refused(object_store::Error::AlreadyExists {
            path: path.to_string(),
            source: "the object exists (create-only write)".into(),
        }),
        (WriteMode::IfMatch(expected), meta) => {
            if meta.as_ref().and_then(|m| m.e_tag.as_deref()) == Some(expected.as_str()) {
                Ok(())
            } else {
                refused(object_store::Error::Precondition {
                    path: path.to_string(),
                    source: "the object's ETag does not match (if-match write)".into(),
                })
            }
        }
    }
}

fn unreachable_state() -> Result<WriteResult> {
    Err(Error::Closed(CLOSED))
}

impl Drop for ObjectWriter {
    fn drop(&mut self) {
        // An unfinished upload aborts itself in the background when dropped (see `Upload`).
        self.state = State::Closed(CLOSED);
    }
}

impl VendedStore {
    /// Opens a writer for `path` (see [`ObjectWriter`]). Sends no request until one part is
    /// full or [`ObjectWriter::finish`] runs.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] for a bad path, key `part_size` for a part size outside the
    /// store's limits (S3: 5 MiB to 5 GiB), key `max_concurrency` for 0.
    pub fn writer(&self, path: &str, options: WriterOptions) -> Result<ObjectWriter> {
        let full = self.path(path)?;
        let limits = PartLimits::of(self.entry.key.scheme);
        if options.part_size < limits.min_part || options.part_size > limits.max_part {
            return Err(Error::invalid_option(
                "part_size",
                format!(
                    "{} bytes is outside this store's part sizes ({} to {} bytes)",
                    options.part_size, limits.min_part, limits.max_part
                ),
            ));
        }
        if options.max_concurrency == 0 {
            return Err(Error::invalid_option(
                "max_concurrency",
                "at least one part must be able to upload",
            ));
        }
        Ok(ObjectWriter {
            store: self.entry.store.clone(),
            entry: self.entry.clone(),
            session: self.session.clone(),
            relative: super::relative_to(&self.base, &full),
            path: full,
            options,
            limits,
            written: 0,
            state: State::Buffer(PutPayloadMut::new()),
            runtime: tokio::runtime::Handle::try_current().ok(),
        })
    }

    /// Writes a whole object with one PUT, under `mode`: [`WriteMode::Create`] fails with
    /// [`crate::ErrorKind::AlreadyExists`] when the object exists, [`WriteMode::IfMatch`]
    /// with [`crate::ErrorKind::Precondition`] when its ETag differs or it is missing. Both are
    /// atomic at the store (S3 `If-None-Match: *` / `If-Match`).
    ///
    /// # Errors
    /// Those above; permission/credential, provider and I/O errors.
    pub async fn put_opts(&self, path: &str, data: Bytes, mode: WriteMode) -> Result<WriteResult> {
        let p = self.path(path)?;
        let opts = PutOptions {
            mode: mode.put_mode(),
            ..Default::default()
        };
        self.forget_path(&p);
        let result = self
            .entry
            .store
            .put_opts(&p, PutPayload::from(data), opts)
            .await;
        self.forget_path(&p);
        Ok(result.map_err(|e| mode.refusal(e))?.into())
    }
}
