//! The storage behind s3s: objects in an index of manifests named by the hash of the key
//! ([`index`]), bytes in immutable data files ([`body`]), multipart uploads kept as parts and
//! completed without copying ([`multipart`]), listings from the index ([`list`]).

mod body;
mod checksum;
mod index;
mod list;
mod multipart;
mod objects;
mod part_checksum;
mod uploads;

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};

pub(crate) use uploads::Uploads;

use crate::state::State;
use index::Index;

/// The `S3` implementation local-s3 serves.
pub(crate) struct Store {
    index: Index,
    state: Arc<State>,
}

impl Store {
    /// Opens the data directory; uploads a previous process left are removed.
    pub fn new(state: Arc<State>) -> std::io::Result<Store> {
        let root = state.data_dir().to_owned();
        std::fs::create_dir_all(&root)?;
        Uploads::discard_stale(&root);
        Ok(Store {
            index: Index::new(&root),
            state,
        })
    }
}

/// An S3 timestamp from epoch milliseconds.
pub(crate) fn timestamp(millis: i64) -> Timestamp {
    Timestamp::from(UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0)))
}

#[async_trait::async_trait]
impl S3 for Store {
    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let bucket = req.input.bucket;
        if self.index.bucket_dir(&bucket).is_dir() {
            return Err(s3_error!(BucketAlreadyOwnedByYou));
        }
        self.state
            .create_bucket(&bucket)
            .map_err(|e| s3_error!(InvalidBucketName, "{e}"))?;
        Ok(S3Response::new(CreateBucketOutput {
            location: Some(format!("/{bucket}")),
        }))
    }

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        let bucket = req.input.bucket;
        let has_uploads = self.state.uploads().any_in(&bucket);
        self.index.delete_bucket(&bucket, has_uploads)?;
        Ok(S3Response::new(DeleteBucketOutput {}))
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        self.index.with_bucket(&req.input.bucket, |_| ())?;
        Ok(S3Response::new(HeadBucketOutput::default()))
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        self.index.with_bucket(&req.input.bucket, |_| ())?;
        Ok(S3Response::new(GetBucketLocationOutput::default()))
    }

    async fn list_buckets(
        &self,
        _req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let buckets = self
            .index
            .bucket_names()
            .into_iter()
            .map(|name| {
                let created = std::fs::metadata(self.index.bucket_dir(&name))
                    .and_then(|m| m.modified())
                    .map(Timestamp::from)
                    .ok();
                Bucket {
                    name: Some(name),
                    creation_date: created,
                    bucket_region: None,
                }
            })
            .collect();
        Ok(S3Response::new(ListBucketsOutput {
            buckets: Some(buckets),
            ..Default::default()
        }))
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        self.put(req).await
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        self.get(req)
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        self.head(req)
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        let input = req.input;
        let condition = index::Condition {
            if_none_match: false,
            if_match: input.if_match,
        };
        self.index
            .commit(&input.bucket, &input.key, &condition, None)?;
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let input = req.input;
        let quiet = input.delete.quiet.unwrap_or(false);
        let mut deleted = Vec::new();
        for object in input.delete.objects {
            self.index.commit(
                &input.bucket,
                &object.key,
                &index::Condition::default(),
                None,
            )?;
            if !quiet {
                deleted.push(DeletedObject {
                    key: Some(object.key),
                    ..Default::default()
                });
            }
        }
        Ok(S3Response::new(DeleteObjectsOutput {
            deleted: Some(deleted),
            ..Default::default()
        }))
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        self.copy(req).await
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let input = req.input;
        let max = list::max_entries(input.max_keys)?;
        let url = list::url_encoded(input.encoding_type.as_ref());
        let prefix = input.prefix.clone().unwrap_or_default();
        let after = match (&input.continuation_token, &input.start_after) {
            (Some(token), _) => Some(token.clone()),
            (None, after) => after.clone(),
        };
        let page = self.index.with_bucket(&input.bucket, |objects| {
            list::page(
                objects,
                &prefix,
                input.delimiter.as_deref(),
                after.as_deref(),
                max,
            )
        })?;
        let count = page.objects.len() + page.prefixes.len();
        Ok(S3Response::new(ListObjectsV2Output {
            name: Some(input.bucket),
            prefix: input.prefix.map(|p| list::encode(&p, url)),
            delimiter: input.delimiter.map(|d| list::encode(&d, url)),
            start_after: input.start_after.map(|s| list::encode(&s, url)),
            max_keys: Some(i32::try_from(max).unwrap_or(1000)),
            key_count: Some(i32::try_from(count).unwrap_or(i32::MAX)),
            is_truncated: Some(page.truncated),
            continuation_token: input.continuation_token,
            next_continuation_token: page.next,
            contents: Some(page.objects.iter().map(|o| list::entry(o, url)).collect()),
            common_prefixes: list::common_prefixes(page.prefixes, url),
            encoding_type: input.encoding_type,
            ..Default::default()
        }))
    }

    async fn list_objects(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        let input = req.input;
        let max = list::max_entries(input.max_keys)?;
        let url = list::url_encoded(input.encoding_type.as_ref());
        let prefix = input.prefix.clone().unwrap_or_default();
        let page = self.index.with_bucket(&input.bucket, |objects| {
            list::page(
                objects,
                &prefix,
                input.delimiter.as_deref(),
                input.marker.as_deref(),
                max,
            )
        })?;
        // S3 sends NextMarker only with a delimiter (else the last key is the marker).
        let next_marker = page
            .next
            .filter(|_| input.delimiter.is_some())
            .map(|m| list::encode(&m, url));
        Ok(S3Response::new(ListObjectsOutput {
            name: Some(input.bucket),
            prefix: input.prefix.map(|p| list::encode(&p, url)),
            delimiter: input.delimiter.map(|d| list::encode(&d, url)),
            marker: input.marker.map(|m| list::encode(&m, url)),
            max_keys: Some(i32::try_from(max).unwrap_or(1000)),
            is_truncated: Some(page.truncated),
            next_marker,
            contents: Some(page.objects.iter().map(|o| list::entry(o, url)).collect()),
            common_prefixes: list::common_prefixes(page.prefixes, url),
            encoding_type: input.encoding_type,
            ..Default::default()
        }))
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        self.index.with_bucket(&req.input.bucket, |_| ())?;
        Ok(S3Response::new(list::list_uploads(&self.state, req.input)?))
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        self.create_upload(req)
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        self.put_part(req).await
    }

    async fn upload_part_copy(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        self.copy_part(req).await
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        self.parts(req)
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        self.complete(req)
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        self.abort(req)
    }
}
