//! The checksum rules of multipart uploads, as on S3. An upload created with an algorithm
//! (`x-amz-checksum-algorithm`, see [`upload_checksum`](super::checksum::upload_checksum)):
//!
//! - UploadPart: a checksum of another algorithm is refused (400 `InvalidRequest`, "Checksum
//!   Type mismatch occurred, expected checksum Type: crc32c, actual checksum Type: crc32"); so
//!   is a part without one when the type is COMPOSITE ("actual checksum Type: null"); for a
//!   FULL_OBJECT upload the endpoint computes the part's checksum itself. Given values are
//!   verified against the bytes (`BadDigest`) and kept with the part.
//! - CompleteMultipartUpload: each listed part's checksum must equal the kept one (400
//!   `InvalidPart`); COMPOSITE needs one for every part (400 `InvalidRequest`, "The upload was
//!   created using a crc32c checksum. The complete request must include the checksum for each
//!   part. It was missing for part 1 in the request."). The object's checksum is computed from
//!   the parts' (FULL_OBJECT: the CRC of the whole object; COMPOSITE: `…-N`); one given in the
//!   request's `x-amz-checksum-*` header must equal it (400 `BadDigest`), and a given
//!   `x-amz-checksum-type` must be the upload's (400 `InvalidRequest`).
//!
//! An upload created without an algorithm accepts parts with or without checksums (given
//! values are verified and kept, and a listed part checksum must equal the kept one) and its
//! object has no checksum.

use s3s::dto::{ChecksumType, CompletedPart};
use s3s::{s3_error, S3Result};

use super::checksum::{object_checksum, Algorithm, Kind};
use super::index::Checksums;
use super::uploads::Part;

fn mismatch(expected: Option<Algorithm>, actual: Option<Algorithm>) -> s3s::S3Error {
    let name = |a: Option<Algorithm>| a.map_or("null", Algorithm::name);
    s3_error!(
        InvalidRequest,
        "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
        name(expected),
        name(actual)
    )
}

/// Whether a part offering checksums of `offered` (headers, or the trailer it announces) may
/// be stored in an upload created with `upload`; checked before the body is read.
pub(crate) fn check_part_offer(
    upload: Option<(Algorithm, Kind)>,
    offered: &[Algorithm],
) -> S3Result<()> {
    let Some((algorithm, kind)) = upload else {
        return Ok(());
    };
    match offered.first() {
        None if kind == Kind::Composite => Err(mismatch(Some(algorithm), None)),
        Some(other) if !offered.contains(&algorithm) => {
            Err(mismatch(Some(algorithm), Some(*other)))
        }
        _ => Ok(()),
    }
}

/// The checksums a CompleteMultipartUpload lists for one part.
fn listed_checksums(p: &CompletedPart) -> Checksums {
    Checksums {
        crc32: p.checksum_crc32.clone(),
        crc32c: p.checksum_crc32c.clone(),
        sha1: p.checksum_sha1.clone(),
        sha256: p.checksum_sha256.clone(),
        crc64nvme: p.checksum_crc64nvme.clone(),
    }
}

/// Checks the checksums listed for part `n` against those kept with it.
pub(crate) fn check_listed_part(
    upload: Option<(Algorithm, Kind)>,
    n: i32,
    listed: &CompletedPart,
    kept: &Checksums,
) -> S3Result<()> {
    let listed = listed_checksums(listed);
    if let Some((algorithm, Kind::Composite)) = upload {
        if algorithm.get(&listed).is_none() {
            return Err(s3_error!(
                InvalidRequest,
                "The upload was created using a {} checksum. The complete request must include the checksum for each part. It was missing for part {n} in the request.",
                algorithm.name()
            ));
        }
    }
    for a in listed.algorithms() {
        if a.get(&listed) != a.get(kept) {
            return Err(s3_error!(
                InvalidPart,
                "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified {} checksum may not match the part's: part {n}",
                a.name()
            ));
        }
    }
    Ok(())
}

/// The object checksum of a completed upload and its type, checked against the values the
/// Complete request gives (`given`: its `x-amz-checksum-*` headers, `given_type`:
/// `x-amz-checksum-type`).
pub(crate) fn complete_checksum(
    upload: Option<(Algorithm, Kind)>,
    parts: &[&Part],
    given: &Checksums,
    given_type: Option<&ChecksumType>,
) -> S3Result<(Checksums, Option<Kind>)> {
    let Some((algorithm, kind)) = upload else {
        if given_type.is_some() {
            return Err(s3_error!(
                InvalidRequest,
                "The x-amz-checksum-type header can only be used with an upload created with a checksum algorithm."
            ));
        }
        if let Some(other) = given.algorithms().next() {
            return Err(mismatch(None, Some(other)));
        }
        return Ok((Checksums::default(), None));
    };
    if let Some(t) = given_type {
        if t.as_str() != kind.dto().as_str() {
            return Err(s3_error!(
                InvalidRequest,
                "The upload was created using the {} checksum mode. The complete request must use the same checksum mode.",
                kind.dto().as_str()
            ));
        }
    }
    if let Some(other) = given.algorithms().find(|a| *a != algorithm) {
        return Err(mismatch(Some(algorithm), Some(other)));
    }
    let mut values = Vec::with_capacity(parts.len());
    for p in parts {
        let value = algorithm.get(&p.checksums).ok_or_else(|| {
            s3_error!(
                InternalError,
                "local-s3: a part of this upload has no {} checksum",
                algorithm.name()
            )
        })?;
        values.push((value.as_str(), p.size));
    }
    let value = object_checksum(algorithm, kind, &values)?;
    if let Some(expected) = algorithm.get(given) {
        // A COMPOSITE value may be given with or without its `-N`.
        let bare = value.rsplit_once('-').map_or(value.as_str(), |(v, _)| v);
        if *expected != value && (kind == Kind::FullObject || expected != bare) {
            return Err(s3_error!(
                BadDigest,
                "The {} you specified did not match the calculated checksum.",
                algorithm.name()
            ));
        }
    }
    let mut out = Checksums::default();
    out.set(algorithm, value);
    Ok((out, Some(kind)))
}
