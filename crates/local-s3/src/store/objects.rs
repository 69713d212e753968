//! PutObject, GetObject, HeadObject and CopyObject.

use std::sync::Arc;

use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

use super::checksum::{hasher, verify, Kind};
use super::index::{
    check_key, etag_matches, hex, random_name, Attrs, Checksums, Condition, Manifest, Object,
    Segment, DATA,
};
use super::{body, timestamp, Store};
use crate::state::now_millis;

/// The write condition of `If-None-Match` / `If-Match`; S3 takes only `*` in If-None-Match.
pub(crate) fn write_condition(
    if_none_match: Option<ETagCondition>,
    if_match: Option<ETagCondition>,
) -> S3Result<Condition> {
    let if_none_match = match if_none_match {
        None => false,
        Some(ETagCondition::Any) => true,
        Some(ETagCondition::ETag(_)) => {
            return Err(s3_error!(
                NotImplemented,
                "A header you provided implies functionality that is not implemented: If-None-Match takes only *"
            ))
        }
    };
    Ok(Condition {
        if_none_match,
        if_match,
    })
}

/// Whether GET/HEAD preconditions hold: 412 for If-Match / If-Unmodified-Since, 304 for
/// If-None-Match / If-Modified-Since (RFC 7232 precedence).
fn read_preconditions(
    m: &Manifest,
    if_match: Option<&ETagCondition>,
    if_none_match: Option<&ETagCondition>,
    if_modified_since: Option<&Timestamp>,
    if_unmodified_since: Option<&Timestamp>,
) -> S3Result<()> {
    // HTTP dates have whole seconds.
    let modified = timestamp(m.last_modified_millis / 1000 * 1000);
    if let Some(cond) = if_match {
        if !etag_matches(cond, &m.etag) {
            return Err(s3_error!(
                PreconditionFailed,
                "At least one of the pre-conditions you specified did not hold"
            ));
        }
    } else if if_unmodified_since.is_some_and(|t| modified > *t) {
        return Err(s3_error!(
            PreconditionFailed,
            "At least one of the pre-conditions you specified did not hold"
        ));
    }
    if let Some(cond) = if_none_match {
        if etag_matches(cond, &m.etag) {
            return Err(s3_error!(NotModified));
        }
    } else if if_modified_since.is_some_and(|t| modified <= *t) {
        return Err(s3_error!(NotModified));
    }
    Ok(())
}

/// The stored checksums (and their type) a GET or HEAD answers with: as on S3, only when the
/// request asks with `x-amz-checksum-mode: ENABLED`, and only for the whole object (none for a
/// Range or a partNumber).
fn returned_checksums(
    m: &Manifest,
    mode: Option<&ChecksumMode>,
    whole: bool,
) -> (Checksums, Option<ChecksumType>) {
    let enabled = mode.is_some_and(|m| m.as_str().eq_ignore_ascii_case(ChecksumMode::ENABLED));
    if !enabled || !whole || m.checksums.is_empty() {
        return (Checksums::default(), None);
    }
    // Manifests written before checksum types were kept hold single-PUT checksums only.
    let kind = m.checksum_type.unwrap_or(Kind::FullObject);
    (m.checksums.clone(), Some(kind.dto()))
}

fn no_such_key() -> s3s::S3Error {
    s3_error!(NoSuchKey, "The specified key does not exist.")
}

impl Store {
    /// The object a CopyObject or UploadPartCopy reads: 404 `NoSuchKey` when it does not exist,
    /// 501 `NotImplemented` for an access point source.
    pub(super) fn copy_source(&self, source: &CopySource) -> S3Result<Arc<Object>> {
        let CopySource::Bucket { bucket, key, .. } = source else {
            return Err(s3_error!(
                NotImplemented,
                "Only bucket copy sources are supported"
            ));
        };
        self.index.get(bucket, key)?.ok_or_else(no_such_key)
    }

    pub(super) async fn put(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let input = req.input;
        check_key(&input.key)?;
        let mut condition = write_condition(input.if_none_match, input.if_match)?;
        if self.state.answers().ignores_conditions(&input.bucket) {
            condition = Condition::default();
        }
        let bucket_dir = self.index.bucket_dir(&input.bucket);
        self.index.with_bucket(&input.bucket, |_| ())?;
        let given = Checksums {
            crc32: input.checksum_crc32,
            crc32c: input.checksum_crc32c,
            sha1: input.checksum_sha1,
            sha256: input.checksum_sha256,
            crc64nvme: input.checksum_crc64nvme,
        };
        let mut checksums = hasher(input.checksum_algorithm.as_ref(), &given, None)?;
        let file = format!("{DATA}/{}", random_name());
        let body = input.body.unwrap_or_else(|| {
            StreamingBlob::wrap(futures::stream::empty::<Result<bytes::Bytes, std::io::Error>>())
        });
        let body = self
            .state
            .faults()
            .request_body(&input.bucket, &input.key, body);
        let written = body::write(body, &bucket_dir.join(&file), &mut checksums).await?;
        let manifest = Manifest {
            key: input.key.clone(),
            size: written.size,
            etag: hex(&written.md5),
            last_modified_millis: now_millis(),
            attrs: Attrs {
                content_type: input.content_type,
                content_encoding: input.content_encoding,
                content_disposition: input.content_disposition,
                content_language: input.content_language,
                cache_control: input.cache_control,
                website_redirect_location: input.website_redirect_location,
                metadata: input.metadata,
            },
            checksums: Checksums::default(),
            checksum_type: None,
            segments: vec![Segment {
                file,
                size: written.size,
            }],
        };
        // Dropped (and its file removed) unless committed.
        let mut object = Object::new(&bucket_dir, manifest);
        object.manifest.checksums = verify(
            checksums.finalize(),
            given,
            req.trailing_headers,
            input.content_md5.as_deref(),
            &written.md5,
        )?
        .0;
        if !object.manifest.checksums.is_empty() {
            object.manifest.checksum_type = Some(Kind::FullObject);
        }
        let object = Arc::new(object);
        self.index
            .commit(&input.bucket, &input.key, &condition, Some(object.clone()))?;
        let c = &object.manifest.checksums;
        Ok(S3Response::new(PutObjectOutput {
            e_tag: Some(ETag::Strong(object.manifest.etag.clone())),
            checksum_crc32: c.crc32.clone(),
            checksum_crc32c: c.crc32c.clone(),
            checksum_sha1: c.sha1.clone(),
            checksum_sha256: c.sha256.clone(),
            checksum_crc64nvme: c.crc64nvme.clone(),
            checksum_type: object.manifest.checksum_type.map(Kind::dto),
            ..Default::default()
        }))
    }

    pub(super) fn get(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let input = req.input;
        let object = self
            .index
            .get(&input.bucket, &input.key)?
            .ok_or_else(no_such_key)?;
        let m = &object.manifest;
        read_preconditions(
            m,
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        )?;
        let (start, length, content_range) = match &input.range {
            None => (0, m.size, None),
            Some(range) => {
                let r = range.check(m.size)?;
                let range_text = format!("bytes {}-{}/{}", r.start, r.end - 1, m.size);
                (r.start, r.end - r.start, Some(range_text))
            }
        };
        let whole = content_range.is_none() && input.part_number.is_none();
        let (c, checksum_type) = returned_checksums(m, input.checksum_mode.as_ref(), whole);
        let body = body::read(object.clone(), start, length);
        let body = self
            .state
            .faults()
            .response_body(&input.bucket, &input.key, body, length);
        let output = GetObjectOutput {
            content_length: Some(i64::try_from(length).unwrap_or(i64::MAX)),
            content_range,
            accept_ranges: Some("bytes".to_owned()),
            e_tag: Some(ETag::Strong(m.etag.clone())),
            last_modified: Some(timestamp(m.last_modified_millis)),
            content_type: m.attrs.content_type.clone(),
            content_encoding: m.attrs.content_encoding.clone(),
            content_disposition: m.attrs.content_disposition.clone(),
            content_language: m.attrs.content_language.clone(),
            cache_control: m.attrs.cache_control.clone(),
            website_redirect_location: m.attrs.website_redirect_location.clone(),
            metadata: m.attrs.metadata.clone(),
            checksum_crc32: c.crc32,
            checksum_crc32c: c.crc32c,
            checksum_sha1: c.sha1,
            checksum_sha256: c.sha256,
            checksum_crc64nvme: c.crc64nvme,
            checksum_type,
            body: Some(body),
            ..Default::default()
        };
        Ok(S3Response::new(output))
    }

    pub(super) fn head(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let input = req.input;
        let object = self
            .index
            .get(&input.bucket, &input.key)?
            .ok_or_else(no_such_key)?;
        let m = &object.manifest;
        read_preconditions(
            m,
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        )?;
        let whole = input.range.is_none() && input.part_number.is_none();
        let (c, checksum_type) = returned_checksums(m, input.checksum_mode.as_ref(), whole);
        Ok(S3Response::new(HeadObjectOutput {
            content_length: Some(i64::try_from(m.size).unwrap_or(i64::MAX)),
            accept_ranges: Some("bytes".to_owned()),
            e_tag: Some(ETag::Strong(m.etag.clone())),
            last_modified: Some(timestamp(m.last_modified_millis)),
            content_type: m.attrs.content_type.clone(),
            content_encoding: m.attrs.content_encoding.clone(),
            content_disposition: m.attrs.content_disposition.clone(),
            content_language: m.attrs.content_language.clone(),
            cache_control: m.attrs.cache_control.clone(),
            website_redirect_location: m.attrs.website_redirect_location.clone(),
            metadata: m.attrs.metadata.clone(),
            checksum_crc32: c.crc32,
            checksum_crc32c: c.crc32c,
            checksum_sha1: c.sha1,
            checksum_sha256: c.sha256,
            checksum_crc64nvme: c.crc64nvme,
            checksum_type,
            ..Default::default()
        }))
    }

    /// CopyObject: the copy's data files are hard links to the source's (immutable) files,
    /// so nothing is copied; `If-None-Match: *` / `If-Match` on the destination are honoured.
    pub(super) async fn copy(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        let header = |name: &str| {
            req.headers
                .get(name)
                .map(|v| ETagCondition::parse_http_header(v.as_bytes()))
                .transpose()
                .map_err(|_| s3_error!(InvalidArgument, "{name} is not an ETag or *"))
        };
        let condition = write_condition(header("if-none-match")?, header("if-match")?)?;
        let input = req.input;
        check_key(&input.key)?;
        let source = self.copy_source(&input.copy_source)?;
        read_preconditions(
            &source.manifest,
            input.copy_source_if_match.as_ref(),
            input.copy_source_if_none_match.as_ref(),
            input.copy_source_if_modified_since.as_ref(),
            input.copy_source_if_unmodified_since.as_ref(),
        )
        .map_err(|e| {
            if *e.code() == s3s::S3ErrorCode::NotModified {
                s3_error!(
                    PreconditionFailed,
                    "At least one of the pre-conditions you specified did not hold"
                )
            } else {
                e
            }
        })?;
        let bucket_dir = self.index.bucket_dir(&input.bucket);
        self.index.with_bucket(&input.bucket, |_| ())?;
        let mut manifest = source.manifest.clone();
        manifest.key = input.key.clone();
        manifest.last_modified_millis = now_millis();
        let replace = input
            .metadata_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE);
        if replace {
            manifest.attrs = Attrs {
                content_type: input.content_type,
                content_encoding: input.content_encoding,
                content_disposition: input.content_disposition,
                content_language: input.content_language,
                cache_control: input.cache_control,
                website_redirect_location: input.website_redirect_location,
                metadata: input.metadata,
            };
        }
        let segments = source.manifest.segments.clone();
        let src_dir = source.bucket_dir.clone();
        let dst_dir = bucket_dir.clone();
        manifest.segments =
            tokio::task::spawn_blocking(move || link_segments(&src_dir, &dst_dir, &segments))
                .await
                .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?
                .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
        drop(source);
        let object = Arc::new(Object::new(&bucket_dir, manifest));
        self.index
            .commit(&input.bucket, &input.key, &condition, Some(object.clone()))?;
        Ok(S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(ETag::Strong(object.manifest.etag.clone())),
                last_modified: Some(timestamp(object.manifest.last_modified_millis)),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }
}

/// New names in `dst_dir/.data` for `segments` of `src_dir`: hard links, or copies where
/// linking fails. On error the names made so far are removed.
pub(crate) fn link_segments(
    src_dir: &std::path::Path,
    dst_dir: &std::path::Path,
    segments: &[Segment],
) -> std::io::Result<Vec<Segment>> {
    std::fs::create_dir_all(dst_dir.join(DATA))?;
    let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
    for s in segments {
        let file = format!("{DATA}/{}", random_name());
        let (from, to) = (src_dir.join(&s.file), dst_dir.join(&file));
        let made =
            std::fs::hard_link(&from, &to).or_else(|_| std::fs::copy(&from, &to).map(|_| ()));
        if let Err(e) = made {
            for done in &out {
                let _ = std::fs::remove_file(dst_dir.join(&done.file));
            }
            return Err(e);
        }
        out.push(Segment { file, size: s.size });
    }
    Ok(out)
}
