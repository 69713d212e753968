//! Multipart uploads. Parts are files under `.uploads/<upload id>/`; CompleteMultipartUpload
//! hard-links them into the bucket's data files and writes one manifest listing them, so it
//! takes milliseconds whatever the object's size (no bytes are copied or joined).

use std::sync::Arc;

use s3s::crypto::{Checksum as _, Md5};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};

use super::checksum::{hasher, offered, upload_checksum, verify, Kind};
use super::index::{check_key, hex, random_name, Attrs, Checksums, Manifest, Object, Segment};
use super::objects::{link_segments, write_condition};
use super::part_checksum::{check_listed_part, check_part_offer, complete_checksum};
use super::uploads::{no_such_upload, upload_dir, Part, Upload};
use super::{body, timestamp, Store};
use crate::state::now_millis;

/// Smallest part but the last, as on S3.
const MIN_PART: u64 = 5 << 20;

fn check_upload_id(id: &str) -> S3Result<()> {
    if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(no_such_upload())
    }
}

fn check_part_number(n: i32) -> S3Result<()> {
    if (1..=10_000).contains(&n) {
        Ok(())
    } else {
        Err(s3_error!(
            InvalidArgument,
            "Part number must be an integer between 1 and 10000, inclusive"
        ))
    }
}

impl Store {
    pub(super) fn create_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let input = req.input;
        check_key(&input.key)?;
        self.index.with_bucket(&input.bucket, |_| ())?;
        let checksum = upload_checksum(
            input.checksum_algorithm.as_ref(),
            input.checksum_type.as_ref(),
        )?;
        let id = random_name();
        self.state.uploads().start(
            &id,
            Upload {
                bucket: input.bucket.clone(),
                key: input.key.clone(),
                initiated_millis: self.state.now(),
                attrs: Attrs {
                    content_type: input.content_type,
                    content_encoding: input.content_encoding,
                    content_disposition: input.content_disposition,
                    content_language: input.content_language,
                    cache_control: input.cache_control,
                    website_redirect_location: input.website_redirect_location,
                    metadata: input.metadata,
                },
                checksum,
                parts: Default::default(),
            },
        );
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(id),
            checksum_algorithm: checksum.map(|(a, _)| a.dto()),
            checksum_type: checksum.map(|(_, k)| k.dto()),
            ..Default::default()
        }))
    }

    pub(super) async fn put_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let input = req.input;
        check_upload_id(&input.upload_id)?;
        check_part_number(input.part_number)?;
        let upload = self
            .state
            .uploads()
            .get(&input.bucket, &input.key, &input.upload_id)?;
        let given = Checksums {
            crc32: input.checksum_crc32,
            crc32c: input.checksum_crc32c,
            sha1: input.checksum_sha1,
            sha256: input.checksum_sha256,
            crc64nvme: input.checksum_crc64nvme,
        };
        let algorithm = input.checksum_algorithm.as_ref();
        check_part_offer(upload.checksum, &offered(algorithm, &given)?)?;
        let declared = upload.checksum.map(|(a, _)| a);
        let mut checksums = hasher(algorithm, &given, declared)?;
        let dir = upload_dir(&self.index.bucket_dir(&input.bucket), &input.upload_id);
        let file = dir.join(format!("{}.{}", input.part_number, random_name()));
        let body = input.body.ok_or_else(|| s3_error!(IncompleteBody))?;
        let body = self
            .state
            .faults()
            .request_body(&input.bucket, &input.key, body);
        let written = body::write(body, &file, &mut checksums).await?;
        let verified = verify(
            checksums.finalize(),
            given,
            req.trailing_headers,
            input.content_md5.as_deref(),
            &written.md5,
        );
        let (computed, given) = match verified {
            Ok(v) => v,
            Err(e) => {
                let _ = std::fs::remove_file(&file);
                return Err(e);
            }
        };
        self.state.uploads().add_part(
            &input.upload_id,
            input.part_number,
            Part {
                file,
                size: written.size,
                md5: written.md5,
                last_modified_millis: now_millis(),
                checksums: computed,
            },
        )?;
        // As on S3: the checksums the request gave (header or trailer) are echoed.
        Ok(S3Response::new(UploadPartOutput {
            e_tag: Some(ETag::Strong(hex(&written.md5))),
            checksum_crc32: given.crc32,
            checksum_crc32c: given.crc32c,
            checksum_sha1: given.sha1,
            checksum_sha256: given.sha256,
            checksum_crc64nvme: given.crc64nvme,
            ..Default::default()
        }))
    }

    pub(super) async fn copy_part(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        let input = req.input;
        check_upload_id(&input.upload_id)?;
        check_part_number(input.part_number)?;
        let upload = self
            .state
            .uploads()
            .get(&input.bucket, &input.key, &input.upload_id)?;
        let source = self.copy_source(&input.copy_source)?;
        let size = source.manifest.size;
        let (start, length) = match input.copy_source_range.as_deref() {
            None => (0, size),
            Some(text) => {
                let range = text
                    .strip_prefix("bytes=")
                    .and_then(|r| r.split_once('-'))
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                    .filter(|(a, b)| a <= b && *b < size)
                    .ok_or_else(|| {
                        s3_error!(InvalidRange, "The requested range is not satisfiable")
                    })?;
                (range.0, range.1 - range.0 + 1)
            }
        };
        let dir = upload_dir(&self.index.bucket_dir(&input.bucket), &input.upload_id);
        let file = dir.join(format!("{}.{}", input.part_number, random_name()));
        // The upload's checksum of the copied bytes is computed here (and answered).
        let declared = upload.checksum.map(|(a, _)| a);
        let mut checksums = hasher(None, &Checksums::default(), declared)?;
        let written = body::write(body::read(source, start, length), &file, &mut checksums).await?;
        let c = verify(
            checksums.finalize(),
            Checksums::default(),
            None,
            None,
            &written.md5,
        )?
        .0;
        self.state.uploads().add_part(
            &input.upload_id,
            input.part_number,
            Part {
                file,
                size: written.size,
                md5: written.md5,
                last_modified_millis: now_millis(),
                checksums: c.clone(),
            },
        )?;
        Ok(S3Response::new(UploadPartCopyOutput {
            copy_part_result: Some(CopyPartResult {
                e_tag: Some(ETag::Strong(hex(&written.md5))),
                last_modified: Some(timestamp(now_millis())),
                checksum_crc32: c.crc32,
                checksum_crc32c: c.crc32c,
                checksum_sha1: c.sha1,
                checksum_sha256: c.sha256,
                checksum_crc64nvme: c.crc64nvme,
            }),
            ..Default::default()
        }))
    }

    pub(super) fn parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        let input = req.input;
        let upload = self
            .state
            .uploads()
            .get(&input.bucket, &input.key, &input.upload_id)?;
        let after = input.part_number_marker.unwrap_or(0);
        let max = usize::try_from(input.max_parts.unwrap_or(1000).clamp(0, 1000)).unwrap_or(1000);
        let mut parts: Vec<s3s::dto::Part> = Vec::new();
        let mut truncated = false;
        for (n, p) in upload.parts.range(after.saturating_add(1)..) {
            if parts.len() == max {
                truncated = true;
                break;
            }
            // The upload's checksum of each part, as on S3.
            let c = match upload.checksum {
                Some((a, _)) => p.checksums.only(a),
                None => Checksums::default(),
            };
            parts.push(s3s::dto::Part {
                part_number: Some(*n),
                size: Some(i64::try_from(p.size).unwrap_or(i64::MAX)),
                e_tag: Some(ETag::Strong(hex(&p.md5))),
                last_modified: Some(timestamp(p.last_modified_millis)),
                checksum_crc32: c.crc32,
                checksum_crc32c: c.crc32c,
                checksum_sha1: c.sha1,
                checksum_sha256: c.sha256,
                checksum_crc64nvme: c.crc64nvme,
            });
        }
        let next = parts
            .last()
            .and_then(|p| p.part_number)
            .filter(|_| truncated);
        Ok(S3Response::new(ListPartsOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(input.upload_id),
            part_number_marker: input.part_number_marker,
            next_part_number_marker: next,
            max_parts: Some(i32::try_from(max).unwrap_or(1000)),
            is_truncated: Some(truncated),
            parts: Some(parts),
            checksum_algorithm: upload.checksum.map(|(a, _)| a.dto()),
            checksum_type: upload.checksum.map(|(_, k)| k.dto()),
            ..Default::default()
        }))
    }

    /// Checks the listed parts, links them as the object's segments and commits the
    /// manifest under the key's condition. A refused condition leaves the upload as it was.
    pub(super) fn complete(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let input = req.input;
        let condition = write_condition(input.if_none_match, input.if_match)?;
        let upload = self
            .state
            .uploads()
            .get(&input.bucket, &input.key, &input.upload_id)?;
        let listed = input
            .multipart_upload
            .and_then(|m| m.parts)
            .filter(|p| !p.is_empty())
            .ok_or_else(|| s3_error!(MalformedXML, "You must specify at least one part"))?;
        let mut chosen: Vec<&Part> = Vec::with_capacity(listed.len());
        let mut previous = 0;
        for (i, p) in listed.iter().enumerate() {
            let n = p
                .part_number
                .ok_or_else(|| s3_error!(MalformedXML, "A part lacks its PartNumber"))?;
            if n <= previous {
                return Err(s3_error!(InvalidPartOrder, "The list of parts was not in ascending order. Parts must be ordered by part number."));
            }
            previous = n;
            let part = upload
                .parts
                .get(&n)
                .filter(|part| p.e_tag.as_ref().is_none_or(|e| e.value() == hex(&part.md5)));
            let part = part.ok_or_else(|| s3_error!(InvalidPart, "One or more of the specified parts could not be found or its ETag did not match: part {n}"))?;
            check_listed_part(upload.checksum, n, p, &part.checksums)?;
            if i + 1 < listed.len() && part.size < MIN_PART {
                return Err(s3_error!(EntityTooSmall, "Your proposed upload is smaller than the minimum allowed object size: part {n} has {} bytes", part.size));
            }
            chosen.push(part);
        }
        let given = Checksums {
            crc32: input.checksum_crc32,
            crc32c: input.checksum_crc32c,
            sha1: input.checksum_sha1,
            sha256: input.checksum_sha256,
            crc64nvme: input.checksum_crc64nvme,
        };
        let (checksums, checksum_type) = complete_checksum(
            upload.checksum,
            &chosen,
            &given,
            input.checksum_type.as_ref(),
        )?;
        let bucket_dir = self.index.bucket_dir(&input.bucket);
        let dir = upload_dir(&bucket_dir, &input.upload_id);
        let parts: Vec<Segment> = chosen
            .iter()
            .map(|p| Segment {
                file: p
                    .file
                    .strip_prefix(&bucket_dir)
                    .unwrap_or(&p.file)
                    .to_string_lossy()
                    .into_owned(),
                size: p.size,
            })
            .collect();
        let segments = link_segments(&bucket_dir, &bucket_dir, &parts)
            .map_err(|e| s3_error!(InternalError, "local-s3 storage: {e}"))?;
        let mut etag = Md5::new();
        for p in &chosen {
            etag.update(&p.md5);
        }
        let manifest = Manifest {
            key: input.key.clone(),
            size: chosen.iter().map(|p| p.size).sum(),
            etag: format!("{}-{}", hex(&etag.finalize()), chosen.len()),
            last_modified_millis: now_millis(),
            attrs: upload.attrs.clone(),
            checksums,
            checksum_type,
            segments,
        };
        let object = Arc::new(Object::new(&bucket_dir, manifest));
        self.index
            .commit(&input.bucket, &input.key, &condition, Some(object.clone()))?;
        self.state.uploads().finish(&input.upload_id);
        let _ = std::fs::remove_dir_all(dir);
        let (bucket, key, etag) = (input.bucket, input.key, object.manifest.etag.clone());
        let c = object.manifest.checksums.clone();
        Ok(S3Response::new(CompleteMultipartUploadOutput {
            bucket: Some(bucket),
            key: Some(key),
            e_tag: Some(ETag::Strong(etag)),
            checksum_crc32: c.crc32,
            checksum_crc32c: c.crc32c,
            checksum_sha1: c.sha1,
            checksum_sha256: c.sha256,
            checksum_crc64nvme: c.crc64nvme,
            checksum_type: object.manifest.checksum_type.map(Kind::dto),
            ..Default::default()
        }))
    }

    pub(super) fn abort(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let input = req.input;
        self.state
            .uploads()
            .get(&input.bucket, &input.key, &input.upload_id)?;
        self.state.uploads().finish(&input.upload_id);
        let _ = std::fs::remove_dir_all(upload_dir(
            &self.index.bucket_dir(&input.bucket),
            &input.upload_id,
        ));
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }
}
