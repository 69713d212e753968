//! Server-side copies and renames.

use object_store::{CopyMode, CopyOptions, ObjectStore, RenameOptions, RenameTargetMode};

use crate::error::{Error, Result};
use crate::store::VendedStore;
use crate::uri::Scheme;

impl VendedStore {
    /// Copies object `from` to `to` inside the store (server side, no bytes through this
    /// process), replacing `to`.
    ///
    /// # Errors
    /// Not found (of `from`), permission/credential, provider and I/O errors.
    pub async fn copy(&self, from: &str, to: &str) -> Result<()> {
        self.copy_mode(from, to, CopyMode::Overwrite).await
    }

    /// Copies `from` to `to` only if `to` does not exist.
    ///
    /// S3 has no atomic create-only copy of its own: the store must be opened with
    /// `aws_copy_if_not_exists=multipart` (AWS S3: a one-part multipart copy completed with
    /// `If-None-Match: *`, sources up to 5 GiB) or `header: <name>: <value>` (stores with a
    /// custom header, e.g. Cloudflare R2).
    ///
    /// # Errors
    /// [`crate::ErrorKind::AlreadyExists`] when `to` exists; [`Error::InvalidOption`] (key
    /// `aws_copy_if_not_exists`) when an S3 store was opened without that option; otherwise as
    /// [`copy`](Self::copy).
    pub async fn copy_if_not_exists(&self, from: &str, to: &str) -> Result<()> {
        self.copy_mode(from, to, CopyMode::Create).await
    }

    /// Moves object `from` to `to`, replacing `to`. S3 has no rename: this is a server-side
    /// copy followed by a delete of `from` (not atomic: a failure between the two leaves both).
    ///
    /// # Errors
    /// As [`copy`](Self::copy).
    pub async fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.rename_mode(from, to, RenameTargetMode::Overwrite)
            .await
    }

    /// Moves `from` to `to` only if `to` does not exist (on S3: a create-only copy, see
    /// [`copy_if_not_exists`](Self::copy_if_not_exists), then a delete of `from`).
    ///
    /// # Errors
    /// As [`copy_if_not_exists`](Self::copy_if_not_exists).
    pub async fn rename_if_not_exists(&self, from: &str, to: &str) -> Result<()> {
        self.rename_mode(from, to, RenameTargetMode::Create).await
    }

    async fn copy_mode(&self, from: &str, to: &str, mode: CopyMode) -> Result<()> {
        let (f, t) = (self.path(from)?, self.path(to)?);
        let create = matches!(mode, CopyMode::Create);
        self.forget_path(&t);
        let result = self
            .entry
            .store
            .copy_opts(&f, &t, CopyOptions::new().with_mode(mode))
            .await;
        self.forget_path(&t);
        result.map_err(|e| self.copy_error(e, create))
    }

    async fn rename_mode(&self, from: &str, to: &str, mode: RenameTargetMode) -> Result<()> {
        let (f, t) = (self.path(from)?, self.path(to)?);
        let create = matches!(mode, RenameTargetMode::Create);
        self.forget_path(&t);
        let result = self
            .entry
            .store
            .rename_opts(&f, &t, RenameOptions::new().with_target_mode(mode))
            .await;
        self.forget_path(&f);
        self.forget_path(&t);
        result.map_err(|e| self.copy_error(e, create))
    }

    fn copy_error(&self, e: object_store::Error, create: bool) -> Error {
        match e {
            object_store::Error::NotSupported { .. }
                if create && self.entry.key.scheme == Scheme::S3 =>
            {
                Error::invalid_option(
                    "aws_copy_if_not_exists",
                    "create-only copies on S3 need the store opened with \
                     aws_copy_if_not_exists=multipart (AWS S3) or a header: form",
                )
            }
            e => e.into(),
        }
    }
}
