//! Read versus write: the [`AccessMode`] a store is opened with, and the [`ReadOnlyStore`] that
//! refuses the writes of a store opened for reading.
//!
//! The mode is the storage option [`ACCESS_MODE`] (`read` or `read_write`, default
//! `read_write`), so that it reaches the core the same way from every open path (Rust, the JVM,
//! a catalog table opened by name, Hadoop's per-table settings). The registry takes it out of
//! the options when a store is opened ([`AccessMode::take_from`]) and makes it part of the
//! store's identity (the store key's `access`): a `read` store and a
//! `read_write` store of one table never share a store, a credential cache or a refresher, even
//! when their provider is the same object.
//!
//! A store opened `read` refuses every write here, before any request is sent and before any
//! credential is fetched: puts (whole, conditional, multipart), copies and renames into the
//! store, and deletes. The error is an `object_store` `PermissionDenied` (kind
//! [`ErrorKind::Credentials`](crate::ErrorKind::Credentials), not retryable; in Java a
//! `CredentialsException`) whose message names the operation, the location and that the store
//! was opened for reading. Reads, `HEAD`s and listings pass through.
//!
//! What the catalog is asked for depends on its protocol: a Unity Catalog spec asks for `READ`
//! or `READ_WRITE` credentials; Iceberg REST and Lance Namespace have no read/write parameter
//! (the catalog vends what the caller's principal may do), so there a `read` open only adds
//! the local refusal. See `docs/catalogs.md`, "Read versus write".

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

use crate::error::{Error, Result};
use crate::options::StorageOptions;
pub use crate::options::ACCESS_MODE;

/// Whether a store may write: [`Read`](AccessMode::Read) or [`ReadWrite`](AccessMode::ReadWrite)
/// (the default). Spelled `read` / `read_write` in the [`ACCESS_MODE`] option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum AccessMode {
    /// Reads, `HEAD`s and listings only; every write is refused locally.
    Read,
    /// Reads and writes (the default).
    #[default]
    ReadWrite,
}

impl AccessMode {
    /// `read` or `read_write`: the value of the [`ACCESS_MODE`] option.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessMode::Read => "read",
            AccessMode::ReadWrite => "read_write",
        }
    }

    /// `READ` or `READ_WRITE`: the name in messages (and of the Java enum constant).
    pub fn name(self) -> &'static str {
        match self {
            AccessMode::Read => "READ",
            AccessMode::ReadWrite => "READ_WRITE",
        }
    }

    /// Whether writes are allowed.
    pub fn allows_writes(self) -> bool {
        self == AccessMode::ReadWrite
    }

    /// Reads `read`, `read_write` or `read-write` (ASCII case ignored, surrounding blanks
    /// trimmed); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "read" => Some(AccessMode::Read),
            "read_write" | "read-write" => Some(AccessMode::ReadWrite),
            _ => None,
        }
    }

    /// Removes the [`ACCESS_MODE`] option from `options` and returns the mode it names, `None`
    /// when it is absent.
    ///
    /// # Errors
    /// [`Error::InvalidOption`] (key `access_mode`) quoting the value when it is not `read` or
    /// `read_write`.
    pub fn take_from(options: &mut StorageOptions) -> Result<Option<AccessMode>> {
        let Some(value) = options.remove(ACCESS_MODE) else {
            return Ok(None);
        };
        AccessMode::parse(&value).map(Some).ok_or_else(|| {
            Error::invalid_option(
                ACCESS_MODE,
                format!("must be read or read_write, got {:?}", truncate(&value)),
            )
        })
    }

    /// Sets the [`ACCESS_MODE`] option of `options` to this mode.
    pub fn set_in(self, options: &mut StorageOptions) {
        options.insert(ACCESS_MODE.to_string(), self.as_str().to_string());
    }
}

impl fmt::Display for AccessMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn truncate(value: &str) -> String {
    value.chars().take(40).collect()
}

/// Why a write was refused: the store was opened for reading. The source of the
/// `PermissionDenied` a [`ReadOnlyStore`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyRefusal {
    /// What was refused: `PUT`, `PUT (multipart)`, `COPY`, `RENAME` or `DELETE`.
    pub operation: &'static str,
    /// Where: `scheme://bucket/path` (`from -> to` for copies and renames).
    pub location: String,
}

impl fmt::Display for ReadOnlyRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} refused: the table was opened for reading (access mode READ), so this store \
             sends no writes; open it with access mode READ_WRITE to write",
            self.operation, self.location
        )
    }
}

impl std::error::Error for ReadOnlyRefusal {}

/// A store that passes reads, `HEAD`s and listings to `inner` and refuses every write (see
/// the [module docs](self)). Its multipart API, [`ReadOnlyStore::multipart`], refuses
/// creating, uploading to and completing uploads (aborting passes through).
#[derive(Debug)]
pub struct ReadOnlyStore {
    inner: Arc<dyn ObjectStore>,
    root: String,
}

impl ReadOnlyStore {
    /// Wraps `inner`, whose locations are printed under `root` (`scheme://bucket`).
    pub fn new(inner: Arc<dyn ObjectStore>, root: impl Into<String>) -> Self {
        Self {
            inner,
            root: root.into(),
        }
    }

    /// A multipart API that refuses writes, for the store whose locations are printed under
    /// `root`.
    pub fn multipart(
        inner: Arc<dyn MultipartStore>,
        root: impl Into<String>,
    ) -> Arc<dyn MultipartStore> {
        Arc::new(ReadOnlyMultipart {
            inner,
            root: root.into(),
        })
    }
}

fn location(root: &str, path: &Path) -> String {
    format!("{root}/{path}")
}

fn refuse(operation: &'static str, path: &Path, location: String) -> object_store::Error {
    object_store::Error::PermissionDenied {
        path: path.to_string(),
        source: Box::new(ReadOnlyRefusal {
            operation,
            location,
        }),
    }
}

impl fmt::Display for ReadOnlyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReadOnlyStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for ReadOnlyStore {
    async fn put_opts(
        &self,
        path: &Path,
        _payload: PutPayload,
        _opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        Err(refuse("PUT", path, location(&self.root, path)))
    }

    async fn put_multipart_opts(
        &self,
        path: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(refuse("PUT (multipart)", path, location(&self.root, path)))
    }

    async fn get_opts(&self, path: &Path, options: GetOptions) -> object_store::Result<GetResult> {
        self.inner.get_opts(path, options).await
    }

    async fn get_ranges(
        &self,
        path: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.inner.get_ranges(path, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let root = self.root.clone();
        locations
            .map(move |r| r.and_then(|p| Err(refuse("DELETE", &p, location(&root, &p)))))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        _options: CopyOptions,
    ) -> object_store::Result<()> {
        let at = format!(
            "{} -> {}",
            location(&self.root, from),
            location(&self.root, to)
        );
        Err(refuse("COPY", to, at))
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        _options: RenameOptions,
    ) -> object_store::Result<()> {
        let at = format!(
            "{} -> {}",
            location(&self.root, from),
            location(&self.root, to)
        );
        Err(refuse("RENAME", to, at))
    }
}

struct ReadOnlyMultipart {
    inner: Arc<dyn MultipartStore>,
    root: String,
}

#[async_trait]
impl MultipartStore for ReadOnlyMultipart {
    async fn create_multipart(&self, path: &Path) -> object_store::Result<String> {
        Err(refuse("PUT (multipart)", path, location(&self.root, path)))
    }

    async fn put_part(
        &self,
        path: &Path,
        _id: &String,
        _part_idx: usize,
        _data: PutPayload,
    ) -> object_store::Result<PartId> {
        Err(refuse("PUT (multipart)", path, location(&self.root, path)))
    }

    async fn complete_multipart(
        &self,
        path: &Path,
        _id: &String,
        _parts: Vec<PartId>,
    ) -> object_store::Result<PutResult> {
        Err(refuse("PUT (multipart)", path, location(&self.root, path)))
    }

    /// Passes through: aborting sends no data (and no upload of this store can exist).
    async fn abort_multipart(&self, path: &Path, id: &String) -> object_store::Result<()> {
        self.inner.abort_multipart(path, id).await
    }
}

#[cfg(test)]
mod tests;
