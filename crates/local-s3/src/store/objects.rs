//! PutObject, GetObject, HeadObject and CopyObject.

use std::sync::Arc;

use s3s::checksum::ChecksumHasher;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

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

/// A hasher for the checksums a PUT or part asks for (header value or algorithm).
pub(crate) fn hasher(
    algorithm: Option<&ChecksumAlgorithm>,
    given: &Checksums,
) -> S3Result<ChecksumHasher> {
    let mut h = ChecksumHasher::default();
    let name = algorithm.map(ChecksumAlgorithm::as_str);
    if given.crc32.is_some() || name == Some(ChecksumAlgorithm::CRC32) {
        h.crc32 = Some(Default::default());
    }
    if given.crc32c.is_some() || name == Some(ChecksumAlgorithm::CRC32C) {
        h.crc32c = Some(Default::default());
    }
    if given.sha1.is_some() || name == Some(ChecksumAlgorithm::SHA1) {
        h.sha1 = Some(Default::default());
    }
    if given.sha256.is_some() || name == Some(ChecksumAlgorithm::SHA256) {
        h.sha256 = Some(Default::default());
    }
    if given.crc64nvme.is_some() || name == Some(ChecksumAlgorithm::CRC64NVME) {
        h.crc64nvme = Some(Default::default());
    }
    Ok(h)
}

/// Compares computed checksums with the given ones (headers, or trailers of a chunked body):
/// `BadDigest` on a mismatch.
pub(crate) fn verify(
    computed: s3s::dto::Checksum,
    mut given: Checksums,
    trailers: Option<s3s::TrailingHeaders>,
    content_md5: Option<&str>,
    md5: &[u8; 16],
) -> S3Result<Checksums> {
    if let Some(trailers) = trailers.and_then(|t| t.take()) {
        let get = |name: &str| {
            trailers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        given.crc32 = given.crc32.or(get("x-amz-checksum-crc32"));
        given.crc32c = given.crc32c.or(get("x-amz-checksum-crc32c"));
        given.sha1 = given.sha1.or(get("x-amz-checksum-sha1"));
        given.sha256 = given.sha256.or(get("x-amz-checksum-sha256"));
        given.crc64nvme = given.crc64nvme.or(get("x-amz-checksum-crc64nvme"));
    }
    let pairs = [
        ("crc32", &given.crc32, &computed.checksum_crc32),
        ("crc32c", &given.crc32c, &computed.checksum_crc32c),
        ("sha1", &given.sha1, &computed.checksum_sha1),
        ("sha256", &given.sha256, &computed.checksum_sha256),
        ("crc64nvme", &given.crc64nvme, &computed.checksum_crc64nvme),
    ];
    for (name, given, computed) in pairs {
        if given.is_some() && given != computed {
            return Err(s3_error!(
                BadDigest,
                "The {name} checksum you specified did not match the calculated checksum"
            ));
        }
    }
    if let Some(expected) = content_md5 {
        let actual = base64_md5(md5);
        if expected.trim() != actual {
            return Err(s3_error!(
                BadDigest,
                "The Content-MD5 you specified did not match what we received."
            ));
        }
    }
    Ok(Checksums {
        crc32: computed.checksum_crc32,
        crc32c: computed.checksum_crc32c,
        sha1: computed.checksum_sha1,
        sha256: computed.checksum_sha256,
        crc64nvme: computed.checksum_crc64nvme,
    })
}

fn base64_md5(md5: &[u8; 16]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in md5.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
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
        let condition = write_condition(input.if_none_match, input.if_match)?;
        let bucket_dir = self.index.bucket_dir(&input.bucket);
        self.index.with_bucket(&input.bucket, |_| ())?;
        let given = Checksums {
            crc32: input.checksum_crc32,
            crc32c: input.checksum_crc32c,
            sha1: input.checksum_sha1,
            sha256: input.checksum_sha256,
            crc64nvme: input.checksum_crc64nvme,
        };
        let mut checksums = hasher(input.checksum_algorithm.as_ref(), &given)?;
        let file = format!("{DATA}/{}", random_name());
        let body = input.body.unwrap_or_else(|| {
            StreamingBlob::wrap(futures::stream::empty::<Result<bytes::Bytes, std::io::Error>>())
        });
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
        )?;
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
        let whole = content_range.is_none();
        let c = m.checksums.clone();
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
            checksum_crc32: c.crc32.filter(|_| whole),
            checksum_crc32c: c.crc32c.filter(|_| whole),
            checksum_sha1: c.sha1.filter(|_| whole),
            checksum_sha256: c.sha256.filter(|_| whole),
            checksum_crc64nvme: c.crc64nvme.filter(|_| whole),
            body: Some(body::read(object.clone(), start, length)),
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
        let c = m.checksums.clone();
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
