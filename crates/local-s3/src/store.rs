//! The storage behind s3s: s3s-fs, with the multipart uploads in progress recorded in
//! [`Uploads`] (s3s-fs keeps no bucket or key per upload) so that `ListMultipartUploads` and
//! the admin API can list them.

use std::sync::Arc;

use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};
use s3s_fs::FileSystem;

use crate::state::State;

/// s3s-fs plus the upload registry.
pub(crate) struct Store {
    fs: FileSystem,
    state: Arc<State>,
}

impl Store {
    pub fn new(state: Arc<State>) -> std::io::Result<Store> {
        let fs = FileSystem::new(state.data_dir())
            .map_err(|e| std::io::Error::other(format!("cannot open data directory: {e:?}")))?;
        Ok(Store { fs, state })
    }
}

#[async_trait::async_trait]
impl S3 for Store {
    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        self.fs.create_bucket(req).await
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        self.fs.copy_object(req).await
    }

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        self.fs.delete_bucket(req).await
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        self.fs.delete_object(req).await
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        self.fs.delete_objects(req).await
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        self.fs.get_bucket_location(req).await
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        self.fs.get_object(req).await
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        self.fs.head_bucket(req).await
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        self.fs.head_object(req).await
    }

    async fn list_buckets(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        self.fs.list_buckets(req).await
    }

    async fn list_objects(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        self.fs.list_objects(req).await
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        self.fs.list_objects_v2(req).await
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        self.fs.put_object(req).await
    }

    async fn upload_part_copy(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        self.fs.upload_part_copy(req).await
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        self.fs.list_parts(req).await
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let (bucket, key) = (req.input.bucket.clone(), req.input.key.clone());
        let resp = self.fs.create_multipart_upload(req).await?;
        if let Some(id) = &resp.output.upload_id {
            self.state
                .uploads()
                .started(&bucket, &key, id, self.state.now());
        }
        Ok(resp)
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let (id, part) = (req.input.upload_id.clone(), req.input.part_number);
        let resp = self.fs.upload_part(req).await?;
        self.state.uploads().part_stored(&id, part);
        Ok(resp)
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let id = req.input.upload_id.clone();
        let resp = self.fs.complete_multipart_upload(req).await?;
        self.state.uploads().finished(&id);
        Ok(resp)
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let id = req.input.upload_id.clone();
        let resp = self.fs.abort_multipart_upload(req).await?;
        self.state.uploads().finished(&id);
        Ok(resp)
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        let input = req.input;
        if !self.state.data_dir().join(&input.bucket).is_dir() {
            return Err(s3_error!(NoSuchBucket));
        }
        let output = list_uploads(&self.state, input)?;
        Ok(S3Response::new(output))
    }
}

/// `ListMultipartUploads` over the registry: prefix, delimiter, key/upload-id markers and
/// `max-uploads` (default and most 1000), ordered by key then start time as S3 does.
pub(crate) fn list_uploads(
    state: &State,
    input: ListMultipartUploadsInput,
) -> S3Result<ListMultipartUploadsOutput> {
    let prefix = input.prefix.clone().unwrap_or_default();
    let max = input.max_uploads.unwrap_or(1000).clamp(0, 1000);
    let max = usize::try_from(max).map_err(|_| s3_error!(InvalidArgument))?;
    let key_marker = input.key_marker.clone().unwrap_or_default();
    let id_marker = input.upload_id_marker.clone();
    let mut uploads = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut truncated = false;
    let mut last: Option<(String, String)> = None;
    for u in state.uploads().list(Some(&input.bucket)) {
        if !u.key.starts_with(&prefix) {
            continue;
        }
        // After the markers: keys after key-marker, or the same key with a later upload id.
        if !key_marker.is_empty() {
            let after = match &id_marker {
                Some(id) if u.key == key_marker => u.upload_id.as_str() > id.as_str(),
                _ => u.key > key_marker,
            };
            if !after {
                continue;
            }
        }
        if let Some(d) = input.delimiter.as_deref().filter(|d| !d.is_empty()) {
            if let Some(pos) = u.key[prefix.len()..].find(d) {
                let common = u.key[..prefix.len() + pos + d.len()].to_owned();
                if prefixes.last() != Some(&common) {
                    if uploads.len() + prefixes.len() == max {
                        truncated = true;
                        break;
                    }
                    prefixes.push(common);
                }
                continue;
            }
        }
        if uploads.len() + prefixes.len() == max {
            truncated = true;
            break;
        }
        last = Some((u.key.clone(), u.upload_id.clone()));
        uploads.push(MultipartUpload {
            key: Some(u.key),
            upload_id: Some(u.upload_id),
            initiated: Some(Timestamp::from(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(u.initiated_millis.max(0) as u64),
            )),
            ..Default::default()
        });
    }
    let (next_key, next_id) = match (truncated, last) {
        (true, Some((k, id))) => (Some(k), Some(id)),
        _ => (None, None),
    };
    Ok(ListMultipartUploadsOutput {
        bucket: Some(input.bucket),
        prefix: input.prefix,
        delimiter: input.delimiter,
        key_marker: input.key_marker,
        upload_id_marker: input.upload_id_marker,
        max_uploads: Some(i32::try_from(max).unwrap_or(1000)),
        is_truncated: Some(truncated),
        next_key_marker: next_key,
        next_upload_id_marker: next_id,
        uploads: Some(uploads),
        common_prefixes: (!prefixes.is_empty()).then(|| {
            prefixes
                .into_iter()
                .map(|p| CommonPrefix { prefix: Some(p) })
                .collect()
        }),
        encoding_type: input.encoding_type,
        ..Default::default()
    })
}
