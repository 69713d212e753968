//! S3's additional checksums (`x-amz-checksum-*`): which algorithm a request or an upload
//! names, verifying a body against the values given (headers or trailers), and an object's
//! checksum from its parts' checksums at CompleteMultipartUpload: a FULL_OBJECT CRC is the
//! parts' CRCs combined (as if computed over the whole object, without reading it again), a
//! COMPOSITE checksum is the checksum of the concatenated binary part checksums, `-N`.

use s3s::checksum::ChecksumHasher;
use s3s::dto::{ChecksumAlgorithm, ChecksumType};
use s3s::{s3_error, S3Result};
use serde::{Deserialize, Serialize};

use super::index::Checksums;

/// One of S3's additional checksum algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Algorithm {
    Crc32,
    Crc32c,
    Sha1,
    Sha256,
    Crc64Nvme,
}

/// How an object's checksum covers it: the whole object's bytes, or its parts' checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Kind {
    #[serde(rename = "FULL_OBJECT")]
    FullObject,
    #[serde(rename = "COMPOSITE")]
    Composite,
}

impl Kind {
    pub fn dto(self) -> ChecksumType {
        ChecksumType::from_static(match self {
            Kind::FullObject => ChecksumType::FULL_OBJECT,
            Kind::Composite => ChecksumType::COMPOSITE,
        })
    }

    fn parse(t: &ChecksumType) -> S3Result<Kind> {
        match t.as_str() {
            ChecksumType::FULL_OBJECT => Ok(Kind::FullObject),
            ChecksumType::COMPOSITE => Ok(Kind::Composite),
            other => Err(s3_error!(
                InvalidRequest,
                "Value for x-amz-checksum-type header is invalid: {other}"
            )),
        }
    }
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Crc32,
        Algorithm::Crc32c,
        Algorithm::Sha1,
        Algorithm::Sha256,
        Algorithm::Crc64Nvme,
    ];

    /// `InvalidRequest` for a name S3 does not know.
    pub fn parse(a: &ChecksumAlgorithm) -> S3Result<Algorithm> {
        Algorithm::ALL
            .into_iter()
            .find(|x| x.dto().as_str().eq_ignore_ascii_case(a.as_str()))
            .ok_or_else(|| {
                s3_error!(
                    InvalidRequest,
                    "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]"
                )
            })
    }

    pub fn dto(self) -> ChecksumAlgorithm {
        ChecksumAlgorithm::from_static(match self {
            Algorithm::Crc32 => ChecksumAlgorithm::CRC32,
            Algorithm::Crc32c => ChecksumAlgorithm::CRC32C,
            Algorithm::Sha1 => ChecksumAlgorithm::SHA1,
            Algorithm::Sha256 => ChecksumAlgorithm::SHA256,
            Algorithm::Crc64Nvme => ChecksumAlgorithm::CRC64NVME,
        })
    }

    /// Lower-case name, as in the header `x-amz-checksum-<name>`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Crc32 => "crc32",
            Algorithm::Crc32c => "crc32c",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Crc64Nvme => "crc64nvme",
        }
    }

    pub fn get(self, c: &Checksums) -> Option<&String> {
        match self {
            Algorithm::Crc32 => c.crc32.as_ref(),
            Algorithm::Crc32c => c.crc32c.as_ref(),
            Algorithm::Sha1 => c.sha1.as_ref(),
            Algorithm::Sha256 => c.sha256.as_ref(),
            Algorithm::Crc64Nvme => c.crc64nvme.as_ref(),
        }
    }

    fn slot(self, c: &mut Checksums) -> &mut Option<String> {
        match self {
            Algorithm::Crc32 => &mut c.crc32,
            Algorithm::Crc32c => &mut c.crc32c,
            Algorithm::Sha1 => &mut c.sha1,
            Algorithm::Sha256 => &mut c.sha256,
            Algorithm::Crc64Nvme => &mut c.crc64nvme,
        }
    }

    fn enable(self, h: &mut ChecksumHasher) {
        match self {
            Algorithm::Crc32 => h.crc32 = Some(Default::default()),
            Algorithm::Crc32c => h.crc32c = Some(Default::default()),
            Algorithm::Sha1 => h.sha1 = Some(Default::default()),
            Algorithm::Sha256 => h.sha256 = Some(Default::default()),
            Algorithm::Crc64Nvme => h.crc64nvme = Some(Default::default()),
        }
    }

    /// The CRC of a CRC algorithm, which FULL_OBJECT checksums combine.
    fn crc(self) -> Option<crc_fast::CrcAlgorithm> {
        match self {
            Algorithm::Crc32 => Some(crc_fast::CrcAlgorithm::Crc32IsoHdlc),
            Algorithm::Crc32c => Some(crc_fast::CrcAlgorithm::Crc32Iscsi),
            Algorithm::Crc64Nvme => Some(crc_fast::CrcAlgorithm::Crc64Nvme),
            Algorithm::Sha1 | Algorithm::Sha256 => None,
        }
    }
}

impl Checksums {
    /// Only the value of `algorithm` (none if absent).
    pub fn only(&self, algorithm: Algorithm) -> Checksums {
        let mut out = Checksums::default();
        *algorithm.slot(&mut out) = algorithm.get(self).cloned();
        out
    }

    pub fn set(&mut self, algorithm: Algorithm, value: String) {
        *algorithm.slot(self) = Some(value);
    }

    /// The algorithms that have a value.
    pub fn algorithms(&self) -> impl Iterator<Item = Algorithm> + '_ {
        Algorithm::ALL.into_iter().filter(|a| a.get(self).is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.algorithms().next().is_none()
    }
}

/// The checksum a multipart upload was created with (`x-amz-checksum-algorithm` and
/// `x-amz-checksum-type` of CreateMultipartUpload), as S3 allows them: the type defaults to
/// FULL_OBJECT for CRC64NVME (its only type) and COMPOSITE for the others; SHA-1 and SHA-256
/// are COMPOSITE only. `None` when no algorithm was named.
pub(crate) fn upload_checksum(
    algorithm: Option<&ChecksumAlgorithm>,
    kind: Option<&ChecksumType>,
) -> S3Result<Option<(Algorithm, Kind)>> {
    let Some(algorithm) = algorithm else {
        if kind.is_some() {
            return Err(s3_error!(
                InvalidRequest,
                "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header."
            ));
        }
        return Ok(None);
    };
    let algorithm = Algorithm::parse(algorithm)?;
    let kind = match kind {
        Some(k) => Kind::parse(k)?,
        None if algorithm == Algorithm::Crc64Nvme => Kind::FullObject,
        None => Kind::Composite,
    };
    let allowed = match kind {
        Kind::FullObject => algorithm.crc().is_some(),
        Kind::Composite => algorithm != Algorithm::Crc64Nvme,
    };
    if !allowed {
        return Err(s3_error!(
            InvalidRequest,
            "The {} checksum type cannot be used with the {} checksum algorithm.",
            kind.dto().as_str(),
            algorithm.name()
        ));
    }
    Ok(Some((algorithm, kind)))
}

/// A hasher for the checksums a PUT or part asks for: those whose value is given, the one
/// `algorithm` names (header, or the trailer a chunked body announces) and `declared` (an
/// upload's algorithm).
pub(crate) fn hasher(
    algorithm: Option<&ChecksumAlgorithm>,
    given: &Checksums,
    declared: Option<Algorithm>,
) -> S3Result<ChecksumHasher> {
    let mut h = ChecksumHasher::default();
    for a in given.algorithms().chain(declared) {
        a.enable(&mut h);
    }
    if let Some(a) = algorithm {
        Algorithm::parse(a)?.enable(&mut h);
    }
    Ok(h)
}

/// The algorithms a request offers a checksum of before its body is read: given headers and
/// the one `algorithm` names.
pub(crate) fn offered(
    algorithm: Option<&ChecksumAlgorithm>,
    given: &Checksums,
) -> S3Result<Vec<Algorithm>> {
    let mut out: Vec<Algorithm> = given.algorithms().collect();
    if let Some(a) = algorithm {
        let a = Algorithm::parse(a)?;
        if !out.contains(&a) {
            out.push(a);
        }
    }
    Ok(out)
}

/// Compares computed checksums with the given ones (headers, or trailers of a chunked body):
/// `BadDigest` on a mismatch. Returns the computed checksums and the given ones (headers and
/// trailers).
pub(crate) fn verify(
    computed: s3s::dto::Checksum,
    mut given: Checksums,
    trailers: Option<s3s::TrailingHeaders>,
    content_md5: Option<&str>,
    md5: &[u8; 16],
) -> S3Result<(Checksums, Checksums)> {
    if let Some(trailers) = trailers.and_then(|t| t.take()) {
        for a in Algorithm::ALL {
            let slot = a.slot(&mut given);
            if slot.is_none() {
                *slot = trailers
                    .get(format!("x-amz-checksum-{}", a.name()).as_str())
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
            }
        }
    }
    let computed = Checksums {
        crc32: computed.checksum_crc32,
        crc32c: computed.checksum_crc32c,
        sha1: computed.checksum_sha1,
        sha256: computed.checksum_sha256,
        crc64nvme: computed.checksum_crc64nvme,
    };
    for a in given.algorithms() {
        if a.get(&given) != a.get(&computed) {
            return Err(s3_error!(
                BadDigest,
                "The {} you specified did not match the calculated checksum.",
                a.name()
            ));
        }
    }
    if let Some(expected) = content_md5 {
        if expected.trim() != base64(md5) {
            return Err(s3_error!(
                BadDigest,
                "The Content-MD5 you specified did not match what we received."
            ));
        }
    }
    Ok((computed, given))
}

pub(crate) fn base64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

fn decode(value: &str) -> Option<Vec<u8>> {
    base64_simd::STANDARD.decode_to_vec(value).ok()
}

/// A stored CRC as a number (big-endian bytes, as S3 sends them).
fn crc_value(value: &str) -> Option<u64> {
    let bytes = decode(value)?;
    if bytes.len() > 8 {
        return None;
    }
    Some(bytes.iter().fold(0u64, |n, b| (n << 8) | u64::from(*b)))
}

/// The object checksum of a completed upload from its parts' checksums of `algorithm` (each
/// with its size in bytes): FULL_OBJECT (CRCs only) = the CRC of the whole object, COMPOSITE
/// = the checksum of the concatenated binary part checksums, base64, then `-N` (N parts).
/// `InternalError` when a stored part checksum is not valid base64.
pub(crate) fn object_checksum(
    algorithm: Algorithm,
    kind: Kind,
    parts: &[(&str, u64)],
) -> S3Result<String> {
    let broken = || s3_error!(InternalError, "local-s3: a stored part checksum is corrupt");
    match (kind, algorithm.crc()) {
        (Kind::FullObject, Some(crc)) => {
            let mut whole: Option<u64> = None;
            for (value, size) in parts {
                let part = crc_value(value).ok_or_else(broken)?;
                whole = Some(match whole {
                    None => part,
                    Some(w) => crc_fast::checksum_combine(crc, w, part, *size),
                });
            }
            let whole = whole.unwrap_or_else(|| crc_fast::checksum(crc, b""));
            let width = if algorithm == Algorithm::Crc64Nvme {
                8
            } else {
                4
            };
            Ok(base64(&whole.to_be_bytes()[8 - width..]))
        }
        (Kind::FullObject, None) => Err(s3_error!(
            InternalError,
            "local-s3: FULL_OBJECT {} is not a CRC",
            algorithm.name()
        )),
        (Kind::Composite, _) => {
            let mut h = ChecksumHasher::default();
            algorithm.enable(&mut h);
            for (value, _) in parts {
                h.update(&decode(value).ok_or_else(broken)?);
            }
            let sum = h.finalize();
            let checksums = Checksums {
                crc32: sum.checksum_crc32,
                crc32c: sum.checksum_crc32c,
                sha1: sum.checksum_sha1,
                sha256: sum.checksum_sha256,
                crc64nvme: sum.checksum_crc64nvme,
            };
            let value = algorithm.get(&checksums).cloned().unwrap_or_default();
            Ok(format!("{value}-{}", parts.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(algorithm: Algorithm, data: &[u8]) -> String {
        let mut h = ChecksumHasher::default();
        algorithm.enable(&mut h);
        h.update(data);
        let sum = h.finalize();
        let c = Checksums {
            crc32: sum.checksum_crc32,
            crc32c: sum.checksum_crc32c,
            sha1: sum.checksum_sha1,
            sha256: sum.checksum_sha256,
            crc64nvme: sum.checksum_crc64nvme,
        };
        algorithm.get(&c).cloned().unwrap()
    }

    #[test]
    fn full_object_crcs_combine_to_the_checksum_of_the_whole() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for algorithm in [Algorithm::Crc32, Algorithm::Crc32c, Algorithm::Crc64Nvme] {
            let cuts = [0, 1, 40_000, 40_000, 99_999, 100_000];
            let parts: Vec<(String, u64)> = cuts
                .windows(2)
                .map(|w| (one(algorithm, &data[w[0]..w[1]]), (w[1] - w[0]) as u64))
                .collect();
            let refs: Vec<(&str, u64)> = parts.iter().map(|(v, n)| (v.as_str(), *n)).collect();
            let combined = object_checksum(algorithm, Kind::FullObject, &refs).unwrap();
            assert_eq!(combined, one(algorithm, &data), "{algorithm:?}");
        }
    }

    #[test]
    fn composite_is_the_checksum_of_the_part_checksums() {
        let parts = [
            one(Algorithm::Crc32c, b"abc"),
            one(Algorithm::Crc32c, b"def"),
        ];
        let mut binary = decode(&parts[0]).unwrap();
        binary.extend(decode(&parts[1]).unwrap());
        let refs: Vec<(&str, u64)> = parts.iter().map(|v| (v.as_str(), 3)).collect();
        assert_eq!(
            object_checksum(Algorithm::Crc32c, Kind::Composite, &refs).unwrap(),
            format!("{}-2", one(Algorithm::Crc32c, &binary))
        );
    }

    #[test]
    fn upload_checksum_follows_s3_rules() {
        let a = |s: &'static str| Some(ChecksumAlgorithm::from_static(s));
        let t = |s: &'static str| Some(ChecksumType::from_static(s));
        let ok = |x: Option<ChecksumAlgorithm>, y: Option<ChecksumType>| {
            upload_checksum(x.as_ref(), y.as_ref())
        };
        assert_eq!(
            ok(a("CRC64NVME"), None).unwrap(),
            Some((Algorithm::Crc64Nvme, Kind::FullObject))
        );
        assert_eq!(
            ok(a("CRC32C"), None).unwrap(),
            Some((Algorithm::Crc32c, Kind::Composite))
        );
        assert_eq!(
            ok(a("CRC32"), t("FULL_OBJECT")).unwrap(),
            Some((Algorithm::Crc32, Kind::FullObject))
        );
        assert!(ok(a("CRC64NVME"), t("COMPOSITE")).is_err());
        assert!(ok(a("SHA256"), t("FULL_OBJECT")).is_err());
        assert!(ok(None, t("COMPOSITE")).is_err());
        assert!(ok(a("MD5"), None).is_err());
        assert_eq!(ok(None, None).unwrap(), None);
    }
}
