//! [`super::LocatedStore`]'s multipart API: the cloud's, with errors located.

use std::fmt;

use async_trait::async_trait;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{PutPayload, PutResult};

use super::LocatedStore;

/// The cloud's multipart API with upload ids (S3 and GCS: `CreateMultipartUpload`,
/// `UploadPart`, `CompleteMultipartUpload`, `AbortMultipartUpload`; Azure: Put Block and Put
/// Block List, with an empty upload id and an abort that does nothing: staged blocks stay as the
/// blob's uncommitted blocks until Azure discards them, 7 days after they were staged). The
/// writer uses it so that an upload it cannot abort can be named by its id.
#[async_trait]
impl<S: Send + Sync + fmt::Debug + 'static> MultipartStore for LocatedStore<S> {
    async fn create_multipart(&self, path: &Path) -> object_store::Result<String> {
        let r = self.multipart.create_multipart(path).await;
        self.ok(r, path)
    }

    async fn put_part(
        &self,
        path: &Path,
        id: &String,
        part_idx: usize,
        data: PutPayload,
    ) -> object_store::Result<PartId> {
        let r = self.multipart.put_part(path, id, part_idx, data).await;
        self.ok(r, path)
    }

    async fn complete_multipart(
        &self,
        path: &Path,
        id: &String,
        parts: Vec<PartId>,
    ) -> object_store::Result<PutResult> {
        let r = self.multipart.complete_multipart(path, id, parts).await;
        self.ok(r, path)
    }

    async fn abort_multipart(&self, path: &Path, id: &String) -> object_store::Result<()> {
        let r = self.multipart.abort_multipart(path, id).await;
        self.ok(r, path)
    }
}
